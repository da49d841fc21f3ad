package rerank

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// reply is one scripted chat answer.
type reply struct {
	Reasoning, Content, Finish string
	Logprobs                   []llm.TokenLogprob
	Status                     int // an HTTP error status instead of an answer
}

// scripted is a loopback OpenAI-compatible chat server whose answers come
// from a script. It answers the first too429 requests with 429 (and
// Retry-After: 0), reports usage as prompt and output bytes / 4, and
// keeps every request.
type scripted struct {
	*httptest.Server
	calls  atomic.Int32
	too429 atomic.Int32
	mu     sync.Mutex
	reqs   []chatReq
}

func newScripted(t *testing.T, script func(chatReq) reply) *scripted {
	s := &scripted{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		s.calls.Add(1)
		if s.too429.Add(-1) >= 0 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error": "rate limited"}`, http.StatusTooManyRequests)
			return
		}
		var req chatReq
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		a := script(req)
		if a.Status != 0 {
			http.Error(w, "scripted failure", a.Status)
			return
		}
		if a.Finish == "" {
			a.Finish = "stop"
		}
		prompt := 0
		for _, m := range req.Messages {
			prompt += len(m.Content)
		}
		msg := map[string]any{"role": "assistant", "content": a.Content}
		if a.Reasoning != "" {
			msg["reasoning_content"] = a.Reasoning
		}
		choice := map[string]any{"message": msg, "finish_reason": a.Finish}
		if a.Logprobs != nil {
			choice["logprobs"] = map[string]any{"content": a.Logprobs}
		}
		out, cmpl := (prompt+3)/4, (len(a.Reasoning)+len(a.Content)+3)/4
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{choice},
			"usage":   map[string]int{"prompt_tokens": out, "completion_tokens": cmpl, "total_tokens": out + cmpl},
		})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) client(t *testing.T, store llm.Store) *llm.Client {
	c, err := llm.New(llm.Options{BaseURL: s.URL + "/v1", Model: "test-model", HTTP: fastClient(), Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lastUser is the request's user message.
func lastUser(req chatReq) string { return req.Messages[len(req.Messages)-1].Content }

// promptDocs are the "text of dN" ids a prompt shows, in order.
var promptDoc = regexp.MustCompile(`text of (d\d+)`)

func promptDocs(prompt string) []string {
	var out []string
	for _, m := range promptDoc.FindAllStringSubmatch(prompt, -1) {
		out = append(out, m[1])
	}
	return out
}

func cands(n int) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		id := fmt.Sprintf("d%d", i+1)
		out[i] = Candidate{ID: id, Text: "text of " + id, Score: float64(n - i), Rank: i + 1}
	}
	return out
}

// order lists candidate ids by descending score, ties in input order.
func order(cs []Candidate, scores []float64) []string {
	out := make([]string, len(cs))
	for i, r := range ranksOf(scores) {
		out[r-1] = cs[i].ID
	}
	return out
}

// TestReasonRankRepairs scripts malformed permutations, empty reasoning
// and truncated outputs, and checks the ranking, the counts and the trace
// of each.
func TestReasonRankRepairs(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    reply
		want []string
		st   Stats // the counts checked (Calls is always 1)
		fall bool
	}{
		{"clean", reply{Reasoning: "d2 names the disease.", Content: "<answer>[2] > [4] > [1] > [3]</answer>"},
			[]string{"d2", "d4", "d1", "d3"}, Stats{}, false},
		{"missing", reply{Reasoning: "r", Content: "<answer>[3] > [1]</answer>"},
			[]string{"d3", "d1", "d2", "d4"}, Stats{Partial: 1, Missing: 2}, false},
		{"repeated", reply{Reasoning: "r", Content: "<answer>[2] > [2] > [1] > [3] > [4]</answer>"},
			[]string{"d2", "d1", "d3", "d4"}, Stats{Partial: 1, Repeated: 1}, false},
		{"out of range", reply{Reasoning: "r", Content: "<answer>[5] > [4] > [0] > [3] > [2] > [1]</answer>"},
			[]string{"d4", "d3", "d2", "d1"}, Stats{Partial: 1, OutOfRange: 2}, false},
		{"no answer tag", reply{Reasoning: "r", Content: "[4] > [3] > [2] > [1]"},
			[]string{"d4", "d3", "d2", "d1"}, Stats{}, false},
		{"reasoning in the content", reply{Content: "Passage [3] is key, then [1].\n<answer>[3] > [1] > [2] > [4]</answer>"},
			[]string{"d3", "d1", "d2", "d4"}, Stats{}, false},
		{"truncated answer", reply{Reasoning: "r", Content: "<answer>[3] > [4] > [", Finish: "length"},
			[]string{"d3", "d4", "d1", "d2"}, Stats{Partial: 1, Missing: 2, Truncated: 1}, false},
		{"truncated while reasoning", reply{Reasoning: "I was still weighing", Finish: "length"},
			[]string{"d1", "d2", "d3", "d4"}, Stats{Unparsed: 1, Missing: 4, Truncated: 1}, true},
		{"empty reasoning", reply{Content: "<answer>[4] > [1] > [2] > [3]</answer>"},
			[]string{"d4", "d1", "d2", "d3"}, Stats{NoReasoning: 1}, false},
		{"prose", reply{Reasoning: "r", Content: "<answer>The first passage is best.</answer>"},
			[]string{"d1", "d2", "d3", "d4"}, Stats{Unparsed: 1, Missing: 4}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScripted(t, func(chatReq) reply { return tc.a })
			r := &ReasonRank{Chat: srv.client(t, nil)}
			var traces []Trace
			ctx := WithTrace(context.Background(), func(tr Trace) { traces = append(traces, tr) })
			cs := cands(4)
			scores, err := r.ScoreCandidates(ctx, "q1", "the query", cs)
			if err != nil {
				t.Fatal(err)
			}
			if got := order(cs, scores); !slices.Equal(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
			got := r.Stats()
			want := tc.st
			want.Calls = 1
			got.PromptTokens, got.CompletionTokens = 0, 0
			if got != want {
				t.Errorf("stats %+v, want %+v", got, want)
			}
			if len(traces) != 1 {
				t.Fatalf("%d traces", len(traces))
			}
			tr := traces[0]
			if tr.QueryID != "q1" || !slices.Equal(tr.Docs, []string{"d1", "d2", "d3", "d4"}) || !slices.Equal(tr.Ranking, tc.want) || tr.Fallback != tc.fall || tr.Answer != tc.a.Content {
				t.Errorf("trace %+v", tr)
			}
			if tc.name == "reasoning in the content" && tr.Reasoning != "Passage [3] is key, then [1]." {
				t.Errorf("reasoning %q", tr.Reasoning)
			}
		})
	}
}

