package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeCopy(t *testing.T, corpus, queries, qrels string) string {
	t.Helper()
	dir := t.TempDir()
	readme := "---\nconfigs:\n" +
		"  - {config_name: corpus, data_files: [{split: corpus, path: corpus.jsonl}]}\n" +
		"  - {config_name: query, data_files: [{split: query, path: query.jsonl}]}\n" +
		"  - {config_name: qrels, data_files: [{split: qrels, path: qrels.jsonl}]}\n---\n"
	for name, body := range map[string]string{"README.md": readme, "corpus.jsonl": corpus, "query.jsonl": queries, "qrels.jsonl": qrels} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompareCopies(t *testing.T) {
	a, err := ReadCopy(writeCopy(t, "{\"id\": \"d1\", \"text\": \"x\"}\n{\"id\": 2, \"text\": \"y\"}\n", "{\"id\": \"q1\", \"text\": \"q\"}\n", "{\"q_id\": \"q1\", \"p_id\": \"d1\", \"score\": 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCopy(writeCopy(t, "{\"id\": \"d1\", \"text\": \"x\"}\n{\"id\": \"d1\", \"text\": \"x2\"}\n{\"id\": \"3\", \"text\": \"z\"}\n", "{\"id\": \"q1\", \"text\": \"q\"}\n", "{\"q_id\": \"q1\", \"p_id\": \"d1\", \"score\": 1.0}\n{\"q_id\": \"q1\", \"p_id\": \"d1\", \"score\": 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := CompareCopies("T", a, b)
	if !slices.Equal(r.Documents.OnlyA, []string{"2"}) || !slices.Equal(r.Documents.OnlyB, []string{"3"}) || !slices.Equal(r.Documents.Differs, []string{"d1"}) {
		t.Errorf("documents %+v (a numeric id is its literal text; a dict keeps d1's last row)", r.Documents)
	}
	if !slices.Equal(r.Judgments.Differs, []string{"q1\td1"}) || r.B.JudgmentRows != 2 || r.B.Judgments != 1 {
		t.Errorf("judgments %+v, B %+v: the repeated pair keeps its last grade, 2", r.Judgments, r.B)
	}
	if !r.Queries.Same() || len(r.B.RepeatedDocs) != 1 || r.B.RepeatedDocs[0].At[1] != "corpus.jsonl:2" {
		t.Errorf("queries %+v, repeated %+v", r.Queries, r.B.RepeatedDocs)
	}
	_, err = ReadCopy(writeCopy(t, "{\"id\": \"d1\"}\n", "", ""))
	if err == nil || !strings.Contains(err.Error(), "corpus.jsonl:1") {
		t.Errorf("a document without text: %v", err)
	}
}

// TestCopiesRepeatedJudgments: a (query, document) pair on several qrels
// rows is listed with its rows and whether the grades differ, as repeated
// document and query ids are; it was only counted (judgments 1, 2 rows),
// so which grade a dict keeps went unsaid.
func TestCopiesRepeatedJudgments(t *testing.T) {
	a, err := ReadCopy(writeCopy(t, "{\"id\": \"d1\", \"text\": \"x\"}\n", "{\"id\": \"q1\", \"text\": \"q\"}\n",
		"{\"q_id\": \"q1\", \"p_id\": \"d1\", \"score\": 1}\n{\"q_id\": \"q1\", \"p_id\": \"d1\", \"score\": 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := CompareCopies("T", a, a)
	reps := r.A.RepeatedJudgments
	if len(reps) != 1 || reps[0].ID != "q1\td1" || !reps[0].TextDiffer || !slices.Equal(reps[0].At, []string{"qrels.jsonl:1", "qrels.jsonl:2"}) {
		t.Fatalf("repeated judgments %+v, want q1/d1 on qrels.jsonl:1 and :2, grades differing", reps)
	}
	var b strings.Builder
	if err := r.WriteTable(&b, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 judged pair on several rows (a dict keeps the last):", "q1/d1: qrels.jsonl:1, qrels.jsonl:2 (grades differ)", "with ids or judgments repeated"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestCopiesListsAreArrays: the comparison's lists are JSON arrays, []
// when empty, as the dataset audit's are; they were null.
func TestCopiesListsAreArrays(t *testing.T) {
	a, err := ReadCopy(writeCopy(t, "{\"id\": \"d1\", \"text\": \"x\"}\n", "{\"id\": \"q1\", \"text\": \"q\"}\n", "{\"q_id\": \"q1\", \"p_id\": \"d1\", \"score\": 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(CompareCopies("T", a, a))
	if strings.Contains(string(b), "null") {
		t.Errorf("%s: want [] for empty lists", b)
	}
}
