package usage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestMeterConcurrentAndNil(t *testing.T) {
	var m Meter
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				m.Add("generate", "gpt", Usage{PromptTokens: 3, CompletionTokens: 2, Seconds: 0.5}, i%2 == 0)
			}
		}()
	}
	wg.Wait()
	l := m.Lines()
	if len(l) != 1 || l[0].New.Calls != 4000 || l[0].Cached.Calls != 4000 || l[0].New.PromptTokens != 12000 || l[0].Cached.CompletionTokens != 8000 {
		t.Errorf("lines %+v", l)
	}
	var nilMeter *Meter
	nilMeter.Add("x", "y", Usage{PromptTokens: 1}, false) // no panic
	if nilMeter.Lines() != nil {
		t.Error("nil meter has lines")
	}
}

func TestSummary(t *testing.T) {
	var m Meter
	m.Add("generate", "gpt-4o", Usage{PromptTokens: 1_000_000, CompletionTokens: 200_000, Seconds: 3}, false)
	m.Add("generate", "gpt-4o", Usage{PromptTokens: 500_000, CompletionTokens: 100_000, Seconds: 1.5}, true)
	m.Add("embed", "text-embedding-3-large", Usage{PromptTokens: 2_000_000, Seconds: 4, Estimated: Estimator}, false)
	prices := Prices{"gpt-4o": {Input: 2.5, Output: 10}, "text-embedding-3-large": {Input: 0.13}}
	s := m.Summary(10, prices)
	if s.PromptTokens != 3_000_000 || s.CompletionTokens != 200_000 || s.Seconds != 7 || s.Calls != 2 {
		t.Errorf("new totals %+v", s)
	}
	if s.Cached.PromptTokens != 500_000 || s.Cached.Calls != 1 {
		t.Errorf("cached %+v", s.Cached)
	}
	// new: 2.5 + 2 + 0.26 = 4.76; cached: 1.25 + 1 = 2.25
	if s.USD == nil || *s.USD != 4.76 || s.CachedUSD == nil || *s.CachedUSD != 2.25 {
		t.Errorf("usd %v cached %v", deref(s.USD), deref(s.CachedUSD))
	}
	pq := s.PerQuery
	if pq == nil || pq.PromptTokens != 350_000 || pq.CompletionTokens != 30_000 || pq.Seconds != 0.85 || pq.USD == nil || *pq.USD != 0.701 {
		t.Errorf("per query %+v usd %v", pq, deref(pq.USD))
	}
	if s.Estimated != Estimator || len(s.Models) != 2 || s.Models[0].Kind != "embed" {
		t.Errorf("summary %+v", s)
	}
	b, _ := json.Marshal(s)
	for _, k := range []string{`"prompt_tokens":3000000`, `"completion_tokens":200000`, `"seconds":7`, `"per_query":{`, `"usd":4.76`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("manifest JSON lacks %s: %s", k, b)
		}
	}
	// A model without a price: no money figures, and the model is named.
	s = m.Summary(0, Prices{"gpt-4o": {Input: 1}})
	if s.USD != nil || s.PerQuery != nil || len(s.Unpriced) != 1 || s.Unpriced[0] != "text-embedding-3-large" {
		t.Errorf("unpriced %+v", s)
	}
	// The default entry prices the rest.
	s = m.Summary(0, Prices{"gpt-4o": {Input: 1}, "*": {}})
	if s.USD == nil || *s.USD != 1 {
		t.Errorf("default price: %v", deref(s.USD))
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestParsePrices(t *testing.T) {
	p, err := ParsePrices([]byte("# $ per 1M tokens\ngpt-4o: {input: 2.50, output: 10}\n\"Qwen/Qwen2.5-7B-Instruct\":\n  input: $0.2\n  output: 0.2\ntext-embedding-3-large: {input: 0.13}\n"), "prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p["gpt-4o"] != (Price{Input: 2.5, Output: 10}) || p["Qwen/Qwen2.5-7B-Instruct"] != (Price{Input: 0.2, Output: 0.2}) || p["text-embedding-3-large"] != (Price{Input: 0.13}) {
		t.Errorf("prices %+v", p)
	}
	if pr, ok := p.Lookup("GPT-4O"); !ok || pr.Input != 2.5 {
		t.Error("lookup ignoring case")
	}
	if _, ok := p.Lookup("unknown"); ok {
		t.Error("unknown model priced")
	}
	for src, want := range map[string]string{
		"gpt-4o: {input: 2, outptu: 3}\n": `prices.yaml:1: "gpt-4o": unknown key "outptu"`,
		"a: {input: 1}\nb: {input: -1}\n": `prices.yaml:2: "b": input is "-1"; want a non-negative number`,
		"a: {input: 1}\na: {input: 2}\n":  `prices.yaml:2: model "a" is priced twice`,
		// Lookup ignores case: which of the two priced GPT-4o was chance.
		"gpt-4o: {input: 1}\nGPT-4o: {input: 2}\n": `prices.yaml:2: model "GPT-4o" is priced twice: "gpt-4o" differs only in case`,
		"gpt-4o: {input: 1, cached_input: -1}\n":   `"gpt-4o": cached_input is "-1"`,
		"a: 3\n":                                   `prices.yaml:1: "a": want {input: DOLLARS, output: DOLLARS}`,
		"- a\n":                                    `prices.yaml:1: a price table maps model names`,
		"a: {}\n":                                  `prices.yaml:1: "a": no price given`,
		"a: {input: cheap}\n":                      `input is "cheap"`,
		"a: {input: 1, input: 2}\n":                `prices.yaml:1:`,
		"a: {input: 1}\n\tb: [\n":                  `prices.yaml:`,
	} {
		_, err := ParsePrices([]byte(src), "prices.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", src, err, want)
		}
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte("m: {output: 1.5}\n"), 0o644)
	if p, err := ReadPrices(path); err != nil || p["m"].Output != 1.5 {
		t.Errorf("ReadPrices %v %v", p, err)
	}
	if _, err := ReadPrices(path + ".missing"); err == nil || !strings.Contains(err.Error(), "price table") {
		t.Errorf("missing file: %v", err)
	}
}

