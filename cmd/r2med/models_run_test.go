package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
)

// chatLoopback is a scripted OpenAI-compatible chat server for the demo
// task that knows its judgments. It answers
//   - a listwise prompt (insertrank, reasonrank, numbered passages) with
//     the passages ordered by their grade for the query, inside
//     <answer></answer> after some reasoning;
//   - a grouprank prompt (numbered passages, scores asked as "[1]": …)
//     with each passage's score by its grade (0 → 1, 1 → 6, 2 → 9), as
//     JSON inside <answer></answer>;
//   - a rank1 prompt ("Passage: …") with reasoning, then true for a
//     relevant passage and false for another;
//   - a query-reasoning prompt (gar reasoning) with reasoning that names
//     the query's answer, which its text only implies;
//
// and reports usage of 100 prompt and 20 completion tokens for every
// answer, so costs are known. It counts requests by model.
type chatLoopback struct {
	*httptest.Server
	task   *ir.Task
	byText map[string]string // a passage's words → doc id
	answer map[string]string // query id → the diagnosis the vignette implies
	mu     sync.Mutex
	calls  map[string]int // model → requests
	total  atomic.Int64
}

var numbered = regexp.MustCompile(`(?m)^\[(\d+)\] (?:\(retriever score: [^)]*\) )?(.*)$`)

func newChatLoopback(t *testing.T) *chatLoopback {
	c := &chatLoopback{task: demoTask(t), byText: map[string]string{}, answer: map[string]string{}, calls: map[string]int{}}
	for _, d := range c.task.Corpus {
		c.byText[strings.Join(strings.Fields(d.Text), " ")] = d.ID
	}
	for _, q := range c.task.Queries {
		var answer string
		json.Unmarshal(q.Extra["answer"], &answer)
		c.answer[q.ID] = answer
	}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *chatLoopback) requests(model string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[model]
}

func (c *chatLoopback) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string
		Messages []struct{ Content string }
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	c.total.Add(1)
	c.mu.Lock()
	c.calls[req.Model]++
	c.mu.Unlock()
	u := req.Messages[len(req.Messages)-1].Content
	qid := ""
	for _, q := range c.task.Queries {
		if strings.Contains(u, q.Text) {
			qid = q.ID
		}
	}
	if qid == "" {
		http.Error(w, "no query of the demo task in the prompt", http.StatusBadRequest)
		return
	}
	grade := c.task.Qrels[qid]
	var reasoning, content string
	switch {
	case strings.Contains(u, "\nPassage: "):
		doc := c.byText[strings.Join(strings.Fields(u[strings.Index(u, "\nPassage: ")+len("\nPassage: "):]), " ")]
		reasoning, content = "Weighing the passage against "+qid+".", "false"
		if grade[doc] > 0 {
			content = "true"
		}
	case numbered.MatchString(u) && strings.Contains(u, `"[1]":`):
		ms := numbered.FindAllStringSubmatch(u, -1)
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = fmt.Sprintf(`"[%d]": %d`, i+1, []int{1, 6, 9}[grade[c.byText[strings.Join(strings.Fields(m[2]), " ")]]])
		}
		reasoning, content = "Scored on one scale for "+qid+".", "<answer>\n```json\n{"+strings.Join(parts, ", ")+"}\n```\n</answer>"
	case numbered.MatchString(u):
		ms := numbered.FindAllStringSubmatch(u, -1)
		idx := make([]int, len(ms))
		for i := range idx {
			idx[i] = i
		}
		gradeOf := func(i int) int { return grade[c.byText[strings.Join(strings.Fields(ms[i][2]), " ")]] }
		slices.SortStableFunc(idx, func(a, b int) int { return gradeOf(b) - gradeOf(a) })
		parts := make([]string, len(idx))
		for i, j := range idx {
			parts[i] = fmt.Sprintf("[%d]", j+1)
		}
		reasoning, content = "The relevant passages come first.", "<answer>"+strings.Join(parts, " > ")+"</answer>"
	default:
		reasoning, content = "Thinking about "+qid+".", "The essential problem is a diagnosis: "+c.answer[qid]+"."
	}
	json.NewEncoder(w).Encode(map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content, "reasoning_content": reasoning}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

// refusingServer fails the test if anything reaches it.
func refusingServer(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a replayed run sent %s %s", r.Method, r.URL.Path)
		http.Error(w, "replay must not call", http.StatusTeapot)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// usageOf reads a run's manifest usage.
func usageOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	var m struct{ Usage map[string]any }
	if err := json.Unmarshal([]byte(readFileString(t, filepath.Join(dir, results.ManifestFile))), &m); err != nil {
		t.Fatal(err)
	}
	return m.Usage
}

