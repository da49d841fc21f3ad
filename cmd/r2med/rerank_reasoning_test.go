package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/trec"
)

// rerankFlags spells rerank's kind, model and server flags as this build
// names them: --reranker, --model and --base-url, or run's --rerank,
// --rerank-model and --rerank-url once they share those names.
func rerankFlags(kind, model, url string) []string {
	f := newRerankCmd().Flags()
	pick := func(name, old string) string {
		if f.Lookup(name) != nil {
			return "--" + name
		}
		return "--" + old
	}
	return []string{pick("rerank", "reranker"), kind, pick("rerank-model", "model"), model, pick("rerank-url", "base-url"), url}
}

var shownPassage = regexp.MustCompile(`(?m)^\[(\d+)\] \(retriever score: ([^)]*)\) (.*)$`)

// TestRerankCLIInsertRank reranks R2MED's BM25 run of the demo task with
// insertrank through the command: every prompt shows each passage with
// its score in run.trec to two decimals, the answers go to the cache (a
// second rerank asks nothing and writes the same run), and the reasoning
// to OUT.trace.jsonl.
func TestRerankCLIInsertRank(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	run, err := trec.ReadRunFile(input)
	if err != nil {
		t.Fatal(err)
	}
	task := demoTask(t)
	byText := map[string]string{}
	for _, d := range task.Corpus {
		byText[strings.Join(strings.Fields(d.Text), " ")] = d.ID
	}
	var (
		calls atomic.Int32
		mu    sync.Mutex
		shown = map[[2]string][]string{} // query and doc id → scores shown
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		u := req.Messages[len(req.Messages)-1].Content
		ps := shownPassage.FindAllStringSubmatch(u, -1)
		qid := ""
		for _, q := range task.Queries {
			if strings.Contains(u, "\nQuery: "+q.Text+"\n") {
				qid = q.ID
			}
		}
		mu.Lock()
		for _, m := range ps {
			k := [2]string{qid, byText[m[3]]}
			shown[k] = append(shown[k], m[2])
		}
		mu.Unlock()
		parts := make([]string, len(ps))
		for i := range ps {
			parts[i] = fmt.Sprintf("[%d]", len(ps)-i)
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message":       map[string]any{"role": "assistant", "content": strings.Join(parts, " > "), "reasoning_content": "Reversing."},
			"finish_reason": "stop",
		}}, "usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 10}})
	}))
	defer srv.Close()
	cacheDir := filepath.Join(dir, "cache")
	out := filepath.Join(dir, "insertrank.trec")
	args := func(out string, extra ...string) []string {
		a := append([]string{"rerank", "--task", "demo", "--run", input, "--rerank-depth", "10", "--cache", cacheDir, "--out", out, "--quiet"}, extra...)
		return append(a, rerankFlags("insertrank", "r1", srv.URL+"/v1")...)
	}
	stdout := mustRun(t, args(out)...)
	if !strings.Contains(stdout, out+".trace.jsonl") || !strings.Contains(stdout, "LLM: 15 answers (0 from the cache), 1500 prompt + 150 completion tokens") {
		t.Errorf("stdout does not name the traces or the usage:\n%s", stdout)
	}
	if calls.Load() != int32(len(task.Queries)) {
		t.Errorf("%d requests for %d queries of 10 passages", calls.Load(), len(task.Queries))
	}
	n := 0
	for qid, hits := range run {
		for _, h := range hits[:10] {
			got := shown[[2]string{qid, h.DocID}]
			if len(got) == 0 {
				t.Errorf("%s: %s was not shown", qid, h.DocID)
			}
			for _, s := range got {
				if s != fmt.Sprintf("%.2f", h.Score) {
					t.Errorf("%s: %s shown with %s, its BM25 score is %v", qid, h.DocID, s, h.Score)
				}
			}
			n++
		}
	}
	if n != 10*len(task.Queries) {
		t.Errorf("checked %d passages", n)
	}
	// The window was reversed, so the reranked run is the input's top 10
	// upside down.
	got := runIDs(t, out)
	for qid, hits := range run {
		for i, h := range hits[:10] {
			if got[qid][9-i] != h.DocID {
				t.Fatalf("%s: reranked %v", qid, got[qid])
			}
		}
	}
	traces, err := os.ReadFile(out + ".trace.jsonl")
	if err != nil || strings.Count(string(traces), "\n") != len(task.Queries) || !strings.Contains(string(traces), `"reasoning":"Reversing."`) {
		t.Errorf("traces: %v\n%s", err, traces)
	}

	// Again, into another file: everything from the cache.
	before := calls.Load()
	again := filepath.Join(dir, "again.trec")
	if stdout := mustRun(t, args(again)...); !strings.Contains(stdout, "LLM: 15 answers (15 from the cache)") {
		t.Errorf("second rerank:\n%s", stdout)
	}
	if calls.Load() != before {
		t.Errorf("the second rerank made %d requests", calls.Load()-before)
	}
	if readFileString(t, again) != readFileString(t, out) {
		t.Error("the second rerank wrote another run")
	}

	// A changed prompt is another rerank: the checkpoint key and the
	// cache keys change with the templates.
	tmpl := filepath.Join(dir, "tmpl")
	mustRun(t, "rerank", "templates", "--out", tmpl)
	if _, err := os.Stat(filepath.Join(tmpl, "insertrank.user.tmpl")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmpl, "insertrank.system.tmpl"), []byte("Rank carefully.\n"), 0o644)
	edited := filepath.Join(dir, "edited.trec")
	mustRun(t, args(edited, "--rerank-templates", tmpl)...)
	if calls.Load() != before+int32(len(task.Queries)) {
		t.Errorf("the edited prompt made %d requests, want %d", calls.Load()-before, len(task.Queries))
	}
}