// TestRank1Judgements scores scripted answers from their logprobs and,
// where there are none, from their text, and checks the ties keep the
// input order through Rerank.
func TestRank1Judgements(t *testing.T) {
	ln := math.Log
	script := map[string]reply{
		// p(true) / (p(true) + p(false)) = 0.8 / 0.95.
		"d1": {Reasoning: "It explains it.", Content: "true", Logprobs: []llm.TokenLogprob{
			{Token: "true", Logprob: ln(0.8), Top: []llm.TopLogprob{{Token: "true", Logprob: ln(0.8)}, {Token: "false", Logprob: ln(0.15)}, {Token: "maybe", Logprob: ln(0.05)}}}}},
		// false alone, without alternatives: true gets the rest, 0.3.
		"d2": {Reasoning: "Unrelated.", Content: "false", Logprobs: []llm.TokenLogprob{{Token: "false", Logprob: ln(0.7)}}},
		// No logprobs: scored from the text.
		"d3": {Reasoning: "Yes.", Content: "True."},
		// Cut off while reasoning: undecided.
		"d4": {Reasoning: "Let me think about the mechanism", Finish: "length"},
		// No reasoning, no logprobs.
		"d5": {Content: "false"},
		// Neither word.
		"d6": {Reasoning: "Hmm.", Content: "It might help."},
		// The reasoning's tokens say "No" first; the answer's token counts:
		// (0.6 + 0.2) / 1.0.
		"d7": {Reasoning: "No, wait. It does.", Content: "true", Logprobs: []llm.TokenLogprob{
			{Token: "No", Logprob: ln(0.9), Top: []llm.TopLogprob{{Token: "No", Logprob: ln(0.9)}}},
			{Token: "</think>", Logprob: 0},
			{Token: "true", Logprob: ln(0.6), Top: []llm.TopLogprob{{Token: "true", Logprob: ln(0.6)}, {Token: " True", Logprob: ln(0.2)}, {Token: "false", Logprob: ln(0.2)}}}}},
	}
	srv := newScripted(t, func(req chatReq) reply {
		if !req.Logprobs || req.TopLogprobs != 5 {
			t.Errorf("logprobs %v top %d, want true and 5", req.Logprobs, req.TopLogprobs)
		}
		return script[promptDocs(lastUser(req))[0]]
	})
	r := &Rank1{Chat: srv.client(t, nil), Concurrency: 3}
	var mu sync.Mutex
	traces := map[string]Trace{}
	ctx := WithTrace(context.Background(), func(tr Trace) { mu.Lock(); traces[tr.Docs[0]] = tr; mu.Unlock() })
	cs := cands(7)
	scores, err := r.ScoreCandidates(ctx, "q", "query", cs)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.8 / 0.95, 0.3, 1, 0.5, 0, 0.5, 0.8}
	for i := range want {
		if math.Abs(scores[i]-want[i]) > 1e-12 {
			t.Errorf("%s scored %v, want %v", cs[i].ID, scores[i], want[i])
		}
	}
	from := map[string]string{"d1": "logprobs", "d2": "logprobs", "d3": "text", "d4": "undecided", "d5": "text", "d6": "undecided", "d7": "logprobs"}
	for id, f := range from {
		if tr := traces[id]; tr.From != f || tr.Reasoning != script[id].Reasoning || tr.Score == nil {
			t.Errorf("%s: trace %+v, want from %s", id, tr, f)
		}
	}
	st := r.Stats()
	if st.Calls != 7 || st.NoLogprobs != 2 || st.Undecided != 2 || st.Truncated != 1 || st.NoReasoning != 1 {
		t.Errorf("stats %+v", st)
	}
	// Through Rerank: d4 and d6 tie at 0.5 and keep their input order.
	run := ir.Run{"q": make([]ir.Hit, 7)}
	for i := range run["q"] {
		run["q"][i] = ir.Hit{DocID: cs[i].ID, Score: float64(10 - i)}
	}
	got, err := Rerank(context.Background(), run, map[string]string{"q": "query"}, textIsID, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := ids(got["q"]); !slices.Equal(ids, []string{"d3", "d1", "d7", "d4", "d6", "d2", "d5"}) {
		t.Errorf("reranked %v", ids)
	}

	// TextOnly asks for no logprobs.
	plain := newScripted(t, func(req chatReq) reply {
		if req.Logprobs || req.TopLogprobs != 0 {
			t.Errorf("text-only request asked for logprobs")
		}
		return reply{Reasoning: "r", Content: "yes"}
	})
	if s, err := (&Rank1{Chat: plain.client(t, nil), TextOnly: true}).Score(context.Background(), "q", []string{"a"}); err != nil || s[0] != 1 {
		t.Errorf("text-only: %v %v", s, err)
	}
}