// TestMerge: a stage's meter adds to the run's as it was; a stage reused
// from disk adds all its calls as cached, so the run reports what the
// pipeline costs and that it spent nothing new on that stage.
func TestMerge(t *testing.T) {
	var stage Meter
	stage.Add("embed", "bge", Usage{PromptTokens: 10, Seconds: 1}, false)
	stage.Add("embed", "bge", Usage{PromptTokens: 5, Seconds: 2}, true)
	var run Meter
	run.Add("embed", "bge", Usage{PromptTokens: 1}, false)
	run.Merge(stage.Lines(), false)
	l := run.Lines()
	if len(l) != 1 || l[0].New.Calls != 2 || l[0].New.PromptTokens != 11 || l[0].Cached.Calls != 1 || l[0].Cached.PromptTokens != 5 {
		t.Errorf("merged: %+v", l)
	}
	var reused Meter
	reused.Merge(stage.Lines(), true)
	reused.Merge([]Line{{Kind: "generate", Model: "gpt", New: Tally{Calls: 1, CompletionTokens: 7}}}, true)
	l = reused.Lines()
	if len(l) != 2 || l[0].New.Calls != 0 || l[0].Cached.Calls != 2 || l[0].Cached.PromptTokens != 15 || l[0].Cached.Seconds != 3 || l[1].Cached.CompletionTokens != 7 {
		t.Errorf("reused: %+v", l)
	}
	if s := reused.Summary(1, nil); s.Calls != 0 || s.Cached.Calls != 3 {
		t.Errorf("summary of a reused stage: %+v", s)
	}
	var nilMeter *Meter
	nilMeter.Merge(l, false) // no panic
}