func TestRerankTemplatesCLI(t *testing.T) {
	dir := t.TempDir()
	stdout := mustRun(t, "rerank", "templates", "--out", dir)
	for _, f := range rerank.TemplateFiles() {
		if !strings.Contains(stdout, filepath.Join(dir, f)) {
			t.Errorf("%s not listed:\n%s", f, stdout)
		}
	}
	if _, stderr, code := r2med(t, "", "rerank", "templates", "--out", dir); code == 0 || !strings.Contains(stderr, "exists") {
		t.Errorf("overwrote templates: exit %d, %s", code, stderr)
	}
}

// TestRerankCLIFleetReplayPrices: r2med rerank takes run's settings of
// calls to model servers: a repeated --rerank-url spreads the requests
// over both servers, --prices prints the cost, a failing server's retries
// are reported on stderr (--retries), and --replay reranks from the cache
// alone, refusing what it lacks.
func TestRerankCLIFleetReplayPrices(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	a, b := newChatLoopback(t), newChatLoopback(t)
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(prices, []byte("r1: {input: 1, output: 5}\n"), 0o644)
	cacheDir := filepath.Join(dir, "cache")
	args := func(out string, extra ...string) []string {
		return append([]string{"rerank", "--task", "demo", "--run", input, "--rerank", "rank1", "--rerank-model", "r1", "--rerank-depth", "5",
			"--cache", cacheDir, "--out", filepath.Join(dir, out), "--quiet"}, extra...)
	}
	stdout := mustRun(t, args("fleet.trec", "--rerank-url", a.URL+"/v1", "--rerank-url", b.URL+"/v1", "--endpoint-concurrency", "1", "--prices", prices)...)
	if a.total.Load() == 0 || b.total.Load() == 0 || a.total.Load()+b.total.Load() != 75 {
		t.Errorf("requests %d and %d, want 75 over both", a.total.Load(), b.total.Load())
	}
	// 75 answers of 100 prompt and 20 completion tokens at $1 and $5 per
	// million: $0.015, $0.001 per query.
	if !strings.Contains(stdout, "cost: $0.015 new, $0 of answers from the cache at their cost when made; $0.001 per query") {
		t.Errorf("stdout:\n%s", stdout)
	}

	refuse := refusingServer(t)
	mustRun(t, args("replayed.trec", "--rerank-url", refuse+"/v1", "--replay")...)
	if readFileString(t, filepath.Join(dir, "replayed.trec")) != readFileString(t, filepath.Join(dir, "fleet.trec")) {
		t.Error("the replay reranked otherwise")
	}
	_, stderr, code := r2med(t, "", append(args("none.trec", "--rerank-url", refuse+"/v1", "--replay"), "--cache", filepath.Join(dir, "empty"))...)
	if code == 0 || !strings.Contains(stderr, "replay") {
		t.Errorf("replay from an empty cache: exit %d, %s", code, stderr)
	}

	var calls atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "loading", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	_, stderr, code = r2med(t, "", args("down.trec", "--rerank-url", down.URL+"/v1", "--retries", "1", "--no-cache")...)
	if code == 0 || !strings.Contains(stderr, "r2med: rerank request failed (attempt 1), retrying") || !strings.Contains(stderr, "after 2 attempts") {
		t.Errorf("a server that is down, --retries 1: exit %d\n%s", code, stderr)
	}
}

