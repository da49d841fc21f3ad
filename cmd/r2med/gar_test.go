package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/expand"
)

// fakeLLM is a loopback chat server answering every prompt with a passage
// built from the prompt's query line, and failing the queries whose text
// contains "cough" (to exercise fallbacks).
func fakeLLM(t *testing.T) (*httptest.Server, *atomic.Int64, *[]string) {
	var calls atomic.Int64
	var mu sync.Mutex
	var prompts []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer test-key-789" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var body struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		json.NewDecoder(r.Body).Decode(&body)
		user := body.Messages[len(body.Messages)-1].Content
		mu.Lock()
		prompts = append(prompts, user)
		mu.Unlock()
		content := "hypothetical passage: " + strings.ToUpper(user[len(user)-40:])
		if strings.Contains(user, "cough") {
			content = ""
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}}}})
	}))
	t.Cleanup(s.Close)
	return s, &calls, &prompts
}

// demoDir copies the demo task into a directory, as a user's --data.
func demoDir(t *testing.T) string { return demoInto(t, t.TempDir()) }

// demoInto copies the demo task into dir, made if missing, and returns it.
func demoInto(t *testing.T, dir string) string {
	for _, name := range []string{"corpus.jsonl", "query.jsonl", "qrels.jsonl"} {
		b, err := demo.FS.ReadFile("data/" + name)
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(dir, name), b)
	}
	return dir
}