// TestCostOf: a system's cost per query over its runs is each run's
// per-query mean weighted by its queries; dollars only when every run
// that called a model was priced; a run without usage is left out.
func TestCostOf(t *testing.T) {
	var a, b, free Meter
	a.Add("generate", "gpt", Usage{PromptTokens: 1000, CompletionTokens: 100, Seconds: 2}, false)
	b.Add("generate", "gpt", Usage{PromptTokens: 4000, CompletionTokens: 400, Seconds: 4}, true)
	prices := Prices{"gpt": {Input: 1, Output: 10}}
	sa, sb, sf := a.Summary(10, prices), b.Summary(30, prices), free.Summary(20, nil)
	c, ok := CostOf([]*Summary{&sa, &sb, nil, &sf})
	if !ok || c.Runs != 3 || c.Queries != 60 || !near6(c.PromptTokens, 5000.0/60) || !near6(c.CompletionTokens, 500.0/60) || !near6(c.Seconds, 0.1) {
		t.Fatalf("cost %+v", c)
	}
	// $0.002 for a's calls, $0.008 for b's (cached, at their cost when made).
	if c.USD == nil || !near6(*c.USD, 0.01/60) || !near6(c.Tokens(), 5500.0/60) {
		t.Errorf("usd %v", c.USD)
	}
	unpriced := a.Summary(10, nil)
	if c, _ := CostOf([]*Summary{&sa, &unpriced}); c.USD != nil {
		t.Errorf("a run without prices still gave dollars: %v", *c.USD)
	}
	if c, ok := CostOf([]*Summary{&sf}); !ok || c.USD == nil || *c.USD != 0 || c.Seconds != 0 {
		t.Errorf("a run with no calls: %+v %v", c, ok)
	}
	if _, ok := CostOf([]*Summary{nil}); ok {
		t.Error("no usage gave a cost")
	}
}

func near6(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// TestSmallDollarsKept: figures were rounded to 6 decimals, so a query
// embedded with text-embedding-3-small ($0.02 per million tokens) for
// 20 tokens cost $0 in the manifest and $0 a query on the leaderboard;
// below 1 they keep 6 significant digits.
func TestSmallDollarsKept(t *testing.T) {
	var m Meter
	m.Add("embed", "text-embedding-3-small", Usage{PromptTokens: 20, Seconds: 0.0000012}, false)
	s := m.Summary(1, Prices{"text-embedding-3-small": {Input: 0.02}})
	if s.USD == nil || *s.USD != 4e-7 || s.PerQuery.USD == nil || *s.PerQuery.USD != 4e-7 || s.Seconds != 0.0000012 {
		t.Errorf("usd %v per query %v seconds %v", deref(s.USD), deref(s.PerQuery.USD), s.Seconds)
	}
	if c, _ := CostOf([]*Summary{&s}); c.USD == nil || *c.USD != 4e-7 {
		t.Errorf("cost per query %+v", c)
	}
}

// TestCachedInputRate: prompt tokens a server read from its prompt cache
// cost the table's cached_input rate, or the input rate when it gives
// none (and the summary says so); the names a server answered with are
// kept per line.
func TestCachedInputRate(t *testing.T) {
	p, err := ParsePrices([]byte("gpt-4o: {input: 2.5, cached_input: 1.25, output: 10}\nmini: {input: 1}\n"), "prices.yaml")
	if err != nil || p["gpt-4o"].CachedInput == nil || *p["gpt-4o"].CachedInput != 1.25 || p["mini"].CachedInput != nil {
		t.Fatalf("prices %+v, %v", p, err)
	}
	var m Meter
	m.Add("generate", "gpt-4o", Usage{PromptTokens: 1_000_000, CachedPromptTokens: 800_000, CompletionTokens: 100_000, ReasoningTokens: 60_000, Model: "gpt-4o-2024-08-06"}, false)
	s := m.Summary(0, p)
	// 0.2M × 2.5 + 0.8M × 1.25 + 0.1M × 10
	if s.USD == nil || *s.USD != 2.5 || s.CachedPromptTokens != 800_000 || s.ReasoningTokens != 60_000 || len(s.Notes) != 0 {
		t.Errorf("summary %+v usd %v", s, deref(s.USD))
	}
	if l := s.Models[0]; len(l.Served) != 1 || l.Served[0] != "gpt-4o-2024-08-06" {
		t.Errorf("served %v", l.Served)
	}
	s = m.Summary(0, Prices{"gpt-4o": {Input: 2.5, Output: 10}})
	if s.USD == nil || *s.USD != 3.5 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "800000 prompt tokens gpt-4o read from its prompt cache") {
		t.Errorf("without cached_input: usd %v notes %q", deref(s.USD), s.Notes)
	}
}

// TestUSDText: dollars as people read them, never $0.00 for a fraction of
// a cent, nor an exponent.
func TestUSDText(t *testing.T) {
	for x, want := range map[float64]string{0: "$0", 0.004: "$0.004", 4e-7: "$0.0000004", 0.054122: "$0.0541", 1: "$1.00", 1234.567: "$1234.57", 0.999999: "$1.00"} {
		if got := USDText(x); got != want {
			t.Errorf("USDText(%v) = %q, want %q", x, got, want)
		}
	}
}
