// Package usage accounts for what model calls cost: prompt and completion
// tokens and wall time per call, summed by a concurrency-safe Meter per
// kind of call and model, and turned into money by a price table.
//
// A call's tokens come from the server's "usage" answer when it gives one
// with counts; otherwise they are estimated with EstimateTokens, and the
// record says so (Usage.Estimated names the estimator). Answers reused
// from a cache keep the usage they had when they were made, so a rerun
// reports the original cost beside a new cost of zero (Meter's Cached and
// New tallies). A call retried after a 429, a 5xx or a timeout is one call
// with the tokens of the answer that came (providers bill no 429 or 5xx; a
// generation the client stopped waiting for may be billed and is not
// counted), its seconds the retries' and waits' too.
package usage

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Estimator names EstimateTokens in records.
const Estimator = "utf8-bytes/4"

// EstimateTokens is the token estimate used when a server reports none: a
// quarter of the UTF-8 bytes, rounded up. It is close for English under
// BPE vocabularies (about 4 characters a token), high for most other Latin
// text, and low for CJK text.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Usage is what one call cost.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// Seconds is the call's wall time, retries and waits included.
	Seconds float64 `json:"seconds,omitempty"`
	// Estimated names the estimator (Estimator) when the server reported
	// no token counts; empty when they are the server's.
	Estimated string `json:"estimated,omitempty"`
	// CachedPromptTokens are the prompt tokens the server read from its
	// own prompt cache (OpenAI's prompt_tokens_details.cached_tokens,
	// DeepSeek's prompt_cache_hit_tokens), which providers bill at a
	// cached-input rate; they are part of PromptTokens. It has nothing to
	// do with r2med's answer cache.
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	// ReasoningTokens are the completion tokens the model spent
	// reasoning (completion_tokens_details.reasoning_tokens); they are
	// part of CompletionTokens and billed as output.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// Model is the model the server said answered (its answer's "model"),
	// when it names one; prices are looked up by the model asked for.
	Model string `json:"model,omitempty"`
}

// Tally sums calls.
type Tally struct {
	// Calls counts chat answers, or texts embedded.
	Calls            int64   `json:"calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Seconds          float64 `json:"seconds"`
	// EstimatedCalls are the calls whose tokens were estimated.
	EstimatedCalls int64 `json:"estimated_calls,omitempty"`
	// CachedPromptTokens and ReasoningTokens are the parts of the prompt
	// and completion tokens that Usage's fields of those names count.
	CachedPromptTokens int64 `json:"cached_prompt_tokens,omitempty"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
}

// Add counts one call.
func (t *Tally) Add(u Usage) {
	t.Calls++
	t.PromptTokens += int64(u.PromptTokens)
	t.CompletionTokens += int64(u.CompletionTokens)
	t.CachedPromptTokens += int64(u.CachedPromptTokens)
	t.ReasoningTokens += int64(u.ReasoningTokens)
	t.Seconds += u.Seconds
	if u.Estimated != "" {
		t.EstimatedCalls++
	}
}

// Plus is the sum of two tallies.
func (t Tally) Plus(o Tally) Tally {
	return Tally{Calls: t.Calls + o.Calls, PromptTokens: t.PromptTokens + o.PromptTokens,
		CompletionTokens: t.CompletionTokens + o.CompletionTokens, Seconds: t.Seconds + o.Seconds,
		EstimatedCalls:     t.EstimatedCalls + o.EstimatedCalls,
		CachedPromptTokens: t.CachedPromptTokens + o.CachedPromptTokens, ReasoningTokens: t.ReasoningTokens + o.ReasoningTokens}
}

// Line is one kind of call by one model.
type Line struct {
	Kind  string `json:"kind"` // the cache kind: "embed", "generate", "rerank", …
	Model string `json:"model"`
	// New are the calls made now; Cached the answers taken from the cache,
	// with the usage they had when they were made.
	New    Tally `json:"new"`
	Cached Tally `json:"cached"`
	// Served are the other names the server answered with (a dated
	// version of the model asked for, a gateway's routing), sorted.
	Served []string `json:"served,omitempty"`
}