// TestRank1AbsentWordBound: a server's top_logprobs are the most probable
// tokens at the position (OpenAI's and vLLM's top_logprobs), so a judgement
// word absent from them is at most as probable as the least of them, and
// at most what they leave. The score uses the tighter of the two bounds,
// the closest to Rank1's exact p(true) / (p(true) + p(false)) that the
// answer allows (Rank1 asks again with only the two words allowed; see
// orionw/rank1 rank1.py, _fix_incomplete_responses), and never above it.
func TestRank1AbsentWordBound(t *testing.T) {
	ln := math.Log
	// The model's distribution: true 0.6, four others 0.05 each, false
	// 0.02, the rest spread thinly. The server lists the five most probable.
	top := []llm.TopLogprob{{Token: "true", Logprob: ln(0.6)}, {Token: "The", Logprob: ln(0.05)}, {Token: "A", Logprob: ln(0.05)}, {Token: "\n", Logprob: ln(0.05)}, {Token: "**", Logprob: ln(0.05)}}
	exact := 0.6 / (0.6 + 0.02)
	got, ok := verdictLogprob([]llm.TokenLogprob{{Token: "true", Logprob: ln(0.6), Top: top}}, 1)
	if want := 0.6 / (0.6 + 0.05); !ok || math.Abs(got-want) > 1e-12 || got > exact {
		t.Errorf("true with false absent: %v, want %v (exact %v)", got, want, exact)
	}
	// The same for an absent true.
	top[0].Token = "false"
	got, ok = verdictLogprob([]llm.TokenLogprob{{Token: "false", Logprob: ln(0.6), Top: top}}, 0)
	if want := 0.05 / (0.05 + 0.6); !ok || math.Abs(got-want) > 1e-12 || got < 0.02/(0.02+0.6) {
		t.Errorf("false with true absent: %v, want %v", got, want)
	}
	// Without a list of alternatives only the mass left bounds it.
	got, ok = verdictLogprob([]llm.TokenLogprob{{Token: "true", Logprob: ln(0.9)}}, 1)
	if want := 0.9 / (0.9 + 0.1); !ok || math.Abs(got-want) > 1e-12 {
		t.Errorf("true alone: %v, want %v", got, want)
	}
}