// TestRerankCLIChecksRun: the run to rerank is checked against the task
// as run:PATH is: a query or document the task lacks is an error naming
// it; --allow-missing-docs drops them, says how many, and reranks the
// rest.
func TestRerankCLIChecksRun(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	data := readFileString(t, input) + "q-stray Q0 x 1 1 bm25\n"
	task := demoTask(t)
	data += task.Queries[0].ID + " Q0 doc-not-in-corpus 0 99999 bm25\n"
	stray := filepath.Join(dir, "stray.trec")
	os.WriteFile(stray, []byte(data), 0o644)
	srv, _ := teiLoopback(t, nil)
	args := []string{"rerank", "--task", "demo", "--run", stray, "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "10", "--out", filepath.Join(dir, "out.trec"), "--quiet"}
	_, stderr, code := r2med(t, "", args...)
	if code == 0 || !strings.Contains(stderr, `"q-stray"`) || !strings.Contains(stderr, "--allow-missing-docs") {
		t.Errorf("stray ids: exit %d, %s", code, stderr)
	}
	stdout, stderr, code := r2med(t, "", append(args, "--allow-missing-docs")...)
	if code != 0 || !strings.Contains(stderr, "q-stray") || !strings.Contains(stderr, "doc-not-in-corpus") {
		t.Fatalf("--allow-missing-docs: exit %d\n%s%s", code, stdout, stderr)
	}
	got := runIDs(t, filepath.Join(dir, "out.trec"))
	if _, ok := got["q-stray"]; ok || len(got) != len(task.Queries) {
		t.Errorf("reranked %d queries, the stray one among them: %v", len(got), ok)
	}
	for _, d := range got[task.Queries[0].ID] {
		if d == "doc-not-in-corpus" {
			t.Error("the stray document was reranked")
		}
	}
}

// TestRerankCLIGroupRankDiver reranks R2MED's BM25 run of the demo task
// with grouprank and with diver through r2med rerank against the scripted
// chat server: the reranked top 10 beats the input's, stdout counts the
// answers and prices them, the traces hold every group (grouprank) or
// both rerankers' exchanges and the merge's account (diver), and a
// --replay against a server that must not be called writes the same run.
func TestRerankCLIGroupRankDiver(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	srv := newChatLoopback(t)
	task := demoTask(t)
	queries := len(task.Queries)
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(prices, []byte("r1: {input: 1, output: 5}\n"), 0o644)
	for _, c := range []struct {
		kind   string
		calls  int // per query at depth 10
		traces int // per query
	}{
		{"grouprank", 2, 2}, // one group of 10, two passes
		{"diver", 11, 12},   // rank1's 10, reasonrank's window; and the merge's account
	} {
		t.Run(c.kind, func(t *testing.T) {
			cacheDir := filepath.Join(dir, "cache-"+c.kind)
			args := func(out, url string, extra ...string) []string {
				return append([]string{"rerank", "--task", "demo", "--run", input, "--rerank", c.kind, "--rerank-model", "r1", "--rerank-url", url,
					"--rerank-depth", "10", "--cache", cacheDir, "--out", filepath.Join(dir, out), "--quiet"}, extra...)
			}
			before := srv.total.Load()
			stdout := mustRun(t, args(c.kind+".trec", srv.URL+"/v1", "--prices", prices)...)
			n := c.calls * queries
			if got := srv.total.Load() - before; got != int64(n) {
				t.Errorf("%d requests, want %d", got, n)
			}
			// n answers of 100 prompt and 20 completion tokens at $1 and
			// $5 per million: $0.0002 each.
			if want := fmt.Sprintf("LLM: %d answers (0 from the cache), %d prompt + %d completion tokens", n, 100*n, 20*n); !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
			if want := fmt.Sprintf("cost: $%.6g new, $0 of answers from the cache at their cost when made; $%.6g per query", 0.0002*float64(n), 0.0002*float64(c.calls)); !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
			// The evaluation printed: nDCG@10 of the input, then of the
			// reranked run, higher.
			var in, re float64
			for _, line := range strings.Split(stdout, "\n") {
				f := strings.Fields(line)
				if len(f) == 5 && f[0] == "input" {
					fmt.Sscan(f[1], &in)
				}
				if len(f) == 5 && f[0] == "reranked" {
					fmt.Sscan(f[1], &re)
				}
			}
			if !(re > in) {
				t.Errorf("nDCG@10 %v reranked, %v before:\n%s", re, in, stdout)
			}
			lines := strings.Split(strings.TrimSpace(readFileString(t, filepath.Join(dir, c.kind+".trec.trace.jsonl"))), "\n")
			if len(lines) != c.traces*queries {
				t.Errorf("%d traces, want %d", len(lines), c.traces*queries)
			}
			parts := map[string]int{}
			for _, l := range lines {
				var tr rerank.Trace
				if err := json.Unmarshal([]byte(l), &tr); err != nil {
					t.Fatal(err)
				}
				parts[tr.Part]++
				if c.kind == "grouprank" && (len(tr.Scores) != 10 || tr.Scores[0] == nil || !strings.Contains(tr.Reasoning, "one scale")) {
					t.Errorf("grouprank trace %s", l)
				}
			}
			if c.kind == "diver" && (parts["pointwise"] != 10*queries || parts["listwise"] != queries || parts["merge"] != queries) {
				t.Errorf("diver traces by part: %v", parts)
			}

			stdout = mustRun(t, args(c.kind+".replay.trec", refusingServer(t)+"/v1", "--replay")...)
			if !strings.Contains(stdout, fmt.Sprintf("LLM: %d answers (%d from the cache)", n, n)) {
				t.Errorf("replay stdout:\n%s", stdout)
			}
			if readFileString(t, filepath.Join(dir, c.kind+".replay.trec")) != readFileString(t, filepath.Join(dir, c.kind+".trec")) {
				t.Error("the replay wrote another run")
			}
		})
	}
}
