package expand

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/usage"
)

// genServer answers by the query inside the user prompt: a query text
// starting with a keyword picks a behaviour, anything else gets
// "passage about <the user prompt's last line>".
type genServer struct {
	*httptest.Server
	calls   atomic.Int64
	mu      sync.Mutex
	prompts []string
}

func newGenServer(t *testing.T) *genServer {
	s := &genServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		var body struct {
			Messages []llm.Message `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		user := body.Messages[len(body.Messages)-1].Content
		s.mu.Lock()
		s.prompts = append(s.prompts, user)
		s.mu.Unlock()
		msg := map[string]any{"role": "assistant", "content": "passage for: " + firstQueryLine(user)}
		finish := "stop"
		switch {
		case strings.Contains(user, "BROKEN"):
			http.Error(w, "model crashed", http.StatusBadRequest)
			return
		case strings.Contains(user, "GARBAGE"):
			io.WriteString(w, `{"choices": [`)
			return
		case strings.Contains(user, "NOCHOICE"):
			io.WriteString(w, `{"choices": []}`)
			return
		case strings.Contains(user, "EMPTY"):
			msg["content"] = "  "
		case strings.Contains(user, "REFUSED"):
			// OpenAI's chat completions: a refusal comes as
			// message.refusal with a null content (openai-python's
			// ChatCompletionMessage.refusal).
			msg["content"] = nil
			msg["refusal"] = "I'm sorry, I can't help with that."
		case strings.Contains(user, "FILTERED"):
			// finish_reason content_filter: "content was omitted due to
			// a flag from our content filters" (openai-python f10c757).
			msg["content"] = ""
			finish = "content_filter"
		case strings.Contains(user, "TRUNCATED"):
			msg["content"] = "<think>still reasoning about it"
			finish = "length"
		case strings.Contains(user, "THINKS"):
			msg["content"] = "The answer passage."
			msg["reasoning_content"] = "First I consider the findings."
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": msg, "finish_reason": finish}},
			"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(s.Close)
	return s
}

// firstQueryLine is the text after the last "Exam: " label.
func firstQueryLine(prompt string) string {
	i := strings.LastIndex(prompt, "Exam: ")
	if i < 0 {
		return "?"
	}
	rest := prompt[i+len("Exam: "):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func genClient(t *testing.T, s *genServer, store llm.Store) *llm.Client {
	c, err := llm.New(llm.Options{
		BaseURL: s.URL + "/v1", Model: "test-model", Cache: store, Concurrency: 3,
		HTTP: &httpx.Client{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxAttempts: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func genTask(texts ...string) *ir.Task {
	task := &ir.Task{Name: "MedQA-Diag", Qrels: ir.Qrels{}}
	for i, text := range texts {
		id := string(rune('a' + i))
		q := ir.Query{ID: id, Text: text}
		if i == 0 {
			q.Extra = map[string]json.RawMessage{"doc_id": json.RawMessage(`["d9", "d1"]`)}
		}
		task.Queries = append(task.Queries, q)
		task.Qrels.Add(id, "d"+id+"2", 1)
		task.Qrels.Add(id, "d"+id+"1", 2)
		task.Qrels.Add(id, "d"+id+"0", 0)
	}
	return task
}

func config(method, label string) GenerateConfig {
	return GenerateConfig{
		Method: method, LLM: label, Subject: Subject{Style: StyleExam},
		Request: llm.Request{Temperature: 0.7, Seed: llm.Seed(42), MaxTokens: 256},
	}
}

func TestGenerateWritesR2MEDLayout(t *testing.T) {
	s := newGenServer(t)
	task := genTask("chest pain on exertion", "fever and rash", "BROKEN one", "EMPTY one", "NOCHOICE one", "GARBAGE one", "THINKS about it")
	cfg := config(HyDE, "my-llm")
	var progress []int
	res, err := Generate(context.Background(), genClient(t, s, nil), task, cfg, func(done, total int) { progress = append(progress, done) })
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != 7 {
		t.Errorf("progress %v", progress)
	}
	m := res.Manifest
	var fellBack []string
	for _, f := range m.Fallbacks {
		fellBack = append(fellBack, f.ID)
	}
	if strings.Join(fellBack, ",") != "c,d,e,f" {
		t.Fatalf("fallbacks %+v", m.Fallbacks)
	}
	for _, f := range m.Fallbacks {
		if f.Reason == "" {
			t.Errorf("fallback %s has no reason", f.ID)
		}
	}
	if !strings.Contains(m.Fallbacks[2].Reason, "no choices") || !strings.Contains(m.Fallbacks[1].Reason, "empty answer") {
		t.Errorf("reasons %+v", m.Fallbacks)
	}
	if sum := m.FallbackSummary(); !strings.HasPrefix(sum, `4 of 7 queries`) || !strings.Contains(sum, `"c", "d", "e", "f"`) {
		t.Errorf("summary %q", sum)
	}
	if m.ReasoningDropped != 1 || m.Requested != 4 || m.Usage.TotalTokens != 60 {
		t.Errorf("manifest %+v", m)
	}

	root := t.TempDir()
	path, err := res.WriteDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(root, "hyde", "my-llm", FileName) {
		t.Errorf("path %s", path)
	}
	gens, err := LoadDir(root, HyDE, "my-llm")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a": "passage for: chest pain on exertion",
		"b": "passage for: fever and rash",
		"c": "BROKEN one", "d": "EMPTY one", "e": "NOCHOICE one", "f": "GARBAGE one",
		"g": "The answer passage.",
	}
	for _, g := range gens {
		if g.HyDoc != want[g.ID] {
			t.Errorf("%s: hy_doc %q, want %q", g.ID, g.HyDoc, want[g.ID])
		}
	}
	queries, err := Apply(task.Queries, gens)
	if err != nil || queries[0].Text != "passage for: chest pain on exertion" {
		t.Errorf("Apply: %v %v", queries, err)
	}

	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var first, last map[string]json.RawMessage
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[6]), &last)
	if string(first["doc_id"]) != `["d9","d1"]` {
		t.Errorf("doc_id from the query file: %s", first["doc_id"])
	}
	var second map[string]json.RawMessage
	json.Unmarshal([]byte(lines[1]), &second)
	if string(second["doc_id"]) != `["db1","db2"]` {
		t.Errorf("doc_id from the qrels: %s", second["doc_id"])
	}
	if string(last["reasoning"]) != `"First I consider the findings."` {
		t.Errorf("reasoning field %s", last["reasoning"])
	}
	if !strings.HasPrefix(lines[0], `{"id":"a","text":"chest pain on exertion","hy_doc":`) {
		t.Errorf("field order: %s", lines[0])
	}
	var back GenerationManifest
	b, err := os.ReadFile(filepath.Join(root, "hyde", "my-llm", ManifestName))
	if err != nil || json.Unmarshal(b, &back) != nil || len(back.Fallbacks) != 4 || back.TemplateDigest != DefaultPrompts().Digest() {
		t.Errorf("manifest on disk: %s %v", b, err)
	}
}

func TestGenerateReasoningLabel(t *testing.T) {
	s := newGenServer(t)
	task := genTask("THINKS hard", "TRUNCATED case", "plain answer")
	res, err := Generate(context.Background(), genClient(t, s, nil), task, config(Query2Doc, "qwq-32b"), nil)
	if err != nil {
		t.Fatal(err)
	}
	items := res.Items
	if items[0].HyDoc != "<think>\nFirst I consider the findings.\n</think>\n\nThe answer passage." {
		t.Errorf("reasoning output stored as %q", items[0].HyDoc)
	}
	// R2MED's reasoning rules: BM25 on the answer alone.
	if got := items[0].BM25Text(); got != "The answer passage." {
		t.Errorf("BM25Text %q", got)
	}
	if items[1].HyDoc != "TRUNCATED case" || !strings.Contains(res.Manifest.Fallbacks[0].Reason, "still reasoning") {
		t.Errorf("truncated: %q %+v", items[1].HyDoc, res.Manifest.Fallbacks)
	}
	if res.Manifest.ReasoningKept != 1 || res.Manifest.Format != "think" {
		t.Errorf("manifest %+v", res.Manifest)
	}
	// The query2doc prompt went out with the exam examples.
	if !strings.Contains(s.prompts[0], "###Examples:###") {
		t.Errorf("prompt %q", s.prompts[0])
	}
}

func TestGenerateCachedRerun(t *testing.T) {
	s := newGenServer(t)
	store := &llm.MemoryStore{}
	task := genTask("q one", "q two", "BROKEN three")
	first, err := Generate(context.Background(), genClient(t, s, store), task, config(HyDE, "m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := s.calls.Load()
	second, err := Generate(context.Background(), genClient(t, s, store), task, config(HyDE, "m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Only the failed query is asked again (errors are not cached).
	// A 400 is not retried, so that is one request.
	if got := s.calls.Load() - before; got != 1 {
		t.Errorf("rerun sent %d requests, want 1", got)
	}
	if second.Manifest.Cached != 2 || second.Manifest.Requested != 0 {
		t.Errorf("rerun manifest %+v", second.Manifest)
	}
	for i := range first.Items {
		if first.Items[i].HyDoc != second.Items[i].HyDoc {
			t.Errorf("item %d differs on rerun", i)
		}
	}
	// Other sampling parameters are other generations.
	cfg := config(HyDE, "m")
	cfg.Request.Temperature = 0.8
	before = s.calls.Load()
	if _, err := Generate(context.Background(), genClient(t, s, store), task, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.calls.Load() - before; got != 3 {
		t.Errorf("new temperature sent %d requests, want 3", got)
	}
}

func TestGenerateLameR(t *testing.T) {
	s := newGenServer(t)
	task := genTask("q one", "q two")
	cfg := config(LameR, "m")
	if _, err := Generate(context.Background(), genClient(t, s, nil), task, cfg, nil); err == nil {
		t.Fatal("lamer without passages accepted")
	}
	cfg.Passages = [][]string{{"p1\nline", "p2"}, {"p3"}}
	res, err := Generate(context.Background(), genClient(t, s, nil), task, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Manifest.Fallbacks) != 0 {
		t.Errorf("fallbacks %+v", res.Manifest.Fallbacks)
	}
	joined := strings.Join(s.prompts, "\n====\n")
	if !strings.Contains(joined, "Possible Relevant Passages: \n[1]. p1 line\n[2]. p2") || !strings.Contains(joined, "Possible Relevant Passages: \n[1]. p3") {
		t.Errorf("prompts %s", joined)
	}
}

func TestGenerateRefuses(t *testing.T) {
	s := newGenServer(t)
	c := genClient(t, s, nil)
	task := genTask("q")
	for _, cfg := range []GenerateConfig{config(SearchO1, "m"), config(HyDE, "a/b"), config(HyDE, "")} {
		if _, err := Generate(context.Background(), c, task, cfg, nil); err == nil {
			t.Errorf("%s/%s accepted", cfg.Method, cfg.LLM)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, c, task, config(HyDE, "m"), nil); err == nil {
		t.Error("cancelled generate returned no error")
	}
	if s.calls.Load() != 0 {
		t.Errorf("%d requests sent", s.calls.Load())
	}
}

func TestNewResult(t *testing.T) {
	task := genTask("q one", "q two")
	gens := []Generation{{ID: "a", Text: "q one", HyDoc: "x", Method: SearchR1, LLM: "m"}, {ID: "b", Text: "q two", HyDoc: "y", Method: SearchR1, LLM: "m"}}
	res := NewResult(task, gens, GenerationManifest{Method: SearchR1, LLM: "m", Queries: 2, Fallbacks: []Fallback{}})
	root := t.TempDir()
	if _, err := res.WriteDir(root); err != nil {
		t.Fatal(err)
	}
	back, err := LoadDir(root, SearchR1, "m")
	if err != nil || len(back) != 2 || back[1].HyDoc != "y" {
		t.Fatalf("%+v %v", back, err)
	}
	if string(res.Items[0].DocIDs) != `["d9", "d1"]` || string(res.Items[1].DocIDs) != `["db1","db2"]` {
		t.Errorf("doc ids %s %s", res.Items[0].DocIDs, res.Items[1].DocIDs)
	}
}

func TestUnusable(t *testing.T) {
	fb := []Fallback{{ID: "a", Reason: "HTTP 404"}, {ID: "b", Reason: "empty answer"}}
	for _, tc := range []struct {
		m    GenerationManifest
		want string // "" for no error
	}{
		{GenerationManifest{Model: "m", Queries: 2, Fallbacks: fb}, "no query got a usable answer from m; the first failure: HTTP 404"},
		{GenerationManifest{Model: "m", Queries: 3, Fallbacks: fb}, ""},
		// A task without queries has nothing to refuse (and no first failure).
		{GenerationManifest{Model: "m"}, ""},
	} {
		err := tc.m.Unusable()
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%d queries, %d fallbacks: %v, want %q", tc.m.Queries, len(tc.m.Fallbacks), err, tc.want)
		}
	}
}

// TestGenerateRefusedAnswers: a refusal (message.refusal, no content) and
// an answer a content filter withheld (finish_reason content_filter) fall
// back to the query with a reason that says so, where both read "empty
// answer" and left the user to guess at max_tokens or a server hiccup.
func TestGenerateRefusedAnswers(t *testing.T) {
	s := newGenServer(t)
	task := genTask("REFUSED one", "FILTERED one", "EMPTY one")
	res, err := Generate(context.Background(), genClient(t, s, nil), task, config(HyDE, "my-llm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	fb := res.Manifest.Fallbacks
	if len(fb) != 3 {
		t.Fatalf("fallbacks %+v", fb)
	}
	for i, want := range []string{
		`the model refused: "I'm sorry, I can't help with that."`,
		"the server's content filter withheld the answer (finish_reason content_filter)",
		"empty answer",
	} {
		if fb[i].Reason != want {
			t.Errorf("query %s: reason %q, want %q", fb[i].ID, fb[i].Reason, want)
		}
	}
	if res.Items[0].HyDoc != "REFUSED one" {
		t.Errorf("a refused query's hy_doc is %q, want the query", res.Items[0].HyDoc)
	}
}

// TestGenerateEstimatedUsage: where the server reports no token counts,
// the client estimates them (usage.Estimator); the generation manifest's
// usage then says it is an estimate and of how many answers, where it
// summed the estimates into counts that read as the server's.
func TestGenerateEstimatedUsage(t *testing.T) {
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := map[string]any{"role": "assistant", "content": "a passage of twenty-four"}
		body := map[string]any{"choices": []any{map[string]any{"message": msg, "finish_reason": "stop"}}}
		if calls.Add(1) == 1 {
			body["usage"] = map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
		}
		json.NewEncoder(w).Encode(body)
	}))
	defer s.Close()
	c, err := llm.New(llm.Options{BaseURL: s.URL + "/v1", Model: "m", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generate(context.Background(), c, genTask("one", "two", "three"), config(HyDE, "my-llm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if m.Usage.Estimated != usage.Estimator || m.EstimatedAnswers != 2 {
		t.Errorf("usage %+v, estimated answers %d; want estimated %q for 2 answers", m.Usage, m.EstimatedAnswers, usage.Estimator)
	}
	// 24 bytes of answer: 6 tokens by utf8-bytes/4, twice, and the 5 the
	// server counted.
	if m.Usage.CompletionTokens != 5+6+6 {
		t.Errorf("completion tokens %d, want 17", m.Usage.CompletionTokens)
	}
}
