package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/results"
)

// TestRunGarReasoningLocal runs BM25 over a local query-reasoning set
// (reasoning/<llm>/query_with_hydoc.jsonl beside the task, as a BRIGHT-
// style published set would lie) in both modes: the reasoning replaces
// the query, or is appended to it. Each mode retrieves with its own text,
// and a reasoning that names the diagnosis beats the bare query.
func TestRunGarReasoningLocal(t *testing.T) {
	data := demoDir(t)
	f, err := os.Open(filepath.Join(data, "query.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct{ ID, Text, Answer string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		// The "reasoning" names the answer the query only implies.
		b, _ := json.Marshal(map[string]string{"id": q.ID, "text": q.Text, "hy_doc": "The essential problem is a diagnosis: " + q.Answer + "."})
		lines = append(lines, string(b))
	}
	f.Close()
	set := filepath.Join(data, expand.Reasoning, "gpt4", expand.FileName)
	os.MkdirAll(filepath.Dir(set), 0o755)
	if err := os.WriteFile(set, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ndcg := map[string]float64{}
	for _, method := range []string{"", expand.Reasoning, expand.ReasoningAppend} {
		out := t.TempDir()
		args := []string{"run", "--data", data, "--out", out, "--quiet"}
		if method != "" {
			args = append(args, "--gar", method, "--gar-llm", "gpt4")
		}
		mustRun(t, args...)
		res, err := results.ReadR2MED(filepath.Join(out, results.ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		ndcg[method] = res.Test["ndcg_at_10"]
		if ndcg[method] == 0 {
			ndcg[method] = res.Test["NDCG@10"]
		}
		if method != "" && res.Extra["gar_method"] != method {
			t.Errorf("%s: results say gar_method %v", method, res.Extra["gar_method"])
		}
	}
	if !(ndcg[expand.Reasoning] > ndcg[""]) || !(ndcg[expand.ReasoningAppend] > ndcg[""]) || ndcg[expand.Reasoning] == ndcg[expand.ReasoningAppend] {
		t.Errorf("nDCG@10: query %v, reasoning %v, query+reasoning %v", ndcg[""], ndcg[expand.Reasoning], ndcg[expand.ReasoningAppend])
	}
}