func TestGarGenerateThenRun(t *testing.T) {
	s, calls, prompts := fakeLLM(t)
	data := demoDir(t)
	cacheDir := t.TempDir()
	t.Setenv("MY_LLM_KEY", "test-key-789")
	args := []string{"gar", "generate", "--method", "lamer", "--llm-model", "org/Some-Model:7b", "--llm-base-url", s.URL + "/v1",
		"--llm-api-key-env", "MY_LLM_KEY", "--data", data, "--style", "exam", "--cache", cacheDir, "--quiet"}
	stdout, stderr, code := r2med(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	label := "some-model-7b"
	path := filepath.Join(data, "lamer", label, expand.FileName)
	if !strings.Contains(stdout, path) {
		t.Errorf("stdout %q does not name %s", stdout, path)
	}
	first := calls.Load()
	if first == 0 {
		t.Fatal("no requests")
	}
	// LameR prompts carry BM25 passages; the demo is exam-styled.
	if p := (*prompts)[0]; !strings.Contains(p, "Possible Relevant Passages: \n[1]. ") || !strings.Contains(p, "\nExam: ") || strings.Contains(p, "[11]. ") {
		t.Errorf("prompt %q", p)
	}
	gens, err := expand.LoadDir(data, expand.LameR, label)
	if err != nil {
		t.Fatal(err)
	}
	var fallbacks int
	for _, g := range gens {
		if g.HyDoc == g.Text {
			fallbacks++
		}
	}
	if fallbacks == 0 || fallbacks == len(gens) {
		t.Fatalf("%d of %d fallbacks; the fake server fails only prompts mentioning a cough", fallbacks, len(gens))
	}
	if !strings.Contains(stderr, "use their own text instead") {
		t.Errorf("%d fallbacks not reported: %s", fallbacks, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "lamer", label, expand.ManifestName)); err != nil {
		t.Error(err)
	}

	// A rerun asks only for what failed (empty answers are not cached).
	if _, stderr, code := r2med(t, "", args...); code != 0 {
		t.Fatalf("rerun exit %d: %s", code, stderr)
	}
	if got := calls.Load() - first; got != int64(fallbacks) {
		t.Errorf("rerun sent %d requests, want %d", got, fallbacks)
	}

	// r2med run uses the file like a published generation set.
	out := t.TempDir()
	if _, stderr, code := r2med(t, "", "run", "--data", data, "--gar", "lamer", "--gar-llm", label, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
}

func TestGarGenerateErrors(t *testing.T) {
	s, _, _ := fakeLLM(t)
	data := demoDir(t)
	t.Setenv("OPENAI_API_KEY", "wrong-key-000")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--llm-model", "m", "--data", data}, "--method is required"},
		{[]string{"--method", "rag", "--llm-model", "m", "--data", data}, "generation supports"},
		{[]string{"--method", "hyde", "--data", data}, "--llm-model is required"},
		{[]string{"--method", "hyde", "--llm-model", "m", "--task", "demo"}, "--out is required"},
		{[]string{"--method", "hyde", "--llm-model", "m", "--data", data, "--style", "poem"}, "unknown prompt style"},
		// Every query failing writes nothing and says why; the key stays out.
		{[]string{"--method", "hyde", "--llm-model", "m", "--data", data}, "no prompt style known"},
		{[]string{"--method", "hyde", "--llm-model", "m", "--data", data, "--style", "post"}, "needs a domain (--domain"},
		{[]string{"--method", "hyde", "--llm-model", "m", "--data", data, "--style", "exam", "--llm-base-url", s.URL}, "no query got a usable answer"},
	}
	for _, tc := range cases {
		args := append([]string{"gar", "generate", "--no-cache", "--quiet"}, tc.args...)
		_, stderr, code := r2med(t, "", args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(stderr, "wrong-key-000") {
			t.Errorf("the API key appears in %q", stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "hyde")); err == nil {
		t.Error("a failed generate left files behind")
	}
}

func TestGarTemplates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tmpl")
	stdout, stderr, code := r2med(t, "", "gar", "templates", "--out", dir)
	if code != 0 || strings.Count(stdout, "\n") != len(expand.TemplateFiles()) {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if _, err := expand.LoadPrompts(dir); err != nil {
		t.Error(err)
	}
}

func TestGarAgentic(t *testing.T) {
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var body struct {
			Messages []struct{ Role, Content string }
			Stop     []string
		}
		json.NewDecoder(r.Body).Decode(&body)
		content := "<answer>passage after reading the results</answer>"
		if len(body.Messages) == 2 {
			content = "Let me check. <search>fever rash joint pain"
		}
		if len(body.Stop) != 1 || body.Stop[0] != "</search>" {
			content = "stop sequence missing"
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}}}})
	}))
	defer s.Close()
	data := demoDir(t)
	t.Setenv("OPENAI_API_KEY", "")
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	os.WriteFile(prices, []byte("m: {input: 1, output: 4}\n"), 0o644)
	stdout, stderr, code := r2med(t, "", "gar", "generate", "--method", "search-r1", "--llm-model", "m", "--llm-name", "agent-llm",
		"--llm-base-url", s.URL, "--data", data, "--style", "exam", "--no-cache", "--quiet", "--prices", prices)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gens, err := expand.LoadDir(data, expand.SearchR1, "agent-llm")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		if g.HyDoc != "passage after reading the results" {
			t.Errorf("%s: hy_doc %q", g.ID, g.HyDoc)
		}
	}
	if calls.Load() != int64(2*len(gens)) {
		t.Errorf("%d requests for %d queries", calls.Load(), len(gens))
	}
	b, err := os.ReadFile(filepath.Join(data, expand.SearchR1, "agent-llm", expand.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Traces []struct {
			Steps []struct {
				Search    string
				Retrieved []string
			}
			Stop string
		}
		Usage struct {
			PromptTokens int    `json:"prompt_tokens"`
			Estimated    string `json:"estimated"`
		}
		EstimatedAnswers int `json:"estimated_answers"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Traces) != len(gens) {
		t.Fatalf("manifest traces: %v (%d)", err, len(m.Traces))
	}
	// The server counts no tokens: every turn's are estimated, and the
	// manifest and the output say so (they were counted as the server's,
	// prompts as 0 tokens), with what they cost.
	if m.Usage.Estimated != "utf8-bytes/4" || m.EstimatedAnswers != 2*len(gens) || m.Usage.PromptTokens == 0 {
		t.Errorf("manifest usage %+v, %d estimated answers, want %d", m.Usage, m.EstimatedAnswers, 2*len(gens))
	}
	if want := fmt.Sprintf("model calls: %d new (%d prompt", 2*len(gens), m.Usage.PromptTokens); !strings.Contains(stdout, want) || !strings.Contains(stdout, "are estimated (utf8-bytes/4") || !strings.Contains(stdout, "cost: $") {
		t.Errorf("gar generate's output lacks %q, the estimate or the cost:\n%s", want, stdout)
	}
	st := m.Traces[0].Steps[0]
	if m.Traces[0].Stop != "answer" || st.Search != "fever rash joint pain" || len(st.Retrieved) != 3 {
		t.Errorf("trace %+v", m.Traces[0])
	}
	if _, stderr, code := r2med(t, "", "run", "--data", data, "--gar", "search-r1", "--gar-llm", "agent-llm", "--out", t.TempDir(), "--quiet"); code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
}

// TestGarManifestServedModel: generation_manifest.json named the model
// asked for and never the one the server said answered (a dated version,
// a gateway's routing), which the summary printed; the manifest now names
// it as a run manifest's usage does (served), from the cache too.
func TestGarManifestServedModel(t *testing.T) {
	srv, calls := yesLoopback(t, map[string]any{"prompt_tokens": 10, "completion_tokens": 1}, "gpt-x-2025-01-31")
	data := demoDir(t)
	cacheDir := t.TempDir()
	for _, run := range []string{"first", "from the cache"} {
		mustRun(t, "gar", "generate", "--method", "hyde", "--llm-model", "gpt-x", "--llm-base-url", srv.URL+"/v1",
			"--data", data, "--style", "exam", "--cache", cacheDir, "--quiet")
		b, err := os.ReadFile(filepath.Join(data, "hyde", "gpt-x", expand.ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Model  string
			Served []string
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Model != "gpt-x" || strings.Join(m.Served, ",") != "gpt-x-2025-01-31" {
			t.Errorf("%s: the manifest names model %q, served %q; want gpt-x answered by gpt-x-2025-01-31", run, m.Model, m.Served)
		}
	}
	if n := calls.Load(); n != int64(len(mustLoadDemo(t).Queries)) {
		t.Errorf("%d requests; the rerun should answer from the cache", n)
	}
}
