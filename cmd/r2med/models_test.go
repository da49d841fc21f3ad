package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIModels(t *testing.T) {
	stdout := mustRun(t, "models")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 16 || !strings.HasPrefix(lines[0], "model ") {
		t.Fatalf("models table has %d lines:\n%s", len(lines), stdout)
	}
	for _, want := range []string{
		"nv            nvidia/NV-Embed-v2",
		"medcpt        ncbi/MedCPT-Query-Encoder + ncbi/MedCPT-Article-Encoder  cls",
		"31.43", "onnx,tei,openai", "512/2048",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("models table lacks %q:\n%s", want, stdout)
		}
	}

	var got []struct {
		Name          string `json:"name"`
		QueryModel    string `json:"query_model"`
		DocModel      string `json:"doc_model"`
		InstructHyDoc bool   `json:"instruct_hy_doc"`
		Instructions  map[string]struct {
			Query, Doc string
		} `json:"instructions"`
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