// TestReasoningRetries429 has the server refuse the first requests with
// 429: the client waits and retries, and the rerank completes.
func TestReasoningRetries429(t *testing.T) {
	srv := newScripted(t, func(chatReq) reply { return reply{Reasoning: "r", Content: "<answer>[2] > [1]</answer>"} })
	srv.too429.Store(3)
	r := &ReasonRank{Chat: srv.client(t, nil)}
	scores, err := r.Score(context.Background(), "q", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scores, []float64{1, 2}) || srv.calls.Load() != 4 {
		t.Errorf("scores %v after %d requests, want [1 2] after 4", scores, srv.calls.Load())
	}
	// Past the client's attempts, the error names the status.
	srv.too429.Store(100)
	if _, err := (&Rank1{Chat: srv.client(t, nil)}).Score(context.Background(), "q", []string{"a"}); err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("persistent 429: %v", err)
	}
}

// TestShownScoresKeepScoresApart: candidates whose first-stage scores
// differ are never shown the same number. RRF scores of two runs with
// NanoR2MED's k = 100 (1/(k+r₁) + 1/(k+r₂), fusion.RRF) and cosine
// similarities differ in the third or fourth decimal, where two digits would
// show the model a tie the retriever never made; tied scores stay tied.
func TestShownScoresKeepScoresApart(t *testing.T) {
	rrf := func(r1, r2 float64) float64 { return 1/(100+r1) + 1/(100+r2) }
	for _, tc := range []struct {
		name  string
		cands []Candidate
		scale ScoreScale
		dec   int
	}{
		{"rrf", []Candidate{{ID: "a", Score: rrf(1, 2)}, {ID: "b", Score: rrf(2, 1)}, {ID: "c", Score: rrf(1, 5)}, {ID: "d", Score: rrf(3, 4)}, {ID: "e", Score: rrf(40, 60)}}, ScoresRaw, 0},
		{"cosine", []Candidate{{ID: "a", Score: 0.8312}, {ID: "b", Score: 0.8309}, {ID: "c", Score: 0.83}, {ID: "d", Score: 0.7}}, ScoresRaw, 2},
		{"percent", []Candidate{{ID: "a", Score: 100}, {ID: "b", Score: 99.99}, {ID: "c", Score: 99.985}, {ID: "d", Score: 0}}, ScoresPercent, 1},
		{"zero", []Candidate{{ID: "a", Score: 0.001}, {ID: "b", Score: 0}, {ID: "c", Score: -0.001}}, ScoresRaw, 2},
	} {
		got, _, err := ShownScores(tc.cands, tc.scale, tc.dec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range tc.cands {
			for j := range tc.cands {
				a, b := tc.cands[i].Score, tc.cands[j].Score
				if (a == b) != (got[i] == got[j]) {
					t.Errorf("%s: scores %v and %v shown as %q and %q", tc.name, a, b, got[i], got[j])
				}
				x, _ := strconv.ParseFloat(got[i], 64)
				y, _ := strconv.ParseFloat(got[j], 64)
				if tc.scale == ScoresRaw && a > b && !(x > y) {
					t.Errorf("%s: %v > %v shown as %q, %q", tc.name, a, b, got[i], got[j])
				}
			}
		}
		// Every number of a query is printed with the same digits.
		digits := func(s string) int { _, frac, _ := strings.Cut(s, "."); return len(frac) }
		for _, s := range got {
			if digits(s) != digits(got[0]) || digits(s) < max(tc.dec, 2) && tc.dec == 0 || digits(s) < tc.dec {
				t.Errorf("%s: %v are not printed alike with at least the digits asked", tc.name, got)
				break
			}
		}
	}
}

func TestShownScores(t *testing.T) {
	cs := []Candidate{{ID: "a", Score: 12.5}, {ID: "b", Score: 3}, {ID: "c", Score: -0.001}, {ID: "d", Score: 7.126}}
	for _, tc := range []struct {
		scale    ScoreScale
		decimals int
		want     []string
		label    string
	}{
		{"", 0, []string{"12.50", "3.00", "0.00", "7.13"}, ""},
		{ScoresRaw, 4, []string{"12.5000", "3.0000", "-0.0010", "7.1260"}, ""},
		{ScoresMinMax, 0, []string{"1.00", "0.24", "0.00", "0.57"}, "0-1"},
		{ScoresPercent, 1, []string{"100.0", "24.0", "0.0", "57.0"}, "0-100"},
	} {
		got, label, err := ShownScores(cs, tc.scale, tc.decimals)
		if err != nil || !slices.Equal(got, tc.want) || label != tc.label {
			t.Errorf("%q/%d: %v %q %v, want %v %q", tc.scale, tc.decimals, got, label, err, tc.want, tc.label)
		}
	}
	same := []Candidate{{Score: 2}, {Score: 2}}
	if got, _, _ := ShownScores(same, ScoresPercent, 0); !slices.Equal(got, []string{"100.00", "100.00"}) {
		t.Errorf("equal scores: %v", got)
	}
	if _, _, err := ShownScores([]Candidate{{ID: "x", Score: math.NaN()}}, "", 0); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("NaN: %v", err)
	}
	if _, err := ParseScoreScale("zscore"); err == nil {
		t.Error("zscore accepted")
	}
	if _, err := (&InsertRank{Chat: llmStub{}}).Score(context.Background(), "q", []string{"a"}); err == nil || !strings.Contains(err.Error(), "first-stage scores") {
		t.Errorf("Score without candidates: %v", err)
	}
}

