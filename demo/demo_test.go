package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

type passage struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type vignette struct {
	ID         string `json:"id"`
	Text       string `json:"text"`
	BodySystem string `json:"body_system"`
	Answer     string `json:"answer"`
}

type judgment struct {
	QID   string `json:"q_id"`
	PID   string `json:"p_id"`
	Score *int   `json:"score"`
}

// readJSONL decodes every line of an embedded file strictly: unknown fields
// are errors, so a misspelled key cannot slip through as an empty value.
func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	b, err := FS.ReadFile("data/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("%s: empty or missing final newline", name)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		if dec.More() {
			t.Fatalf("%s:%d: trailing data after the JSON object", name, line)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sentences counts sentence ends; the texts avoid abbreviations with
// periods, so a period, question or exclamation mark before a space or the
// end is a sentence end.
var sentenceEnd = regexp.MustCompile(`[.!?](\s|$)`)

var passageID = regexp.MustCompile(`^[a-z]+-[a-z0-9]+-[0-9]+$`)

func TestFiles(t *testing.T) {
	corpus := readJSONL[passage](t, "corpus.jsonl")
	queries := readJSONL[vignette](t, "query.jsonl")
	qrels := readJSONL[judgment](t, "qrels.jsonl")

	if n := len(corpus); n < 60 || n > 80 {
		t.Errorf("%d passages, want 60–80", n)
	}
	if n := len(queries); n < 12 || n > 15 {
		t.Errorf("%d vignettes, want 12–15", n)
	}

	docs := map[string]bool{}
	for _, p := range corpus {
		if !passageID.MatchString(p.ID) {
			t.Errorf("passage id %q is not of the form system-topic-n", p.ID)
		}
		if docs[p.ID] {
			t.Errorf("duplicate passage id %q", p.ID)
		}
		docs[p.ID] = true
		if n := len(sentenceEnd.FindAllString(p.Text, -1)); n < 2 || n > 5 {
			t.Errorf("%s: %d sentences, want 2–5", p.ID, n)
		}
	}

	qs := map[string]vignette{}
	for _, q := range queries {
		if _, dup := qs[q.ID]; dup {
			t.Errorf("duplicate query id %q", q.ID)
		}
		qs[q.ID] = q
		if q.BodySystem == "" || q.Answer == "" {
			t.Errorf("%s: body_system %q, answer %q: both are required", q.ID, q.BodySystem, q.Answer)
		}
		if n := len(sentenceEnd.FindAllString(q.Text, -1)); n < 3 || n > 6 {
			t.Errorf("%s: %d sentences, want 3–6", q.ID, n)
		}
	}

	relevant := map[string]int{}
	pairs := map[[2]string]bool{}
	for _, j := range qrels {
		if _, ok := qs[j.QID]; !ok {
			t.Errorf("qrels name unknown query %q", j.QID)
		}
		if !docs[j.PID] {
			t.Errorf("qrels name unknown passage %q", j.PID)
		}
		if j.Score == nil || *j.Score != 1 {
			t.Errorf("qrels %s %s: score must be 1", j.QID, j.PID)
		}
		if pairs[[2]string{j.QID, j.PID}] {
			t.Errorf("qrels %s %s judged twice", j.QID, j.PID)
		}
		pairs[[2]string{j.QID, j.PID}] = true
		relevant[j.QID]++
	}
	for _, q := range queries {
		if n := relevant[q.ID]; n < 1 || n > 4 {
			t.Errorf("%s: %d relevant passages, want 1–4", q.ID, n)
		}
	}
}

// genericWords may appear in a vignette although they are part of an
// answer: they name a kind of condition, not the condition.
var genericWords = map[string]bool{"disease": true, "syndrome": true, "acute": true, "pregnancy": true, "poisoning": true}

// TestVignettesHideTheirAnswer is the point of the task: the diagnosis must
// be inferred, so neither the answer nor any distinctive word of it may
// appear in the vignette.
func TestVignettesHideTheirAnswer(t *testing.T) {
	split := regexp.MustCompile(`[^\pL\pN]+`)
	for _, q := range readJSONL[vignette](t, "query.jsonl") {
		text := strings.ToLower(q.Text)
		if strings.Contains(text, strings.ToLower(q.Answer)) {
			t.Errorf("%s names its answer %q", q.ID, q.Answer)
			continue
		}
		words := map[string]bool{}
		for _, w := range split.Split(text, -1) {
			words[w] = true
		}
		for _, w := range split.Split(strings.ToLower(q.Answer), -1) {
			if len(w) >= 5 && !genericWords[w] && words[w] {
				t.Errorf("%s contains %q, a word of its answer %q", q.ID, w, q.Answer)
			}
		}
	}
}

// TestRelevantPassagesNameTheAnswer keeps the judgments honest: at least one
// relevant passage per vignette names the diagnosis the vignette implies.
func TestRelevantPassagesNameTheAnswer(t *testing.T) {
	text := map[string]string{}
	for _, p := range readJSONL[passage](t, "corpus.jsonl") {
		text[p.ID] = strings.ToLower(p.Text)
	}
	rel := map[string][]string{}
	for _, j := range readJSONL[judgment](t, "qrels.jsonl") {
		rel[j.QID] = append(rel[j.QID], j.PID)
	}
	for _, q := range readJSONL[vignette](t, "query.jsonl") {
		named := false
		for _, p := range rel[q.ID] {
			named = named || strings.Contains(text[p], strings.ToLower(q.Answer))
		}
		if !named {
			t.Errorf("%s: no relevant passage names %q", q.ID, q.Answer)
		}
	}
}

func TestLoad(t *testing.T) {
	task, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != Name {
		t.Errorf("task name %q, want %q", task.Name, Name)
	}
	corpus := readJSONL[passage](t, "corpus.jsonl")
	queries := readJSONL[vignette](t, "query.jsonl")
	if len(task.Corpus) != len(corpus) || len(task.Queries) != len(queries) {
		t.Fatalf("loaded %d docs / %d queries, files have %d / %d", len(task.Corpus), len(task.Queries), len(corpus), len(queries))
	}
	for i, q := range task.Queries {
		if q.ID != queries[i].ID || q.Text != queries[i].Text {
			t.Errorf("query %d loaded as %q, file has %q", i, q.ID, queries[i].ID)
		}
		var answer string
		if err := json.Unmarshal(q.Extra["answer"], &answer); err != nil || answer != queries[i].Answer {
			t.Errorf("%s: answer not kept in Extra: %q (%v)", q.ID, q.Extra["answer"], err)
		}
	}
	if n, want := task.Qrels.Len(), len(readJSONL[judgment](t, "qrels.jsonl")); n != want {
		t.Errorf("loaded %d judgments, file has %d", n, want)
	}
}

// TestLoadIsEmbedded: the loaded task names no directory or files, which
// would be read against the working directory (a ./data there is not the
// demo task).
func TestLoadIsEmbedded(t *testing.T) {
	task, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != Name || task.Dir != "" || task.Files != nil || len(task.Corpus) == 0 {
		t.Errorf("task %q dir %q files %v, %d documents", task.Name, task.Dir, task.Files, len(task.Corpus))
	}
}
