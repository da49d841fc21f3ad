package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/plan"
	costs "github.com/r2med/r2med/usage"
)

// yesLoopback is a chat server answering every prompt "Yes" (a pointwise
// reranker's answer) with usage as the JSON object use (nil: no usage
// field), and naming itself served in its answers' "model" (empty: the
// model asked for).
func yesLoopback(t *testing.T, use map[string]any, served string) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		model := served
		if model == "" {
			model = req.Model
		}
		ans := map[string]any{"model": model, "choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "Yes"}, "finish_reason": "stop"}}}
		if use != nil {
			ans["usage"] = use
		}
		json.NewEncoder(w).Encode(ans)
	}))
	t.Cleanup(s.Close)
	return s, &calls
}

// costRun reranks the demo task's BM25 top 5 with llm-pointwise against
// url, priced by prices, into dir/out; it returns dir/out and what the
// run printed.
func costRun(t *testing.T, dir, out, url, prices string, extra ...string) (string, string) {
	t.Helper()
	p := filepath.Join(dir, "prices.yaml")
	os.WriteFile(p, []byte(prices), 0o644)
	o := filepath.Join(dir, out)
	stdout := mustRun(t, append([]string{"run", "--task", "demo", "--rerank", "llm-pointwise", "--rerank-model", "gpt-x", "--rerank-url", url + "/v1",
		"--rerank-depth", "5", "--cache", filepath.Join(dir, "cache"), "--prices", p, "--out", o, "--quiet"}, extra...)...)
	return o, stdout
}

// TestCostUsageWithoutCounts: a server that sends a usage object without
// token counts ({}: some gateways and local servers do) reported no
// tokens and $0 for the calls it answered, where a rerun from the cache
// estimated them and said so; the calls' tokens are now estimated when
// made, and the manifest says so: both runs cost the same.
func TestCostUsageWithoutCounts(t *testing.T) {
	srv, calls := yesLoopback(t, map[string]any{}, "")
	dir := t.TempDir()
	o, stdout := costRun(t, dir, "first", srv.URL, "gpt-x: {input: 2.5, output: 10}\n")
	first := readManifest(t, o).Usage
	if first == nil || first.Calls != calls.Load() || first.PromptTokens == 0 || first.CompletionTokens == 0 || first.Estimated == "" || first.USD == nil || *first.USD <= 0 {
		t.Fatalf("new calls without token counts: %+v", first)
	}
	// The run's summary says what the calls cost, and that the tokens
	// are estimated.
	for _, want := range []string{
		fmt.Sprintf("model calls: %d new (%d prompt + %d completion tokens), 0 answered from the cache", first.Calls, first.PromptTokens, first.CompletionTokens),
		fmt.Sprintf("the tokens of %d of the %d are estimated (utf8-bytes/4", first.Calls, first.Calls),
		"cost: " + costs.USDText(*first.USD) + " new, $0 of answers from the cache",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the run's summary lacks %q:\n%s", want, stdout)
		}
	}
	o, stdout = costRun(t, dir, "again", srv.URL, "gpt-x: {input: 2.5, output: 10}\n")
	again := readManifest(t, o).Usage
	if !strings.Contains(stdout, "cost: $0 new, "+costs.USDText(*first.USD)+" of answers from the cache at their cost when made") {
		t.Errorf("the rerun's summary:\n%s", stdout)
	}
	if again.Calls != 0 || again.Cached.PromptTokens != first.PromptTokens || again.CachedUSD == nil || *again.CachedUSD != *first.USD {
		t.Errorf("the rerun from the cache costs otherwise: %+v, first %+v", again, first)
	}
}