// serve adds the name a server answered with, unless it is the line's.
func (l *Line) serve(names ...string) {
	for _, n := range names {
		if n != "" && n != l.Model && !slices.Contains(l.Served, n) {
			l.Served = append(l.Served, n)
			slices.Sort(l.Served)
		}
	}
}

// Meter sums usage per kind and model. Its zero value is ready, and it is
// safe for concurrent use; a nil *Meter ignores what it is given, so
// clients may hold one unconditionally.
type Meter struct {
	mu    sync.Mutex
	lines map[[2]string]*Line
}

// Add records one call of kind by model; cached says it was answered from
// the cache (u is then the usage recorded when it was made).
func (m *Meter) Add(kind, model string, u Usage, cached bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.line(kind, model)
	l.serve(u.Model)
	if cached {
		l.Cached.Add(u)
	} else {
		l.New.Add(u)
	}
}

// line is the tally of kind and model, made when missing; m.mu is held.
func (m *Meter) line(kind, model string) *Line {
	if m.lines == nil {
		m.lines = map[[2]string]*Line{}
	}
	k := [2]string{kind, model}
	l := m.lines[k]
	if l == nil {
		l = &Line{Kind: kind, Model: model}
		m.lines[k] = l
	}
	return l
}

// Merge adds the tallies of lines (another meter's Lines) to m. With
// reused, every call is counted as cached: the work was done before and
// its output reused (a pipeline stage kept on disk), so this run spent
// nothing on it, and its cost when made is still reported.
func (m *Meter) Merge(lines []Line, reused bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, in := range lines {
		l := m.line(in.Kind, in.Model)
		l.serve(in.Served...)
		if reused {
			l.Cached = l.Cached.Plus(in.New).Plus(in.Cached)
			continue
		}
		l.New = l.New.Plus(in.New)
		l.Cached = l.Cached.Plus(in.Cached)
	}
}

// Lines are the tallies, sorted by kind then model.
func (m *Meter) Lines() []Line {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Line, 0, len(m.lines))
	for _, l := range m.lines {
		c := *l
		c.Served = slices.Clone(l.Served)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Line) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Model, b.Model)
	})
	return out
}

