package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type instructionOut struct {
	Query, Doc string
	MaxLength  int `json:"max_length"`
	Source     struct {
		Repo, Path, Commit, Entry, Derived string
	}
}

func TestCLIModels(t *testing.T) {
	stdout := mustRun(t, "models")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 29 || !strings.HasPrefix(lines[0], "model ") || !strings.HasSuffix(lines[0], "instructions from") {
		t.Fatalf("models table has %d lines:\n%s", len(lines), stdout)
	}
	row := func(name string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); f[0] == name {
				return f
			}
		}
		t.Fatalf("no row for %s:\n%s", name, stdout)
		return nil
	}
	for name, want := range map[string]string{
		"nv":                   "nvidia/NV-Embed-v2 model 4096 yes openai,tei 31.43 - R2MED/R2MED",
		"medcpt":               "ncbi/MedCPT-Query-Encoder + ncbi/MedCPT-Article-Encoder cls 512 no onnx - - R2MED/R2MED",
		"grit":                 "GritLM/GritLM-7B model 512/2048 yes openai,tei 31.12 - R2MED/R2MED",
		"reasonembed-qwen3-8b": "hanhainebula/reason-embed-qwen3-8b-0928 last 512 yes openai,tei - 43.18 VectorSpaceLab/agentic-search (+BRIGHT)",
		"reasonir-8b":          "reasonir/ReasonIR-8B model 512 yes openai - 27.94 VectorSpaceLab/agentic-search; BRIGHT: facebookresearch/ReasonIR",
		"diver-retriever-4b":   "AQ-MedAI/Diver-Retriever-4B last 512 yes openai,tei - 32.23 VectorSpaceLab/agentic-search; BRIGHT: AQ-MedAI/Diver",
		"qwen3-embedding-0.6b": "Qwen/Qwen3-Embedding-0.6B last 512 yes openai,tei - - VectorSpaceLab/agentic-search (+BRIGHT)",
	} {
		if got := strings.Join(row(name)[1:], " "); got != want {
			t.Errorf("row %s: %q, want %q", name, got, want)
		}
	}

	var got []struct {
		Name          string                    `json:"name"`
		QueryModel    string                    `json:"query_model"`
		DocModel      string                    `json:"doc_model"`
		InstructHyDoc bool                      `json:"instruct_hy_doc"`
		Instructions  map[string]instructionOut `json:"instructions"`
		Generic       *instructionOut           `json:"generic_instruction"`
		Reported      float64                   `json:"reported_ndcg_at_10"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "models", "--format", "json")), &got); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, m := range got {
		byName[m.Name] = i
	}
	nv := got[byName["nv"]]
	if !nv.InstructHyDoc || nv.Instructions["PMC-Treatment"].Query != "Instruct: Given a Clinical Case, retrieve relevant passages that help answer the case\nQuery: " {
		t.Errorf("nv in JSON: %+v", nv)
	}
	re := got[byName["reasonembed-qwen3-8b"]]
	if in := re.Instructions["BRIGHT-theoremqa_theorems"]; in.Query != "Instruct: Given a Math problem, retrieve relevant theorems that help answer the problem.\nQuery: " ||
		in.Source.Path != "ReasonEmbed/evaluation_bright/scripts/ours/eval_reason_embed_qwen3_8b.sh" || in.Source.Commit != "d9438d60edd36f1a7a603666380e45db0efe4938" || in.MaxLength != 8192 {
		t.Errorf("reasonembed-qwen3-8b BRIGHT in JSON: %+v", in)
	}
	if re.Generic == nil || re.Generic.Source.Repo != "QwenLM/Qwen3-Embedding" || re.Generic.Source.Derived == "" || re.Reported != 43.18 {
		t.Errorf("reasonembed-qwen3-8b in JSON: %+v", re)
	}
	if nvSrc := nv.Instructions["Biology"].Source; nvSrc.Repo != "R2MED/R2MED" || nvSrc.Path != "src/instrcution.py" || nvSrc.Commit == "" {
		t.Errorf("nv's instruction source in JSON: %+v", nvSrc)
	}
	r := got[byName["medcpt-r2med"]]
	if r.QueryModel != "ncbi/MedCPT-Article-Encoder" || r.DocModel != "ncbi/MedCPT-Article-Encoder" {
		t.Errorf("medcpt-r2med in JSON: %+v", r)
	}

	if _, stderr, code := r2med(t, "", "models", "--format", "xml"); code == 0 || !strings.Contains(stderr, "table or json") {
		t.Errorf("bad --format: exit %d %s", code, stderr)
	}
}

func TestCLIModelShow(t *testing.T) {
	stdout := mustRun(t, "model", "show", "instructor-xl", "--task", "PMCPatients")
	for _, want := range []string{"model       inst-xl", "with the query instruction",
		`PMC-Clinical     query "Represent the Clinical Case for retrieving similar cases that help diagnose the case: "  doc "Represent the Clinical Case for retrieval: "`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("model show lacks %q:\n%s", want, stdout)
		}
	}
	// Where each instruction comes from, BRIGHT's by their prefix, and the
	// generic instruction for any other task.
	stdout = mustRun(t, "model", "show", "RaDeR-gte-Qwen2-7B", "--task", "PMC-Treat,BRIGHT-earth-science,nfcorpus")
	for _, want := range []string{
		"instructions from VectorSpaceLab/agentic-search ReasonEmbed/evaluation_r2med/scripts/baselines/eval_rader_gte_qwen2_7b.sh@344179f95392",
		`PMC-Treatment    query "Instruct: Given a Clinical Case, retrieve relevant passages that help answer the case.\nQuery: "  doc ""`,
		"instructions from Debrup-61/RaDeR BRIGHT_configs/configs/trained_model/<task>.json@3a127e47a419",
		`BRIGHT-earth-science query "query: Instruct: Given a earth_science post, retrieve relevant passages that help answer the post\nQuery: "  doc "document: "`,
		"instructions generic, for tasks without a published instruction; from QwenLM/Qwen3-Embedding README.md@f4ad0c434c0e",
		`nfcorpus         query "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "  doc ""`,
		"reported    8-task mean nDCG@10 35.19, ReasonEmbed Table 3",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("model show lacks %q:\n%s", want, stdout)
		}
	}
	if _, stderr, code := r2med(t, "", "model", "show", "bm25"); code == 0 || !strings.Contains(stderr, `unknown model "bm25"`) {
		t.Errorf("unknown model: exit %d %s", code, stderr)
	}
}

func TestCLIModelPull(t *testing.T) {
	srv, _, home := fakeHubEnv(t)
	files := map[string][]byte{
		"onnx/model.onnx": {0, 1, 2, 3},
		"tokenizer.json":  []byte(`{"model":{"type":"WordPiece"}}`),
		"config.json":     []byte(`{"model_type":"bert"}`),
	}
	qc := srv.AddRepo("models/ncbi/MedCPT-Query-Encoder", files)
	srv.AddRepo("models/ncbi/MedCPT-Article-Encoder", files)
	delete(files, "onnx/model.onnx")
	srv.AddRepo("models/org/torch-only", files)

	stdout := mustRun(t, "model", "pull", "medcpt", "--quiet")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ncbi/MedCPT-Query-Encoder\t"+qc[:12]+"\t") {
		t.Fatalf("pull output:\n%s", stdout)
	}
	dir := strings.Split(lines[0], "\t")[2]
	if !strings.HasPrefix(dir, filepath.Join(home, "hub", "models--ncbi--MedCPT-Query-Encoder")) {
		t.Errorf("snapshot %s is not in HF_HOME's hub cache", dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "onnx", "model.onnx")); err != nil || string(b) != "\x00\x01\x02\x03" {
		t.Errorf("graph: %q %v", b, err)
	}

	// Offline, the pulled model is found in the cache.
	t.Setenv("HF_HUB_OFFLINE", "1")
	srv.Reset()
	if again := mustRun(t, "model", "pull", "ncbi/MedCPT-Query-Encoder", "--quiet"); again != lines[0]+"\n" {
		t.Errorf("offline pull: %q, want %q", again, lines[0])
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("offline pull made %d requests", n)
	}
	t.Setenv("HF_HUB_OFFLINE", "")

	_, stderr, code := r2med(t, "", "model", "pull", "org/torch-only", "--quiet")
	if code == 0 || !strings.Contains(stderr, "optimum-cli export onnx --model org/torch-only") {
		t.Errorf("no ONNX export: exit %d %s", code, stderr)
	}
	_, stderr, code = r2med(t, "", "model", "pull", "nv", "--quiet")
	if code == 0 || !strings.Contains(stderr, "nothing to pull") {
		t.Errorf("HTTP-only model: exit %d %s", code, stderr)
	}
}

// TestCLIModelsNamesWhole: at 120 columns `r2med models` keeps every
// model's name whole on one line (a name is what --model takes; split,
// "reasonembed-llama-3.1-" read as a name of its own), and keeps to the
// width.
func TestCLIModelsNamesWhole(t *testing.T) {
	t.Setenv("COLUMNS", "120")
	stdout := mustRun(t, "models")
	js := mustRun(t, "models", "--format", "json")
	var ms []struct{ Name string }
	if err := json.Unmarshal([]byte(js), &ms); err != nil || len(ms) == 0 {
		t.Fatalf("models --format json: %v", err)
	}
	lines := strings.Split(stdout, "\n")
	for _, m := range ms {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, m.Name+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("no line starts with the whole name %q:\n%s", m.Name, stdout)
		}
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}
