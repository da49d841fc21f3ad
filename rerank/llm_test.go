package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
)

type chatReq struct {
	Model       string        `json:"model"`
	Messages    []llm.Message `json:"messages"`
	MaxTokens   int           `json:"max_tokens"`
	Logprobs    bool          `json:"logprobs"`
	TopLogprobs int           `json:"top_logprobs"`
}

// chatServer serves POST /v1/chat/completions with answer deciding the
// choice (a JSON object: message, logprobs).
func chatServer(t *testing.T, calls *atomic.Int32, answer func(chatReq) map[string]any) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req chatReq
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		if calls != nil {
			calls.Add(1)
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{answer(req)}})
	}))
}

func llmClient(t *testing.T, srv *httptest.Server) *llm.Client {
	c, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "test-model", HTTP: fastClient()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var relTag = regexp.MustCompile(`rel=(\d+)`)

func rel(s string) int {
	m := relTag.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// The pointwise server believes "yes" with probability rel/10 and spreads
// it over two spellings, so the score is exactly rel/10 after
// normalization: p(" Yes") = 0.9·rel/10, p("yes") = 0.1·rel/10,
// p("No") = 1 − rel/10, plus an unrelated token that must be ignored.
func pointwiseAnswer(req chatReq) map[string]any {
	p := float64(rel(req.Messages[0].Content)) / 10
	top := []map[string]any{
		{"token": " Yes", "logprob": math.Log(0.9 * p)},
		{"token": "No", "logprob": math.Log(1 - p)},
		{"token": "yes", "logprob": math.Log(0.1 * p)},
		{"token": "Maybe", "logprob": math.Log(0.01)},
	}
	first := "No"
	if p >= 0.5 {
		first = " Yes"
	}
	return map[string]any{
		"message":  map[string]any{"role": "assistant", "content": first},
		"logprobs": map[string]any{"content": []any{map[string]any{"token": first, "logprob": -0.1, "top_logprobs": top}}},
	}
}

func TestPointwiseLogprobs(t *testing.T) {
	var seen []chatReq
	srv := chatServer(t, nil, func(req chatReq) map[string]any {
		seen = append(seen, req)
		return pointwiseAnswer(req)
	})
	defer srv.Close()
	p := &Pointwise{Chat: llmClient(t, srv), Concurrency: 1}
	got, err := p.Score(context.Background(), "fever?", []string{"a rel=2", "b rel=9", "c rel=5"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.2, 0.9, 0.5} {
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("doc %d: p(yes) %v, want %v", i, got[i], want)
		}
	}
	r := seen[0]
	if !r.Logprobs || r.TopLogprobs != 20 || r.MaxTokens != 1 || r.Model != "test-model" {
		t.Errorf("request %+v: want logprobs, top_logprobs 20, max_tokens 1", r)
	}
	if want := "Passage: a rel=2\n\nQuery: fever?\n\nDoes the passage help answer the query? Answer yes or no."; r.Messages[0].Content != want {
		t.Errorf("prompt %q, want %q", r.Messages[0].Content, want)
	}
	if s := p.Stats(); s.Calls != 3 || s.NoLogprobs != 0 || s.Undecided != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestPointwiseAbsentWordBound: a confident model often leaves "no" out of
// the top logprobs. Counting it as 0 scores every such passage 1, a tie
// that Rerank then breaks by first-stage order against the model's own
// confidence. An absent word is at most the least listed alternative and
// at most the mass the list leaves (top_logprobs are the most probable
// tokens), so that upper bound keeps a surer yes above a less sure one,
// and the score under the exact p(yes) / (p(yes) + p(no)).
func TestPointwiseAbsentWordBound(t *testing.T) {
	ln := math.Log
	answer := func(top ...llm.TopLogprob) llm.Response {
		return llm.Response{Content: "Yes", Logprobs: []llm.TokenLogprob{{Token: "Yes", Logprob: top[0].Logprob, Top: top}}}
	}
	p := &Pointwise{}
	// The model's distributions: no at 0.004 and at 0.015, below every
	// listed token.
	sure := p.yes(answer(llm.TopLogprob{Token: "Yes", Logprob: ln(0.98)}, llm.TopLogprob{Token: "Sure", Logprob: ln(0.01)}, llm.TopLogprob{Token: "Maybe", Logprob: ln(0.005)}))
	less := p.yes(answer(llm.TopLogprob{Token: "Yes", Logprob: ln(0.90)}, llm.TopLogprob{Token: "Sure", Logprob: ln(0.05)}, llm.TopLogprob{Token: "Maybe", Logprob: ln(0.03)}))
	if want := 0.98 / (0.98 + 0.005); math.Abs(sure-want) > 1e-12 || sure > 0.98/(0.98+0.004) {
		t.Errorf("sure yes scored %v, want %v", sure, want)
	}
	if want := 0.90 / (0.90 + 0.02); math.Abs(less-want) > 1e-12 || less > 0.90/(0.90+0.015) {
		t.Errorf("less sure yes scored %v, want %v", less, want)
	}
	if !(sure > less) {
		t.Errorf("a surer yes (%v) does not score above a less sure one (%v)", sure, less)
	}
	// Both words listed: their exact ratio, as before.
	if got := p.yes(answer(llm.TopLogprob{Token: "Yes", Logprob: ln(0.6)}, llm.TopLogprob{Token: "No", Logprob: ln(0.3)})); math.Abs(got-2.0/3) > 1e-12 {
		t.Errorf("both listed: %v", got)
	}
}

func TestPointwiseTextFallback(t *testing.T) {
	srv := chatServer(t, nil, func(req chatReq) map[string]any {
		content := map[int]string{1: "Yes.", 2: "no", 3: "I am not sure."}[rel(req.Messages[0].Content)]
		return map[string]any{"message": map[string]any{"role": "assistant", "content": content}}
	})
	defer srv.Close()
	p := &Pointwise{Chat: llmClient(t, srv)}
	got, err := p.Score(context.Background(), "q", []string{"rel=1", "rel=2", "rel=3"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []float64{1, 0, 0.5}) {
		t.Errorf("scores %v, want [1 0 0.5]", got)
	}
	if s := p.Stats(); s.NoLogprobs != 3 || s.Undecided != 1 {
		t.Errorf("stats %+v: want 3 scored from text, 1 undecided", s)
	}
}

// Rerank through the pointwise LLM, over a run, at depth 3.
func TestRerankPointwise(t *testing.T) {
	srv := chatServer(t, nil, pointwiseAnswer)
	defer srv.Close()
	text := map[string]string{"d1": "rel=1", "d2": "rel=8", "d3": "rel=4", "d4": "rel=9"}
	run := listRun(map[string][]string{"q": {"d1", "d2", "d3", "d4"}})
	got, err := Rerank(context.Background(), run, map[string]string{"q": "x"}, func(id string) (string, bool) { s, ok := text[id]; return s, ok },
		&Pointwise{Chat: llmClient(t, srv)}, Options{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"d2", "d3", "d1"}; !slices.Equal(ids(got["q"]), want) {
		t.Errorf("got %v, want %v", ids(got["q"]), want)
	}
}

var passageTurn = regexp.MustCompile(`^\[(\d+)\] `)

// listwiseServer ranks the window's passages by their rel= tag, best first.
func listwiseServer(t *testing.T, calls *atomic.Int32, windows *[][]int) *httptest.Server {
	return chatServer(t, calls, func(req chatReq) map[string]any {
		type p struct{ num, rel int }
		var ps []p
		for _, m := range req.Messages {
			if m.Role != "user" {
				continue
			}
			if sm := passageTurn.FindStringSubmatch(m.Content); sm != nil {
				n, _ := strconv.Atoi(sm[1])
				ps = append(ps, p{n, rel(m.Content)})
			}
		}
		if windows != nil {
			var rels []int
			for _, x := range ps {
				rels = append(rels, x.rel)
			}
			*windows = append(*windows, rels)
		}
		slices.SortStableFunc(ps, func(a, b p) int { return b.rel - a.rel })
		parts := make([]string, len(ps))
		for i, x := range ps {
			parts[i] = fmt.Sprintf("[%d]", x.num)
		}
		return map[string]any{"message": map[string]any{"role": "assistant", "content": strings.Join(parts, " > ")}}
	})
}

func TestListwiseSlidingWindow(t *testing.T) {
	var calls atomic.Int32
	srv := listwiseServer(t, &calls, nil)
	defer srv.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	perm := rng.Perm(100)
	docs := make([]string, 100)
	for i, r := range perm {
		docs[i] = fmt.Sprintf("passage %d rel=%d", i, r)
	}
	l := &Listwise{Chat: llmClient(t, srv)}
	scores, err := l.Score(context.Background(), "q", docs)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 9 {
		t.Errorf("%d calls for 100 passages, want RankGPT's 9 (window 20, step 10)", calls.Load())
	}
	// One bottom-up pass carries the 10 most relevant passages to the top,
	// in order, wherever they started.
	order := make([]int, 100)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(scores[b] - scores[a]) })
	for pos := range 10 {
		if got := perm[order[pos]]; got != 99-pos {
			t.Errorf("position %d holds rel %d, want %d", pos, got, 99-pos)
		}
	}
	if s := l.Stats(); s.Calls != 9 || s.Unparsed != 0 || s.Partial != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestListwiseWindows(t *testing.T) {
	for _, tc := range []struct {
		n, window, step int
		want            [][2]int // windows as [start, end) positions
	}{
		{25, 20, 10, [][2]int{{5, 25}, {0, 15}}},
		{20, 20, 10, [][2]int{{0, 20}}},
		{3, 20, 10, [][2]int{{0, 3}}},
		{10, 4, 3, [][2]int{{6, 10}, {3, 7}, {0, 4}}},
	} {
		var windows [][]int
		srv := listwiseServer(t, nil, &windows)
		docs := make([]string, tc.n)
		for i := range docs {
			docs[i] = fmt.Sprintf("rel=%d", i) // rank by input position reversed
		}
		_, err := (&Listwise{Chat: llmClient(t, srv), Window: tc.window, Step: tc.step}).Score(context.Background(), "q", docs)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(windows) != len(tc.want) {
			t.Errorf("n=%d window %d step %d: %d calls, want %d", tc.n, tc.window, tc.step, len(windows), len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if len(windows[i]) != w[1]-w[0] {
				t.Errorf("n=%d call %d: %d passages, want window %v", tc.n, i, len(windows[i]), w)
			}
		}
	}
	if _, err := (&Listwise{Chat: llmStub{}, Window: 5, Step: 6}).Score(context.Background(), "q", []string{"a"}); err == nil {
		t.Error("step > window accepted")
	}
}

type llmStub struct{ content string }

func (s llmStub) Chat(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Content: s.content}, nil
}

func TestListwiseBadAnswers(t *testing.T) {
	docs := []string{"a", "b", "c"}
	for _, tc := range []struct {
		answer   string
		want     []float64
		unparsed int64
		partial  int64
	}{
		{"I cannot rank these.", []float64{3, 2, 1}, 1, 0},
		{"[3] > [3] > [7]", []float64{2, 1, 3}, 0, 1},
		{"[2] > [3] > [1]", []float64{1, 3, 2}, 0, 0},
	} {
		l := &Listwise{Chat: llmStub{tc.answer}}
		got, err := l.Score(context.Background(), "q", docs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: scores %v, want %v", tc.answer, got, tc.want)
		}
		if s := l.Stats(); s.Unparsed != tc.unparsed || s.Partial != tc.partial {
			t.Errorf("%q: stats %+v", tc.answer, s)
		}
	}
}

// Golden cases of RankGPT-style permutation repair.
func TestParsePermutation(t *testing.T) {
	for _, tc := range []struct {
		answer string
		n      int
		perm   []int
		found  int
		clean  bool
	}{
		{"[3] > [1] > [2]", 3, []int{2, 0, 1}, 3, true},
		{"3 > 1 > 2", 3, []int{2, 0, 1}, 3, true},
		{"2, 1", 2, []int{1, 0}, 2, true},
		{"[ 2 ] > [1]", 2, []int{1, 0}, 2, true},
		{"Ranking of the 3 passages: [2] > [3] > [1]", 3, []int{1, 2, 0}, 3, true},
		{"[2] > [2] > [1]", 3, []int{1, 0, 2}, 2, false},
		{"[4] > [1]", 3, []int{0, 1, 2}, 1, false},
		{"[0] > [1]", 2, []int{0, 1}, 1, false},
		{"[1] > [2] > [3] > [3]", 3, []int{0, 1, 2}, 3, false},
		{"[10] > [2]", 10, []int{9, 1, 0, 2, 3, 4, 5, 6, 7, 8}, 2, false},
		{"", 3, []int{0, 1, 2}, 0, false},
		{"[a] > [b]", 2, []int{0, 1}, 0, false},
		{"[99999999999999999999] > [1]", 2, []int{0, 1}, 1, false},
	} {
		perm, found, clean := ParsePermutation(tc.answer, tc.n)
		if !slices.Equal(perm, tc.perm) || found != tc.found || clean != tc.clean {
			t.Errorf("%q (n=%d): %v, %d, %v; want %v, %d, %v", tc.answer, tc.n, perm, found, clean, tc.perm, tc.found, tc.clean)
		}
	}
}

// The listwise scorer refuses batching inside Rerank, and ranks a whole
// query's depth in one Score call otherwise.
func TestRerankListwise(t *testing.T) {
	srv := listwiseServer(t, nil, nil)
	defer srv.Close()
	text := map[string]string{"d1": "rel=1", "d2": "rel=8", "d3": "rel=4"}
	run := listRun(map[string][]string{"q": {"d1", "d2", "d3"}})
	docs := func(id string) (string, bool) { s, ok := text[id]; return s, ok }
	got, err := Rerank(context.Background(), run, map[string]string{"q": "x"}, docs, &Listwise{Chat: llmClient(t, srv)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []ir.Hit{{DocID: "d2", Score: 3}, {DocID: "d3", Score: 2}, {DocID: "d1", Score: 1}}; !slices.Equal(got["q"], want) {
		t.Errorf("got %v, want %v", got["q"], want)
	}
}

// TestPointwiseLogprobsWithoutYesNo: an answer whose first token's
// logprobs list neither yes nor no ("**Yes**", a leading newline) is
// scored from its text, and was not counted as such: the summary said
// nothing of answers scored 1 or 0 from their words.
func TestPointwiseLogprobsWithoutYesNo(t *testing.T) {
	srv := chatServer(t, nil, func(req chatReq) map[string]any {
		return map[string]any{
			"message": map[string]any{"role": "assistant", "content": "**Yes**"},
			"logprobs": map[string]any{"content": []any{map[string]any{"token": "**", "logprob": -0.01,
				"top_logprobs": []any{map[string]any{"token": "**", "logprob": -0.01}, map[string]any{"token": "\n", "logprob": -5}}}}},
		}
	})
	defer srv.Close()
	p := &Pointwise{Chat: llmClient(t, srv)}
	got, err := p.Score(context.Background(), "q", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []float64{1, 1}) {
		t.Errorf("scores %v, want [1 1] from the text", got)
	}
	if s := p.Stats(); s.NoLogprobs != 2 || !strings.Contains(strings.Join(s.Notes(), "; "), "2 scored from the answer text") {
		t.Errorf("stats %+v, notes %q: want 2 scored from the answer text", s, s.Notes())
	}
}