// shownScore reads "[N] (retriever score: S) text of dX" lines.
var shownScore = regexp.MustCompile(`(?m)^\[(\d+)\] \(retriever score: ([^)]*)\) text of (d\d+)$`)

// reverseWindow answers a listwise prompt with its passages in reverse.
func reverseWindow(req chatReq) reply {
	n := len(promptDocs(lastUser(req)))
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("[%d]", n-i)
	}
	return reply{Content: strings.Join(parts, " > ")}
}

// TestInsertRankCarriesRunScores reranks a run through Rerank and checks
// that every prompt shows each passage with exactly its score in that run,
// and that the windows slide as RankGPT's.
func TestInsertRankCarriesRunScores(t *testing.T) {
	srv := newScripted(t, reverseWindow)
	run := ir.Run{}
	for q := range 3 {
		qid := fmt.Sprintf("q%d", q)
		for i := range 25 {
			run[qid] = append(run[qid], ir.Hit{DocID: fmt.Sprintf("d%d", i), Score: 30 - float64(i)*1.1 - float64(q)/3})
		}
	}
	queries := map[string]string{"q0": "a", "q1": "b", "q2": "c"}
	r := &InsertRank{Chat: srv.client(t, nil)}
	if _, err := Rerank(context.Background(), run, queries, textIsID, r, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if len(srv.reqs) != 6 {
		t.Errorf("%d requests, want 2 windows × 3 queries", len(srv.reqs))
	}
	byQuery := map[string]string{"a": "q0", "b": "q1", "c": "q2"}
	seen := 0
	for _, req := range srv.reqs {
		u := lastUser(req)
		qid := byQuery[u[strings.LastIndex(u, "\nQuery: ")+len("\nQuery: "):][:1]]
		lines := shownScore.FindAllStringSubmatch(u, -1)
		if len(lines) != 20 && len(lines) != 15 { // windows [5, 25) and [0, 15)
			t.Fatalf("%d scored passages in\n%s", len(lines), u)
		}
		for _, m := range lines {
			var score float64
			for _, h := range run[qid] {
				if h.DocID == m[3] {
					score = h.Score
				}
			}
			if want := fmt.Sprintf("%.2f", score); m[2] != want {
				t.Errorf("%s %s shown as %s, its run score is %v (%s)", qid, m[3], m[2], score, want)
			}
			seen++
		}
	}
	if seen != 105 {
		t.Errorf("%d passages shown", seen)
	}
}

// captured records the requests a scorer makes.
type captured struct {
	mu   sync.Mutex
	reqs []llm.Request
	ans  string
}

func (c *captured) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	return llm.Response{Content: c.ans, Reasoning: "r"}, nil
}