// Summary is what a run's manifest carries.
//
// The top-level numbers are what this run spent (new calls); Cached is
// what the answers reused from the cache cost when they were made; the
// per-query means are over both, so they describe the pipeline whether or
// not a cache made this run cheap. Seconds are summed call times: with
// concurrent calls, more than the elapsed time.
type Summary struct {
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Seconds          float64 `json:"seconds"`
	Calls            int64   `json:"calls"`
	// CachedPromptTokens and ReasoningTokens are the parts of the new
	// calls' prompt and completion tokens the servers read from their
	// prompt caches and spent reasoning (Usage).
	CachedPromptTokens int64 `json:"cached_prompt_tokens,omitempty"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
	// USD is the new calls' cost, when the price table covers every model
	// used; nil otherwise (Unpriced lists the models it lacks).
	USD    *float64 `json:"usd,omitempty"`
	Cached Tally    `json:"cached"`
	// CachedUSD is what the cached answers cost when they were made.
	CachedUSD *float64 `json:"cached_usd,omitempty"`
	// PerQuery holds means over Queries of new and cached calls together.
	Queries  int       `json:"queries,omitempty"`
	PerQuery *PerQuery `json:"per_query,omitempty"`
	// Estimated names the token estimator when some calls' tokens were
	// estimated.
	Estimated string   `json:"estimated_tokens,omitempty"`
	Unpriced  []string `json:"unpriced,omitempty"`
	// Notes say how the dollars were reckoned where the table left a
	// choice (cached prompt tokens at the input rate).
	Notes  []string `json:"notes,omitempty"`
	Models []Line   `json:"models,omitempty"`
}

// PerQuery are per-query means.
type PerQuery struct {
	PromptTokens     float64  `json:"prompt_tokens"`
	CompletionTokens float64  `json:"completion_tokens"`
	Seconds          float64  `json:"seconds"`
	USD              *float64 `json:"usd,omitempty"`
}

// Summary totals the meter for a run of queries queries (0: no means),
// priced by prices (nil: no money figures).
func (m *Meter) Summary(queries int, prices Prices) Summary {
	lines := m.Lines()
	var s Summary
	var all Tally
	usd, cachedUSD := 0.0, 0.0
	priced := prices != nil
	unpriced := map[string]bool{}
	for _, l := range lines {
		s.PromptTokens += l.New.PromptTokens
		s.CompletionTokens += l.New.CompletionTokens
		s.Seconds += l.New.Seconds
		s.Calls += l.New.Calls
		s.CachedPromptTokens += l.New.CachedPromptTokens
		s.ReasoningTokens += l.New.ReasoningTokens
		s.Cached = s.Cached.Plus(l.Cached)
		all = all.Plus(l.New).Plus(l.Cached)
		if prices != nil {
			p, ok := prices.Lookup(l.Model)
			if !ok {
				unpriced[l.Model] = true
				priced = false
				continue
			}
			usd += p.Cost(l.New)
			cachedUSD += p.Cost(l.Cached)
			if n := l.New.CachedPromptTokens + l.Cached.CachedPromptTokens; n > 0 && p.CachedInput == nil {
				s.Notes = append(s.Notes, fmt.Sprintf("%d prompt tokens %s read from its prompt cache are priced at the input rate: the price table gives it no cached_input rate", n, l.Model))
			}
		}
	}
	if all.EstimatedCalls > 0 {
		s.Estimated = Estimator
	}
	if priced {
		s.USD, s.CachedUSD = ptr(round(usd)), ptr(round(cachedUSD))
	}
	if len(unpriced) > 0 {
		for k := range unpriced {
			s.Unpriced = append(s.Unpriced, k)
		}
		slices.Sort(s.Unpriced)
	}
	if queries > 0 {
		n := float64(queries)
		s.Queries = queries
		s.PerQuery = &PerQuery{
			PromptTokens:     round(float64(all.PromptTokens) / n),
			CompletionTokens: round(float64(all.CompletionTokens) / n),
			Seconds:          round(all.Seconds / n),
		}
		if priced {
			s.PerQuery.USD = ptr(round((usd + cachedUSD) / n))
		}
	}
	s.Seconds = round(s.Seconds)
	s.Cached.Seconds = round(s.Cached.Seconds)
	s.Models = lines
	for i := range s.Models {
		s.Models[i].New.Seconds = round(s.Models[i].New.Seconds)
		s.Models[i].Cached.Seconds = round(s.Models[i].Cached.Seconds)
	}
	return s
}

// round keeps 6 decimals, and 6 significant digits below 1, so manifests
// do not carry float noise (0.30000000000000004) and small figures keep
// theirs: a query embedded for $0.0000004 is not written as $0.
func round(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	if math.Abs(x) >= 1 {
		return math.Round(x*1e6) / 1e6
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}

func ptr(x float64) *float64 { return &x }

// MarshalJSON writes the meter's Summary without query means or prices.
func (m *Meter) MarshalJSON() ([]byte, error) { return json.Marshal(m.Summary(0, nil)) }

// Cost is what a system costs per query over one or more runs (one per
// task): each run's per-query means (Summary.PerQuery, new and cached
// calls together, so a rerun from the cache costs what the pipeline
// costs) weighted by its queries. Corpus-side calls (embedding the
// documents) are spread over the queries like the others.
type Cost struct {
	Runs    int `json:"runs"`
	Queries int `json:"queries"`
	// PromptTokens and CompletionTokens are per query; Seconds is the
	// summed wall time of model calls per query (with concurrent calls,
	// more than the time a user waits).
	PromptTokens     float64 `json:"prompt_tokens"`
	CompletionTokens float64 `json:"completion_tokens"`
	Seconds          float64 `json:"seconds"`
	// USD is dollars per query; nil unless every run was priced (a run
	// that called no model costs nothing, priced or not).
	USD *float64 `json:"usd,omitempty"`
}

// Tokens are the prompt and completion tokens per query.
func (c Cost) Tokens() float64 { return c.PromptTokens + c.CompletionTokens }

// CostOf combines the usage of a system's runs; ok is false when none of
// them records any (runs made before usage was recorded, or none).
func CostOf(runs []*Summary) (c Cost, ok bool) {
	var usd float64
	priced := true
	for _, s := range runs {
		if s == nil || s.PerQuery == nil || s.Queries <= 0 {
			continue
		}
		n := float64(s.Queries)
		c.Runs++
		c.Queries += s.Queries
		c.PromptTokens += s.PerQuery.PromptTokens * n
		c.CompletionTokens += s.PerQuery.CompletionTokens * n
		c.Seconds += s.PerQuery.Seconds * n
		switch {
		case s.PerQuery.USD != nil:
			usd += *s.PerQuery.USD * n
		case s.Calls+s.Cached.Calls > 0:
			priced = false
		}
	}
	if c.Runs == 0 {
		return Cost{}, false
	}
	n := float64(c.Queries)
	c.PromptTokens, c.CompletionTokens, c.Seconds = round(c.PromptTokens/n), round(c.CompletionTokens/n), round(c.Seconds/n)
	if priced {
		c.USD = ptr(round(usd / n))
	}
	return c, true
}

// USDText writes dollars for people: two decimals from $1, three
// significant digits below (never $0.00 for $0.004, nor an exponent:
// $0.0000004), and $0 for nothing.
func USDText(x float64) string { return "$" + USDNumber(x) }

// USDNumber is USDText without the dollar sign, for columns headed $.
func USDNumber(x float64) string {
	if x == 0 {
		return "0"
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	if math.Abs(v) >= 1 {
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// CallsText is one line on the calls a summary counts: new and from the
// cache, their tokens, and whether they were estimated.
func (s Summary) CallsText() string {
	all := s.Cached.Calls + s.Calls
	line := fmt.Sprintf("model calls: %d new (%d prompt + %d completion tokens), %d answered from the cache (%d + %d when made)",
		s.Calls, s.PromptTokens, s.CompletionTokens, s.Cached.Calls, s.Cached.PromptTokens, s.Cached.CompletionTokens)
	if s.Estimated != "" {
		var est int64
		for _, l := range s.Models {
			est += l.New.EstimatedCalls + l.Cached.EstimatedCalls
		}
		line += fmt.Sprintf("; the tokens of %d of the %d are estimated (%s: the server reported none)", est, all, s.Estimated)
	}
	for _, l := range s.Models {
		if len(l.Served) > 0 {
			line += fmt.Sprintf("; %s was answered by %s", l.Model, strings.Join(l.Served, ", "))
		}
	}
	return line
}

// CostText is one line on what a summary's calls cost by its price
// table, with the notes on how it was reckoned; empty without a table.
func (s Summary) CostText() string {
	if s.USD == nil {
		if len(s.Unpriced) == 0 {
			return ""
		}
		return fmt.Sprintf("cost: no price for %s in the price table", strings.Join(s.Unpriced, ", "))
	}
	line := fmt.Sprintf("cost: %s new, %s of answers from the cache at their cost when made", USDText(*s.USD), USDText(*s.CachedUSD))
	if s.PerQuery != nil && s.PerQuery.USD != nil {
		line += fmt.Sprintf("; %s per query", USDText(*s.PerQuery.USD))
	}
	if s.Estimated != "" {
		line += fmt.Sprintf(" (tokens estimated by %s where the server reported none)", s.Estimated)
	}
	for _, n := range s.Notes {
		line += "; " + n
	}
	return line
}
