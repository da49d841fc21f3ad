package main

import (
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/weaviate"
)

// TestPushSummaryCounts: index push's summary puts counts of one in the
// singular (1 document, 1 retry, 1 object), and a push timed at zero
// gives no rate rather than "NaN objects/s".
func TestPushSummaryCounts(t *testing.T) {
	info := weaviate.Info{URL: "http://127.0.0.1:8080", Collection: "Demo", ServerVersion: "1.35.2", Nodes: 1, Objects: 1}
	got := pushSummary("demo", info, weaviate.PushStats{Docs: 1, Written: 1, Retries: 1, Objects: 1}, true)
	for _, want := range []string{"(new collection; Weaviate 1.35.2, 1 node)", "  1 document: 1 written (0 changed), 0 already there; 1 retry; 0s\n", "the collection holds 1 object\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	got = pushSummary("demo", info, weaviate.PushStats{Docs: 2, Written: 2, Retries: 0, Objects: 2, Elapsed: 500 * time.Millisecond}, false)
	if !strings.Contains(got, "2 documents: 2 written (0 changed), 0 already there; 0 retries; 500ms, 4 objects/s\n") {
		t.Errorf("summary:\n%s", got)
	}
}