// TestGoldenPrompts renders each method's conversation as its scorer
// sends it and compares it byte for byte with testdata/prompts/KIND.txt
// (go test ./rerank -run TestGoldenPrompts -update rewrites them).
func TestGoldenPrompts(t *testing.T) {
	docs := []Candidate{
		{ID: "a", Text: "Pheochromocytoma secretes catecholamines\nin spells.", Score: 14.2, Rank: 1},
		{ID: "b", Text: "Carcinoid   syndrome causes flushing and diarrhea.", Score: 9.876, Rank: 2},
		{ID: "c", Text: "Hyperthyroidism causes weight loss.", Score: 3, Rank: 3},
	}
	query := "Episodic headache, palpitations and sweating with hypertension: what tumor?"
	for _, kind := range templated {
		c := &captured{ans: "[1] > [2] > [3]"}
		var err error
		switch kind {
		case KindInsertRank:
			_, err = (&InsertRank{Chat: c}).ScoreCandidates(context.Background(), "q", query, docs)
		case KindReasonRank:
			_, err = (&ReasonRank{Chat: c}).ScoreCandidates(context.Background(), "q", query, docs)
		case KindRank1:
			c.ans = "true"
			_, err = (&Rank1{Chat: c, Concurrency: 1}).ScoreCandidates(context.Background(), "q", query, docs[:1])
		case KindGroupRank:
			c.ans = `<answer>{"[1]": 9, "[2]": 3, "[3]": 1}</answer>`
			_, err = (&GroupRank{Chat: c, Repeats: 1}).ScoreCandidates(context.Background(), "q", query, docs)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(c.reqs) != 1 {
			t.Fatalf("%s: %d requests", kind, len(c.reqs))
		}
		var b strings.Builder
		for _, m := range c.reqs[0].Messages {
			fmt.Fprintf(&b, "=== %s ===\n%s\n", m.Role, m.Content)
		}
		got := b.String()
		path := filepath.Join("testdata", "prompts", kind+".txt")
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./rerank -run TestGoldenPrompts -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from the prompt sent:\n%s", path, got)
		}
	}
}

