package leaderboard

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/results"
)

// TestSettingsText: our systems' full settings as key=value text in the
// manifest's words — what hovers and exports show beside the short name
// — never a dump of Go values.
func TestSettingsText(t *testing.T) {
	var cfg map[string]any // as a manifest reads back
	json.Unmarshal([]byte(`{"retrievers":[{"retriever":"bm25","k1":0.9,"b":0.4,"analyzer":"lucene-english"},{"retriever":"run:out/my runs/x.trec"}],
		"fusion":{"method":"rrf","k":60,"retrievers":["bm25","run:bm25"]},"rerank":{"kind":"insertrank","model":"r1","depth":20,"settings":{"scores":"raw"}},
		"top_k":100,"allow_missing_docs":true}`), &cfg)
	s := System{Name: "rrf(bm25,run:bm25) → insertrank:r1@20", Config: cfg}
	want := `retrievers.1.retriever=bm25 retrievers.1.analyzer=lucene-english retrievers.1.b=0.4 retrievers.1.k1=0.9 ` +
		`retrievers.2.retriever="run:out/my runs/x.trec" allow_missing_docs=true fusion.method=rrf fusion.retrievers=bm25,run:bm25 fusion.k=60 ` +
		`rerank.kind=insertrank rerank.model=r1 rerank.depth=20 rerank.settings.scores=raw top_k=100`
	if got := s.SettingsText(); got != want {
		t.Errorf("settings\n got %s\nwant %s", got, want)
	}
	if got := s.About(); got != s.Name+" — ours: "+want {
		t.Errorf("about %q", got)
	}
	if (&System{Name: "nv", Published: true}).SettingsText() != "" {
		t.Error("a published system has settings text")
	}
}

// TestOursNamesOlderFiles: result files written before the naming rule
// named a reranker by its model only; the manifest's kind completes the
// name, on the board and in the runs listing, so InsertRank and
// ReasonRank runs of one model stay two names.
func TestOursNamesOlderFiles(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, kind := range []string{"insertrank", "reasonrank"} {
		cfg := map[string]any{"retriever": "bm25", "rerank": map[string]any{"kind": kind, "model": "r1", "depth": 20}}
		writeRun(t, filepath.Join(root, kind), "demo", t0, cfg, &results.R2MED{DatasetName: "demo", Test: map[string]float64{"NDCG@10": .5},
			Extra: map[string]any{"reranker_name": "r1", "retriever_name": "bm25", "topk": 20}})
	}
	l, err := results.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := Ours(l)
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, "|"); got != "bm25 → insertrank:r1@20|bm25 → reasonrank:r1@20" {
		t.Errorf("names %q", got)
	}
	// `r2med results` lists each run under the same name.
	for i, r := range Runs(l) {
		if r.System != names[i] {
			t.Errorf("run %s listed as %q, on the board %q", r.Dir, r.System, names[i])
		}
	}
}