// TestCostServerPromptCache: the server's prompt cache (OpenAI's
// prompt_tokens_details.cached_tokens, billed at the cached-input rate)
// and reasoning tokens (completion_tokens_details.reasoning_tokens, part
// of the completion) are recorded, cached prompt tokens are priced at a
// table's cached_input rate, and the model the server answered with is
// named beside the one asked for.
func TestCostServerPromptCache(t *testing.T) {
	use := map[string]any{"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
		"prompt_tokens_details": map[string]any{"cached_tokens": 800}, "completion_tokens_details": map[string]any{"reasoning_tokens": 40}}
	srv, calls := yesLoopback(t, use, "gpt-x-2025-01-31")
	dir := t.TempDir()
	o, stdout := costRun(t, dir, "run", srv.URL, "gpt-x: {input: 2.5, cached_input: 1.25, output: 10}\n")
	if !strings.Contains(stdout, "; gpt-x was answered by gpt-x-2025-01-31") {
		t.Errorf("the summary does not name the model that answered:\n%s", stdout)
	}
	u := readManifest(t, o).Usage
	n := calls.Load()
	want := float64(n) * (200*2.5 + 800*1.25 + 50*10) / 1e6
	if u == nil || u.Calls != n || u.PromptTokens != 1000*n || u.CachedPromptTokens != 800*n || u.ReasoningTokens != 40*n || u.USD == nil || !near(*u.USD, want) {
		t.Fatalf("usage %+v (usd %v), want %d calls costing %v with %d cached prompt tokens", u, deref(u.USD), n, want, 800*n)
	}
	if len(u.Models) != 1 || strings.Join(u.Models[0].Served, ",") != "gpt-x-2025-01-31" {
		t.Errorf("the model that answered is not named: %+v", u.Models)
	}
	// Without a cached_input rate, cached prompt tokens cost the input
	// rate (what the table says), and the manifest says so.
	o, stdout = costRun(t, dir, "plain", srv.URL, "gpt-x: {input: 2.5, output: 10}\n", "--no-cache")
	u = readManifest(t, o).Usage
	if !strings.Contains(stdout, "prompt tokens gpt-x read from its prompt cache are priced at the input rate") {
		t.Errorf("the summary does not say how cached prompt tokens were priced:\n%s", stdout)
	}
	if want := float64(n) * (1000*2.5 + 50*10) / 1e6; u.USD == nil || !near(*u.USD, want) || !strings.Contains(strings.Join(u.Notes, " "), "cached_input") {
		t.Errorf("without cached_input: usd %v, want %v; notes %q", deref(u.USD), want, u.Notes)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestCostResumedRerank: a rerank interrupted after some queries and
// resumed: the run's usage counts both attempts' calls, the rerank_*
// counts and the stage times this attempt's; the manifest
// (rerank_resumed_queries) and the summary now say how many queries the
// earlier attempt did, where the two counts of calls disagreed unsaid.
func TestCostResumedRerank(t *testing.T) {
	srv := newChatLoopback(t)
	flaky, fail := refusingLastQuery(t, srv)
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	args := []string{"run", "--task", "demo", "--rerank", "reasonrank", "--rerank-model", "r1", "--rerank-url", flaky.URL + "/v1",
		"--rerank-depth", "10", "--retries", "0", "--cache", filepath.Join(dir, "cache"), "--out", out, "--quiet"}
	if _, _, code := r2med(t, "", args...); code == 0 {
		t.Fatal("the first attempt should fail on the last query")
	}
	fail.Store(false)
	stdout := mustRun(t, args...)
	m := readManifest(t, out)
	queries := len(srv.task.Queries)
	n := m.Counts[plan.ResumedQueries]
	if n == 0 || n >= queries || m.Counts["rerank_llm_calls"] != queries-n || m.Usage.Calls+m.Usage.Cached.Calls != int64(queries) {
		t.Errorf("%d queries resumed, rerank_llm_calls %d, usage %d new + %d cached: want the resumed queries counted, the attempt's calls beside them, and every query's call in the usage",
			n, m.Counts["rerank_llm_calls"], m.Usage.Calls, m.Usage.Cached.Calls)
	}
	if want := fmt.Sprintf("resumed: %d queries were reranked by an interrupted attempt: the model calls below count its calls too", n); !strings.Contains(stdout, want) {
		t.Errorf("the summary does not say the run was resumed (%q):\n%s", want, stdout)
	}
}

// TestCostRetriedCallCountedOnce: a call the server first refused with a
// 503 and answered on the retry (the run's first) is counted once, with the answer's
// tokens (providers bill no 429 or 5xx), and its seconds include the
// wait.
func TestCostRetriedCallCountedOnce(t *testing.T) {
	use := map[string]any{"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}
	ok, answered := yesLoopback(t, use, "")
	var sent atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sent.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		resp, err := http.Post(ok.URL+r.URL.Path, "application/json", r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	}))
	defer flaky.Close()
	dir := t.TempDir()
	o, _ := costRun(t, dir, "run", flaky.URL, "gpt-x: {input: 1, output: 1}\n", "--rerank-depth", "1")
	u := readManifest(t, o).Usage
	n := answered.Load()
	if sent.Load() != n+1 || u.Calls != n || u.PromptTokens != 100*n || u.USD == nil || !near(*u.USD, float64(101*n)/1e6) {
		t.Errorf("%d requests sent, %d answered; usage %+v", sent.Load(), n, u)
	}
}

// TestCostRerankFromCache: r2med rerank answered wholly from the cache
// called its answers "calls this run", beside its cost line saying $0
// new; the line counts answers, from the cache or not.
func TestCostRerankFromCache(t *testing.T) {
	srv, calls := yesLoopback(t, map[string]any{"prompt_tokens": 10, "completion_tokens": 1}, "")
	dir := t.TempDir()
	bm25 := filepath.Join(dir, "bm25")
	mustRun(t, "run", "--task", "demo", "--out", bm25, "--quiet")
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(prices, []byte("gpt-x: {input: 1000, output: 1000}\n"), 0o644)
	args := func(out string) []string {
		return []string{"rerank", "--task", "demo", "--run", filepath.Join(bm25, "run.trec"), "--rerank", "llm-pointwise", "--rerank-model", "gpt-x",
			"--rerank-url", srv.URL + "/v1", "--rerank-depth", "2", "--cache", filepath.Join(dir, "cache"), "--prices", prices, "--out", filepath.Join(dir, out), "--quiet", "--no-eval"}
	}
	mustRun(t, args("a.trec")...)
	n := calls.Load()
	stdout := mustRun(t, args("b.trec")...)
	if calls.Load() != n || strings.Contains(stdout, "calls this run") || !strings.Contains(stdout, fmt.Sprintf("LLM answers (%d, from the cache or not)", n)) ||
		!strings.Contains(stdout, fmt.Sprintf("cost: $0 new, %s of answers from the cache", costs.USDText(float64(11*n)*1000/1e6))) {
		t.Errorf("a rerank from the cache (%d answers):\n%s", n, stdout)
	}
}

// TestRerankManifestSampling: a run manifest's rerank named the kind,
// model and depth of an llm-pointwise or llm-listwise rerank, and
// neither the prompt nor the sampling it asked with (the reasoning
// rerankers' their templates' digest, and no temperature); every LLM
// reranker's settings now say temperature 0 (greedy, no seed), and the
// built-in ones their prompt and knobs.
func TestRerankManifestSampling(t *testing.T) {
	srv, _ := yesLoopback(t, nil, "")
	dir := t.TempDir()
	for _, kind := range []string{"llm-pointwise", "llm-listwise", "rank1"} {
		o := filepath.Join(dir, kind)
		mustRun(t, "run", "--task", "demo", "--rerank", kind, "--rerank-model", "m", "--rerank-url", srv.URL+"/v1",
			"--rerank-depth", "3", "--cache", filepath.Join(dir, "cache"), "--out", o, "--quiet")
		rr, _ := readManifest(t, o).Config["rerank"].(map[string]any)
		settings, _ := rr["settings"].(map[string]any)
		if settings == nil || settings["temperature"] != float64(0) {
			t.Errorf("%s: the manifest's rerank %v says no temperature", kind, rr)
			continue
		}
		if _, seed := settings["seed"]; seed {
			t.Errorf("%s: a seed recorded, none is sent: %v", kind, settings)
		}
		prompt := map[string]string{"llm-pointwise": "prompt", "llm-listwise": "prompt_sha256", "rank1": "prompts_sha256"}[kind]
		if s, _ := settings[prompt].(string); s == "" {
			t.Errorf("%s: the manifest's rerank settings %v record no %s", kind, settings, prompt)
		}
	}
}
