package rerank

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// A fresh job starts its trace file anew (a scorer without traces leaves
// none); a resumed one keeps the whole lines of the queries it resumes.
func TestTraceFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	cp := filepath.Join(dir, "out.trec.partial")
	trace := TraceFile(cp)
	if trace != filepath.Join(dir, "out.trec.trace.jsonl") {
		t.Fatalf("TraceFile = %s", trace)
	}
	task := &ir.Task{Queries: []ir.Query{{ID: "q1", Text: "a"}, {ID: "q2", Text: "b"}}, Corpus: []ir.Doc{{ID: "d1", Text: "x"}, {ID: "d2", Text: "y"}}}
	run := ir.Run{"q1": {{DocID: "d1", Score: 2}, {DocID: "d2", Score: 1}}, "q2": {{DocID: "d2", Score: 2}, {DocID: "d1", Score: 1}}}
	os.WriteFile(trace, []byte(`{"qid":"old"}`+"\n"), 0o644)
	if _, _, err := (Job{Task: task, Run: run, Scorer: reverseScorer2, Checkpoint: cp, Key: "k"}).Do(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(trace); !os.IsNotExist(err) {
		t.Errorf("a fresh job without traces kept the old trace file: %v", err)
	}
	os.Remove(cp)

	// A job whose scorer traces, interrupted after q1 (the checkpoint
	// holds it), with a cut-off line and a line of q2 left behind.
	cpOld := `{"r2med_rerank_checkpoint":"t"}` + "\n" + `{"qid":"q1","hits":[{"doc":"d1","score":1}]}` + "\n"
	os.WriteFile(cp, []byte(cpOld), 0o644)
	os.WriteFile(trace, []byte(`{"qid":"q1","step":0,"answer":"kept"}`+"\n"+`{"qid":"q2","step":0,"answer":"stale"}`+"\n"+`{"qid":"q2","st`), 0o644)
	s := &ReasonRank{Chat: llmStub{"[2] > [1]"}}
	if _, res, err := (Job{Task: task, Run: run, Scorer: s, Checkpoint: cp, Key: "t"}).Do(context.Background()); err != nil || res.Done != 1 {
		t.Fatalf("resume: %v %+v", err, res)
	}
	b, _ := os.ReadFile(trace)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"kept"`) || !strings.Contains(lines[1], `"qid":"q2"`) || strings.Contains(string(b), "stale") {
		t.Errorf("trace after resume:\n%s", b)
	}
}

// reverseScorer2 scores by the document's position from the end.
var reverseScorer2 = ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
	out := make([]float64, len(docs))
	for i := range docs {
		out[i] = float64(i)
	}
	return out, nil
})
