package rerank

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

func TestCheckpointResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.trec.partial")
	c, done, stale, err := OpenCheckpoint(path, "settings-1")
	if err != nil || len(done) != 0 || stale {
		t.Fatalf("new checkpoint: %v %v %v", done, stale, err)
	}
	q1 := []ir.Hit{{DocID: "d1", Score: 0.1 + 0.2}, {DocID: "d2", Score: -3}}
	if err := c.Add("q1", q1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// A crash in the middle of the next line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"qid":"q2","hits":[{"doc":"d`)
	f.Close()

	c, done, stale, err = OpenCheckpoint(path, "settings-1")
	if err != nil || stale {
		t.Fatal(err, stale)
	}
	if len(done) != 1 || !slices.Equal(done["q1"], q1) {
		t.Fatalf("resumed %v, want q1 exactly (scores bit for bit)", done)
	}
	if err := c.Add("q2", []ir.Hit{{DocID: "x", Score: 1}}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, done, _, err = OpenCheckpoint(path, "settings-1")
	if err != nil || len(done) != 2 {
		t.Fatalf("after the repaired line: %v, %v", done, err)
	}
	c.Close()

	// Other settings start afresh.
	c, done, stale, err = OpenCheckpoint(path, "settings-2")
	if err != nil || !stale || len(done) != 0 {
		t.Fatalf("other settings: %v %v %v", done, stale, err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("Remove left the file")
	}
}

func TestCheckpointDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	os.WriteFile(path, []byte(`{"r2med_rerank_checkpoint":"k"}`+"\nnot json\n"+`{"qid":"q","hits":[]}`+"\n"), 0o644)
	if _, _, _, err := OpenCheckpoint(path, "k"); err == nil || !strings.Contains(err.Error(), ":2: damaged checkpoint line") {
		t.Errorf("got %v", err)
	}
}

// Rerank with a checkpoint: an interrupted run leaves its finished
// queries, and the rerun scores only the rest.
func TestRerankWithCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	run := listRun(map[string][]string{"q1": {"d1", "d2"}, "q2": {"d3", "d4"}, "q3": {"d5", "d6"}})
	qs := map[string]string{"q1": "a", "q2": "b", "q3": "c"}
	ctx, cancel := context.WithCancel(context.Background())
	var scored []string
	s := ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		scored = append(scored, q)
		if q == "b" {
			cancel() // interrupted while scoring q2
			return nil, ctx.Err()
		}
		return reverseScorer(ctx, q, docs)
	})
	cp, done, _, _ := OpenCheckpoint(path, "k")
	_, err := Rerank(ctx, run, qs, textIsID, s, Options{Done: done, OnQuery: cp.Add})
	cp.Close()
	if err == nil {
		t.Fatal("interrupted rerank returned no error")
	}
	cp, done, _, _ = OpenCheckpoint(path, "k")
	if len(done) != 1 || done["q1"] == nil {
		t.Fatalf("checkpoint holds %v, want q1", done)
	}
	scored = nil
	got, err := Rerank(context.Background(), run, qs, textIsID, reverseScorer, Options{Done: done, OnQuery: cp.Add})
	cp.Remove()
	if err != nil || len(got) != 3 || ids(got["q1"])[0] != "d2" || ids(got["q3"])[0] != "d6" {
		t.Fatalf("resumed: %v, %v", got, err)
	}
}