func TestRerankTemplates(t *testing.T) {
	dir := t.TempDir()
	written, err := WriteTemplates(dir)
	if err != nil || len(written) != len(TemplateFiles()) {
		t.Fatalf("%v %v", written, err)
	}
	if _, err := WriteTemplates(dir); err == nil {
		t.Error("WriteTemplates overwrote existing files")
	}
	p, err := LoadPrompts(dir)
	if err != nil || p.Digest() != DefaultPrompts().Digest() {
		t.Fatalf("written templates differ from the built-in ones: %v", err)
	}
	// One edited file: the others stay built in; the digest changes; an
	// empty system template sends no system message.
	only := t.TempDir()
	os.WriteFile(filepath.Join(only, "rank1.user.tmpl"), []byte("Q={{.Query}} P={{.Passage}}\n"), 0o644)
	os.WriteFile(filepath.Join(only, "rank1.system.tmpl"), []byte("\n"), 0o644)
	p, err = LoadPrompts(only)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := p.Messages(KindRank1, PointPrompt{Query: "q", Passage: "p"})
	if err != nil || len(msgs) != 1 || msgs[0] != llm.User("Q=q P=p") {
		t.Errorf("edited rank1: %v %v", msgs, err)
	}
	if p.Digest() == DefaultPrompts().Digest() || p.Sources["rank1.user.tmpl"] != filepath.Join(only, "rank1.user.tmpl") || p.Sources["reasonrank.user.tmpl"] != "embedded" {
		t.Errorf("digest or sources ignore the edit: %v", p.Sources)
	}
	for name, tc := range map[string]struct{ file, content, want string }{
		"misspelt":   {"rank.user.tmpl", "x", "not a template file name"},
		"parse":      {"reasonrank.user.tmpl", "{{.Query", "reasonrank.user.tmpl"},
		"field":      {"insertrank.user.tmpl", "{{.Passage}}", "insertrank.user.tmpl"},
		"empty user": {"reasonrank.user.tmpl", " \n", "user message is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, tc.file), []byte(tc.content), 0o644)
			if _, err := LoadPrompts(d); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := New(Spec{Kind: "reasonrank", Model: "m", BaseURL: "http://127.0.0.1:1/v1", Templates: filepath.Join(dir, "absent")}); err == nil {
		t.Error("a missing templates directory was accepted")
	}
}

// shownRank reads "[N] (retriever rank: R) text of dX" lines.
var shownRank = regexp.MustCompile(`(?m)^\[(\d+)\] \(retriever rank: (\d+)\) text of d(\d+)$`)

// TestInsertRankRanksOnly: over a run whose scores only stand for ranks
// (Options.RanksOnly: a candidate list published without scores), every
// prompt says that only ranks are known and shows each passage's rank in
// the run, never a number as a score, whatever the scale; the traces say
// the same. Candidates mixing ranks and scores are refused.
func TestInsertRankRanksOnly(t *testing.T) {
	srv := newScripted(t, reverseWindow)
	run := ir.Run{}
	for i := range 25 {
		run["q0"] = append(run["q0"], ir.Hit{DocID: fmt.Sprintf("d%d", i), Score: float64(25 - (i + 1))})
	}
	var mu sync.Mutex
	var traces []Trace
	ctx := WithTrace(context.Background(), func(tr Trace) { mu.Lock(); traces = append(traces, tr); mu.Unlock() })
	r := &InsertRank{Chat: srv.client(t, nil), Scores: ScoresPercent}
	if _, err := Rerank(ctx, run, map[string]string{"q0": "a"}, textIsID, r, Options{RanksOnly: true}); err != nil {
		t.Fatal(err)
	}
	if len(srv.reqs) != 2 {
		t.Fatalf("%d requests, want 2 windows", len(srv.reqs))
	}
	for _, req := range srv.reqs {
		u := lastUser(req)
		if !strings.Contains(u, "the list gives ranks only, no scores") || strings.Contains(u, "score:") || strings.Contains(u, "scaled") {
			t.Fatalf("prompt:\n%s", u)
		}
		lines := shownRank.FindAllStringSubmatch(u, -1)
		if len(lines) != len(promptDocs(u)) {
			t.Fatalf("%d passages with ranks in\n%s", len(lines), u)
		}
		for _, m := range lines {
			if doc, _ := strconv.Atoi(m[3]); m[2] != strconv.Itoa(doc+1) {
				t.Errorf("d%s shown at rank %s, its rank in the run is %d", m[3], m[2], doc+1)
			}
		}
	}
	for _, tr := range traces {
		if tr.FirstStage != "ranks only: the candidate list has no scores" || len(tr.Shown) != len(tr.Docs) {
			t.Errorf("trace %+v", tr)
		}
		for i, d := range tr.Docs {
			if n, _ := strconv.Atoi(strings.TrimPrefix(d, "d")); tr.Shown[i] != strconv.Itoa(n+1) {
				t.Errorf("trace shows %s for %s", tr.Shown[i], d)
			}
		}
	}
	mixed := []Candidate{{ID: "a", Text: "a", Rank: 1, RankOnly: true}, {ID: "b", Text: "b", Score: 2, Rank: 2}}
	if _, err := r.ScoreCandidates(context.Background(), "q", "q", mixed); err == nil || !strings.Contains(err.Error(), "ranks alone") {
		t.Errorf("mixed candidates: %v", err)
	}
}