func ndcg10(t *testing.T, dir string) float64 {
	t.Helper()
	res, err := results.ReadR2MED(filepath.Join(dir, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := res.Metric("ndcg_at_10")
	return v
}

// TestRunReasoningRerankers runs R2MED's BM25 on the demo task and
// reranks its top 10 with each reasoning reranker through `r2med run`
// against the scripted server: the run improves on BM25, every answer
// is counted in the manifest (the reranker's counts as rerank_*, usage
// in tokens, seconds and dollars by --prices, in total and per query),
// the templated reranker's settings are part of the recorded settings,
// the cache entries the run used are listed beside the manifest, and a
// second run into another directory asks nothing and reports the same
// cost as cached.
func TestRunReasoningRerankers(t *testing.T) {
	srv := newChatLoopback(t)
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(prices, []byte("r1: {input: 2.00, output: 8.00}\n"), 0o644)
	bm25 := filepath.Join(dir, "bm25")
	mustRun(t, "run", "--task", "demo", "--out", bm25, "--quiet")
	base := ndcg10(t, bm25)
	queries := len(srv.task.Queries)

	for _, c := range []struct {
		kind  string
		calls int // per query at depth 10: one window, or one call per passage
		extra []string
		plain int // per query without extra: the prompts it changes
	}{
		{"insertrank", 1, []string{"--insertrank-decimals", "3"}, 1},
		{"reasonrank", 1, nil, 0},
		{"rank1", 10, []string{"--rerank-text-only"}, 10},
		{"grouprank", 4, []string{"--grouprank-size", "5"}, 2}, // 2 groups × 2 passes; without: 1 group × 2
		// rank1's 10 and reasonrank's window; the weight changes the
		// ranking, not the prompts: the answers come from the cache.
		{"diver", 11, []string{"--merge-weight", "0.7"}, 0},
	} {
		t.Run(c.kind, func(t *testing.T) {
			model := "r1"
			out := filepath.Join(dir, c.kind)
			cacheDir := filepath.Join(cacheDir, c.kind) // diver asks what rank1 and reasonrank asked
			before := srv.total.Load()
			args := append([]string{"run", "--task", "demo", "--retriever", "bm25", "--rerank", c.kind, "--rerank-model", model,
				"--rerank-url", srv.URL + "/v1", "--rerank-depth", "10", "--cache", cacheDir, "--prices", prices, "--out", out, "--quiet"}, c.extra...)
			mustRun(t, args...)
			calls := int(srv.total.Load() - before)
			if calls != c.calls*queries {
				t.Errorf("%d requests, want %d", calls, c.calls*queries)
			}
			if got := ndcg10(t, out); !(got > base) {
				t.Errorf("nDCG@10 %v after reranking, %v before", got, base)
			}
			m := readManifest(t, out)
			if m.Counts["rerank_llm_calls"] != calls || m.Counts["rerank_prompt_tokens"] != 100*calls || m.Counts["rerank_completion_tokens"] != 20*calls {
				t.Errorf("counts %v", m.Counts)
			}
			if _, ok := m.Counts["rerank_no_reasoning"]; !ok {
				t.Errorf("not every rerank count is in the manifest: %v", m.Counts)
			}
			rr, _ := m.Config["rerank"].(map[string]any)
			settings, _ := rr["settings"].(map[string]any)
			prompted := settings
			if c.kind == "diver" {
				prompted, _ = settings["pointwise"].(map[string]any)
				if listwise, _ := settings["listwise"].(map[string]any); settings["weight"] != 0.7 || prompted["kind"] != "rank1" || listwise["kind"] != "reasonrank" {
					t.Errorf("diver settings %v", settings)
				}
			}
			if rr["kind"] != c.kind || prompted["prompts_sha256"] == nil {
				t.Errorf("rerank settings %v", rr)
			}
			if c.kind == "grouprank" && (settings["group_size"] != 5.0 || settings["repeats"] != 2.0) {
				t.Errorf("grouprank settings %v", settings)
			}
			if c.kind == "insertrank" && settings["decimals"] != 3.0 {
				t.Errorf("insertrank decimals %v", settings["decimals"])
			}
			if c.kind == "rank1" && settings["logprobs"] != false {
				t.Errorf("rank1 logprobs %v", settings["logprobs"])
			}
			u := m.Usage
			usd := (float64(100*calls)*2 + float64(20*calls)*8) / 1e6
			if u == nil || u.Calls != int64(calls) || u.PromptTokens != int64(100*calls) || u.CompletionTokens != int64(20*calls) || u.USD == nil || !near(*u.USD, usd) {
				t.Fatalf("usage %+v, want %d calls costing %v", u, calls, usd)
			}
			if u.PerQuery == nil || u.Queries != queries || !near(u.PerQuery.PromptTokens, float64(100*calls)/float64(queries)) || !near(*u.PerQuery.USD, usd/float64(queries)) {
				t.Errorf("per query %+v", u.PerQuery)
			}
			keys, err := cache.ReadKeys(filepath.Join(out, cache.KeysFile))
			if err != nil || len(keys) != calls || keys[0].Bucket != "generate/"+model {
				t.Errorf("cache keys: %d (%v), want %d", len(keys), err, calls)
			}

			// The same pipeline elsewhere: nothing asked, the cost reported
			// as cached.
			again := filepath.Join(dir, c.kind+"-again")
			before = srv.total.Load()
			mustRun(t, append(slices.Clone(args), "--out", again)...)
			if n := srv.total.Load() - before; n != 0 {
				t.Errorf("the second run asked %d times", n)
			}
			u2 := readManifest(t, again).Usage
			if u2.Calls != 0 || u2.Cached.Calls != int64(calls) || u2.CachedUSD == nil || !near(*u2.CachedUSD, usd) || !near(*u2.PerQuery.USD, usd/float64(queries)) {
				t.Errorf("second run's usage %+v", u2)
			}
			if readFileString(t, filepath.Join(again, results.RunFile)) != readFileString(t, filepath.Join(out, results.RunFile)) {
				t.Error("the second run ranked otherwise")
			}
			if c.extra == nil {
				return
			}
			// Without the reranker's own setting, the run has other
			// settings: a run into the first run's directory is refused,
			// and one elsewhere asks again what the setting changed.
			plain := args[:len(args)-len(c.extra)]
			if _, stderr, code := r2med(t, "", plain...); code == 0 || !strings.Contains(stderr, "other settings") {
				t.Errorf("a run with other reranker settings into %s: exit %d, %s", out, code, stderr)
			}
			before = srv.total.Load()
			mustRun(t, append(slices.Clone(plain), "--out", filepath.Join(dir, c.kind+"-plain"))...)
			if n := srv.total.Load() - before; n != int64(c.plain*queries) {
				t.Errorf("without %v: %d requests, want %d", c.extra, n, c.plain*queries)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestRunGarReasoningGenerated generates BRIGHT-style query reasoning in
// the run (--gar reasoning --gar-model, a fleet of two URLs for the one
// server) and retrieves with it: the reasoning names what the vignettes
// only imply, so BM25 improves; the answers are counted in the manifest.
// A pipeline file's expand: {method: reasoning, mode: append} reads the
// same answers (one generation set for both modes) and asks nothing.
// `r2med gar generate --method reasoning` writes the set R2MED's way.
func TestRunGarReasoningGenerated(t *testing.T) {
	srv := newChatLoopback(t)
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	bm25 := filepath.Join(dir, "bm25")
	mustRun(t, "run", "--task", "demo", "--out", bm25, "--quiet")
	queries := len(srv.task.Queries)
	// The same server under two names: a fleet of two.
	servers := filepath.Join(dir, "servers.txt")
	os.WriteFile(servers, []byte("# the LLM fleet\n"+strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/v1\n"), 0o644)

	out := filepath.Join(dir, "reasoning")
	mustRun(t, "run", "--task", "demo", "--gar", "reasoning", "--gar-model", "g1", "--gar-base-url", srv.URL+"/v1", "--gar-base-url", servers,
		"--gar-llm", "g1", "--gar-style", "case", "--cache", cacheDir, "--out", out, "--quiet")
	if n := srv.requests("g1"); n != queries {
		t.Errorf("%d requests for %d queries", n, queries)
	}
	if got, base := ndcg10(t, out), ndcg10(t, bm25); !(got > base) {
		t.Errorf("nDCG@10 %v with query reasoning, %v without", got, base)
	}
	m := readManifest(t, out)
	gen, _ := m.Config["generate"].(map[string]any)
	if m.Config["gar_method"] != "reasoning" || gen["method"] != "reasoning" || m.Counts["generations_requested"] != queries {
		t.Errorf("config %v, counts %v", m.Config, m.Counts)
	}
	if u := m.Usage; u == nil || u.Calls != int64(queries) || u.PromptTokens != int64(100*queries) || u.USD != nil || len(u.Models) != 1 || u.Models[0].Kind != "generate" {
		t.Errorf("usage %+v", m.Usage)
	}

	file := filepath.Join(dir, "append.yaml")
	os.WriteFile(file, []byte(`expand:
  method: reasoning
  mode: append
  llm: g1
  generate: {model: g1, base_url: [`+srv.URL+`/v1], style: case}
retrieve: [{bm25: {}}]
`), 0o644)
	appended := filepath.Join(dir, "append")
	mustRun(t, "run", "--task", "demo", "--pipeline", file, "--cache", cacheDir, "--out", appended, "--quiet")
	if n := srv.requests("g1"); n != queries {
		t.Errorf("the appended mode asked again: %d requests", n-queries)
	}
	if m := readManifest(t, appended); m.Config["gar_method"] != "reasoning-append" || m.Usage.Cached.Calls != int64(queries) {
		t.Errorf("append mode: %v, usage %+v", m.Config["gar_method"], m.Usage)
	}
	if ndcg10(t, appended) == ndcg10(t, out) {
		t.Error("replacing and appending ranked alike")
	}
	os.WriteFile(file, []byte("expand: {method: hyde, mode: append, llm: g1}\nretrieve: [{bm25: {}}]\n"), 0o644)
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--pipeline", file, "--out", filepath.Join(dir, "x")); code == 0 || !strings.Contains(stderr, "line 1: mode: is query reasoning's") {
		t.Errorf("mode with hyde: exit %d, %s", code, stderr)
	}

	data := demoDir(t)
	stdout := mustRun(t, "gar", "generate", "--method", "reasoning", "--llm-model", "g1", "--llm-base-url", srv.URL+"/v1",
		"--llm-name", "g1", "--data", data, "--style", "case", "--cache", cacheDir, "--quiet")
	if !strings.Contains(stdout, fmt.Sprintf("%d answers from the cache, 0 requested", queries)) {
		t.Errorf("gar generate: %s", stdout)
	}
	if _, err := os.Stat(filepath.Join(data, "reasoning", "g1", "query_with_hydoc.jsonl")); err != nil {
		t.Error(err)
	}
}

// TestCostBesideQualityCLI: R2MED's BM25 (no model called) and the same
// run reranked with insertrank at a price: the leaderboard shows each
// one's cost per query beside its scores, in every format; compare lists
// the cost under its tests; the report plots quality against cost with
// the Pareto front, both systems on it.
func TestCostBesideQualityCLI(t *testing.T) {
	srv := newChatLoopback(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "results")
	t.Setenv("R2MED_RESULTS", root)
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(prices, []byte("r1: {input: 2.00, output: 8.00}\n"), 0o644)
	mustRun(t, "run", "--task", "demo", "--quiet")
	mustRun(t, "run", "--task", "demo", "--rerank", "insertrank", "--rerank-model", "r1", "--rerank-url", srv.URL+"/v1", "--rerank-depth", "10",
		"--cache", filepath.Join(dir, "cache"), "--prices", prices, "--quiet")
	usd := (100*2 + 20*8) / 1e6 // one window per query

	stdout := mustRun(t, "leaderboard", "--no-published", "--no-external")
	if !regexp.MustCompile(regexp.QuoteMeta(fmt.Sprint(usd)) + ` +120 `).MatchString(stdout) {
		t.Errorf("leaderboard:\n%s", stdout)
	}
	var board struct {
		Rows []struct {
			Name string
			Cost *struct {
				USD                            *float64
				PromptTokens, CompletionTokens float64
			}
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, "leaderboard", "--no-published", "--no-external", "--format", "json")), &board); err != nil {
		t.Fatal(err)
	}
	costs := map[string]float64{}
	for _, r := range board.Rows {
		if r.Cost == nil || r.Cost.USD == nil {
			t.Fatalf("%s has no cost: %+v", r.Name, r.Cost)
		}
		costs[r.Name] = *r.Cost.USD
	}
	if costs["bm25"] != 0 || !near(costs["bm25 → insertrank:r1@10"], usd) {
		t.Errorf("costs %v", costs)
	}

	stdout = mustRun(t, "compare", filepath.Join(root, "bm25", "demo"), filepath.Join(root, results.DirName("bm25 → insertrank:r1@10"), "demo"))
	if !strings.Contains(stdout, "Cost per query of the model calls") || !strings.Contains(stdout, fmt.Sprintf("%g    120", usd)) {
		t.Errorf("compare:\n%s", stdout)
	}

	page := filepath.Join(dir, "report.html")
	mustRun(t, "report", "--out", page)
	html := readFileString(t, page)
	if !strings.Contains(html, `id="cost-figure"`) || !strings.Contains(html, "Pareto front, the systems no other beats on both: bm25, bm25 → insertrank:r1@10") {
		t.Errorf("report: the quality-against-cost chart is missing or its front is wrong")
	}
}
