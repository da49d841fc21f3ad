package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/tasks"
)

// TestCLITasksNano: r2med tasks --suite nano lists NanoR2MED's splits with
// the queries, documents and positive judgments of HAKARI-Bench's task
// cards, read here from the shared copy of the cards, and the repository
// they are read from; it printed R2MED's full tasks, as --suite r2med does.
func TestCLITasksNano(t *testing.T) {
	needShared(t)
	stdout := mustRun(t, "tasks", "--suite", "nano")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1+8+1 || !strings.Contains(lines[0], "relevant") || !strings.Contains(lines[0], "repository (suite nano)") {
		t.Fatalf("want a header, 8 splits and the total:\n%s", stdout)
	}
	var queries, docs int
	for i, task := range tasks.All() {
		b, err := os.ReadFile(filepath.Join(shared, "nanor2med-metadata", task.NanoSplit+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			M struct {
				Counts struct {
					Queries, Documents int
					Positive           int `json:"positive_qrels"`
				}
			} `json:"task_metadata"`
		}
		if err := json.Unmarshal(b, &card); err != nil {
			t.Fatal(err)
		}
		c := card.M.Counts
		queries += c.Queries
		docs += c.Documents
		f := strings.Fields(lines[1+i])
		want := []string{fmt.Sprint(c.Queries), fmt.Sprint(c.Documents), fmt.Sprint(c.Positive), task.NanoSplit, "hf://datasets/" + tasks.NanoRepo + "@" + tasks.NanoRevision}
		if len(f) < 5 || f[0] != task.Name || strings.Join(f[len(f)-5:], " ") != strings.Join(want, " ") {
			t.Errorf("line %q, want %s … %s", lines[1+i], task.Name, strings.Join(want, " "))
		}
	}
	if f := strings.Fields(lines[9]); strings.Join(f, " ") != fmt.Sprintf("all %d %d", queries, docs) {
		t.Errorf("total line %q, want %d queries and %d documents", lines[9], queries, docs)
	}
}
