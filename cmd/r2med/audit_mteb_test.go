package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/audit"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/nano/nanotest"
	"github.com/r2med/r2med/tasks"
)

// copyFiles is a task repository in R2MED's layout (nanotest's card; its
// hyde config is never read).
func copyFiles(corpus, queries, qrels string) map[string][]byte {
	return map[string][]byte{"README.md": []byte(nanotest.Readme), "corpus.jsonl": []byte(corpus), "query.jsonl": []byte(queries), "qrels.jsonl": []byte(qrels)}
}

// TestAuditMTEBCopies compares R2MED/Bioinformatics as its repository
// publishes it (main) with the copy MTEB reads (the revision MTEB pins),
// both on a loopback Hub: MTEB's copy repeats two ids (one with another
// text, which the loader's dict replaces), and main has since dropped a
// document, added one, changed a text, a query and two judgments.
func TestAuditMTEBCopies(t *testing.T) {
	srv, _, _ := fakeHubEnv(t)
	bio, _ := tasks.Lookup("Bioinformatics")
	pinned := srv.AddRepo(bio.Repo, copyFiles(
		`{"id": "d1", "text": "one"}
{"id": "d2", "text": "two"}
{"id": "d3", "text": "three"}
{"id": "d3", "text": "three, again"}
{"id": "d4", "text": "four"}
{"id": "d5", "text": "five"}
{"id": "d5", "text": "five"}
{"id": "d6", "text": "six"}
`, `{"id": "q1", "text": "first"}
{"id": "q2", "text": "second"}
`, `{"q_id": "q1", "p_id": "d1", "score": 1}
{"q_id": "q1", "p_id": "d6", "score": 1}
{"q_id": "q2", "p_id": "d3", "score": 1}
`), hubtest.Commit(bio.Revision))
	main := srv.AddRepo(bio.Repo, copyFiles(
		`{"id": "d1", "text": "one"}
{"id": "d2", "text": "two, edited"}
{"id": "d3", "text": "three"}
{"id": "d4", "text": "four"}
{"id": "d5", "text": "five"}
{"id": "d7", "text": "seven"}
`, `{"id": "q1", "text": "first"}
{"id": "q2", "text": "second, edited"}
`, `{"q_id": "q1", "p_id": "d1", "score": 2}
{"q_id": "q2", "p_id": "d3", "score": 1}
{"q_id": "q2", "p_id": "d7", "score": 1}
`))
	if pinned != bio.Revision {
		t.Fatalf("fixture commit %s, want the pinned %s", pinned, bio.Revision)
	}

	stdout := mustRun(t, "audit", "dataset", "--task", "bioinformatics", "--mteb", "--format", "json")
	var reps []audit.CopiesReport
	if err := json.Unmarshal([]byte(stdout), &reps); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(reps) != 1 {
		t.Fatalf("%d reports", len(reps))
	}
	r := reps[0]
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	if r.Task != "Bioinformatics" || r.A.Repo != "R2MED/Bioinformatics" || r.A.Revision != main || r.B.Revision != bio.Revision {
		t.Errorf("copies A %s@%s, B %s@%s; want main (%s) against the pinned %s", r.A.Repo, r.A.Revision, r.B.Repo, r.B.Revision, main, bio.Revision)
	}
	if r.A.DocumentRows != 6 || r.A.Documents != 6 || r.B.DocumentRows != 8 || r.B.Documents != 6 || r.B.ExpectedDocs != 47471 || r.A.ExpectedDocs != 0 {
		t.Errorf("A %+v\nB %+v", r.A, r.B)
	}
	if len(r.B.RepeatedDocs) != 2 || r.B.RepeatedDocs[0].ID != "d3" || !r.B.RepeatedDocs[0].TextDiffer || r.B.RepeatedDocs[1].ID != "d5" || r.B.RepeatedDocs[1].TextDiffer ||
		!slices.Equal(r.B.RepeatedDocs[0].At, []string{"corpus.jsonl:3", "corpus.jsonl:4"}) {
		t.Errorf("repeated in MTEB's copy: %+v", r.B.RepeatedDocs)
	}
	check("documents only in A", r.Documents.OnlyA, []string{"d7"})
	check("documents only in B", r.Documents.OnlyB, []string{"d6"})
	// d3: MTEB's dict keeps the second row, "three, again".
	check("documents that differ", r.Documents.Differs, []string{"d2", "d3"})
	check("queries that differ", r.Queries.Differs, []string{"q2"})
	check("judgments only in A", r.Judgments.OnlyA, []string{"q2\td7"})
	check("judgments only in B", r.Judgments.OnlyB, []string{"q1\td6"})
	check("judgments that differ", r.Judgments.Differs, []string{"q1\td1"})

	table := mustRun(t, "audit", "dataset", "--task", "Bioinformatics", "--mteb")
	for _, want := range []string{
		"Bioinformatics: the copies differ",
		"B  the copy MTEB's R2MEDBioinformaticsRetrieval reads: R2MED/Bioinformatics at " + bio.Revision,
		"documents 6 (8 rows), queries 2 (2 rows), judgments 3 (3 rows)",
		"its metadata states 47471 documents (+47465 against the 6 distinct ids here)",
		"2 document ids on several rows (a dict keeps the last):",
		"d3: corpus.jsonl:3, corpus.jsonl:4 (texts differ)",
		"documents only in A (1): d7",
		"judgments only in B (1): q1/d6",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	// Another copy by dataset id and revision: MTEB moved its data.
	moved := srv.AddRepo("mteb/R2MEDBioinformaticsRetrieval", copyFiles(`{"id": "d1", "text": "one"}
`, `{"id": "q1", "text": "first"}
`, `{"q_id": "q1", "p_id": "d1", "score": 1}
`))
	stdout = mustRun(t, "audit", "dataset", "--task", "Bioinformatics", "--mteb", "--revision", bio.Revision, "--mteb-dataset", "mteb/R2MEDBioinformaticsRetrieval@"+moved, "--format", "json")
	reps = nil
	json.Unmarshal([]byte(stdout), &reps)
	if len(reps) != 1 || reps[0].B.Repo != "mteb/R2MEDBioinformaticsRetrieval" || reps[0].B.Revision != moved || len(reps[0].Documents.OnlyA) != 5 || reps[0].B.ExpectedDocs != 0 {
		t.Errorf("against another repository: %s", stdout)
	}
	if _, stderr, code := r2med(t, "", "audit", "dataset", "--task", "demo", "--mteb"); code != 2 || !strings.Contains(stderr, "--mteb compares copies of R2MED's full tasks") {
		t.Errorf("--mteb on the demo: exit %d, %s", code, stderr)
	}
}
