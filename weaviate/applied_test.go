package weaviate

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLagging: a node counts as having applied an update only when it
// answers the cluster's statistics, its raft applied index has reached
// the update's, and nothing waits for its state machine.
func TestLagging(t *testing.T) {
	var st clusterStatistics
	if err := json.Unmarshal([]byte(`{"statistics":[
		{"name":"n1","raft":{"appliedIndex":"7","fsmPending":"0"}},
		{"name":"n2","raft":{"appliedIndex":"6","fsmPending":"0"}},
		{"name":"n3","raft":{"appliedIndex":"7","fsmPending":"1"}},
		{"name":"n5","raft":{"appliedIndex":"9","fsmPending":"0"}}]}`), &st); err != nil {
		t.Fatal(err)
	}
	if got := st.maxApplied(); got != 9 {
		t.Errorf("maxApplied = %d, want 9", got)
	}
	got := st.lagging([]string{"n1", "n2", "n3", "n4"}, 7)
	want := []string{"node n2 has not applied it (raft applied index 6", "node n3 has not applied it yet (1 batches", "node n4 did not confirm applying it (it does not answer"}
	if len(got) != len(want) {
		t.Fatalf("lagging = %q, want %d lines", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("lagging[%d] = %q, want it to start %q", i, got[i], want[i])
		}
	}
	if got := st.lagging([]string{"n1", "n5"}, 7); len(got) != 0 {
		t.Errorf("nodes that applied it lag: %q", got)
	}
}
