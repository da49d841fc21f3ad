package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
)

// reply is one scripted model turn.
type reply struct {
	content, reasoning, finish string
	completion                 int
	status                     int    // non-zero: answer with this HTTP status
	raw                        string // non-empty: send as the body
}

// chatLog records what the model was sent.
type chatLog struct {
	mu       sync.Mutex
	requests []map[string]any
	calls    atomic.Int64
}

func (l *chatLog) last() map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests[len(l.requests)-1]
}

// scripted serves the turns in script by how many assistant turns the
// conversation already has, so concurrent conversations each get their own
// place in the script.
func scripted(t *testing.T, script func(query string, turn int, msgs []llm.Message) reply) (*llm.Client, *chatLog) {
	log := &chatLog{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.calls.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		var req struct{ Messages []llm.Message }
		json.Unmarshal(raw, &req)
		log.mu.Lock()
		log.requests = append(log.requests, body)
		log.mu.Unlock()
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		first := req.Messages[1].Content
		query := first[strings.LastIndex(first, "Question: ")+len("Question: "):]
		rp := script(query, turn, req.Messages)
		if rp.status != 0 {
			http.Error(w, "scripted failure", rp.status)
			return
		}
		if rp.raw != "" {
			io.WriteString(w, rp.raw)
			return
		}
		if rp.finish == "" {
			rp.finish = "stop"
		}
		msg := map[string]any{"role": "assistant", "content": rp.content}
		if rp.reasoning != "" {
			msg["reasoning_content"] = rp.reasoning
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": msg, "finish_reason": rp.finish}},
			"usage":   map[string]int{"prompt_tokens": 50, "completion_tokens": rp.completion},
		})
	}))
	t.Cleanup(s.Close)
	c, err := llm.New(llm.Options{BaseURL: s.URL, Model: "agent-model",
		HTTP: &httpx.Client{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return c, log
}

// corpus is a searcher over three fixed passages; it records queries.
type corpus struct {
	mu      sync.Mutex
	queries []string
	fail    bool
}

func (c *corpus) search(_ context.Context, q string, k int) ([]Passage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return nil, errors.New("index closed")
	}
	c.queries = append(c.queries, q)
	all := []Passage{
		{ID: "d1", Text: "Troponin rises within hours of myocardial necrosis.\nIt stays high for days."},
		{ID: "d2", Text: "ST elevation with chest pain means STEMI; reperfusion is urgent."},
		{ID: "d3", Text: "Pericarditis gives diffuse ST elevation."},
	}
	return all[:min(k, len(all))], nil
}

func TestSearchThenAnswer(t *testing.T) {
	chat, log := scripted(t, func(_ string, turn int, msgs []llm.Message) reply {
		switch turn {
		case 0:
			// The stop sequence cut the closing tag, as vLLM and OpenAI do.
			return reply{content: "I need facts. <search> troponin timing ", reasoning: "thinking", completion: 20}
		case 1:
			if !strings.Contains(msgs[len(msgs)-1].Content, "<information>\n[1] Troponin rises within hours of myocardial necrosis. It\n[2] ST elevation with chest pain means STEMI; reperfusion\n</information>") {
				return reply{content: "WRONG INFORMATION FORMAT"}
			}
			// Some servers keep the stop sequence.
			return reply{content: "<search>STEMI treatment</search>", completion: 20}
		}
		return reply{content: "Done.<answer>Acute STEMI: troponin rises, reperfusion by PCI.</answer>", completion: 20}
	})
	c := &corpus{}
	tr, err := Run(context.Background(), chat, c.search, "crushing chest pain for 2 hours", Config{K: 2, PassageWords: 8})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Stop != StopAnswer || tr.Fallback || tr.Expansion != "Acute STEMI: troponin rises, reperfusion by PCI." || tr.Answer != tr.Expansion {
		t.Fatalf("trace %+v", tr)
	}
	if strings.Join(c.queries, "|") != "troponin timing|STEMI treatment" || tr.Searches != 2 {
		t.Errorf("searches %q", c.queries)
	}
	if len(tr.Steps) != 3 || strings.Join(tr.Steps[0].Retrieved, ",") != "d1,d2" || tr.Steps[1].Search != "STEMI treatment" {
		t.Errorf("steps %+v", tr.Steps)
	}
	if tr.CompletionTokens != 60 || tr.PromptTokens != 150 || tr.Steps[2].PromptChars <= tr.Steps[0].PromptChars {
		t.Errorf("tokens %d/%d steps %+v", tr.PromptTokens, tr.CompletionTokens, tr.Steps)
	}
	last := log.last()
	if fmt.Sprint(last["stop"]) != "[</search>]" {
		t.Errorf("stop %v", last["stop"])
	}
	msgs := last["messages"].([]any)
	if len(msgs) != 6 {
		t.Fatalf("%d messages", len(msgs))
	}
	if a := msgs[2].(map[string]any)["content"]; a != "I need facts. <search> troponin timing</search>" {
		t.Errorf("assistant turn kept as %q", a)
	}
	if a := msgs[4].(map[string]any)["content"]; a != "<search>STEMI treatment</search>" {
		t.Errorf("second assistant turn kept as %q", a)
	}
	if first := msgs[1].(map[string]any)["content"].(string); !strings.Contains(first, "between <search> and </search>") || !strings.HasSuffix(first, "Question: crushing chest pain for 2 hours") {
		t.Errorf("prompt %q", first)
	}
}

func TestSearchO1Tags(t *testing.T) {
	chat, log := scripted(t, func(_ string, turn int, msgs []llm.Message) reply {
		if turn == 0 {
			return reply{content: "<|begin_search_query|>aortic dissection signs", completion: 5}
		}
		if !strings.HasPrefix(msgs[len(msgs)-1].Content, "<|begin_search_result|>\n[1] ") {
			return reply{content: "bad"}
		}
		return reply{content: "<answer>Aortic dissection</answer>", completion: 5}
	})
	tr, err := Run(context.Background(), chat, (&corpus{}).search, "tearing chest pain", Config{Protocol: SearchO1})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Stop != StopAnswer || tr.Expansion != "Aortic dissection" || tr.Protocol != expand.SearchO1 {
		t.Fatalf("trace %+v", tr)
	}
	if fmt.Sprint(log.last()["stop"]) != "[<|end_search_query|>]" {
		t.Errorf("stop %v", log.last()["stop"])
	}
}

func TestSearchInReasoning(t *testing.T) {
	chat, log := scripted(t, func(_ string, turn int, _ []llm.Message) reply {
		if turn == 0 {
			return reply{reasoning: "let me look it up <search>gout crystals", completion: 5}
		}
		return reply{content: "<answer>Gout: negatively birefringent urate crystals</answer>", completion: 5}
	})
	c := &corpus{}
	tr, err := Run(context.Background(), chat, c.search, "painful big toe", Config{})
	if err != nil || tr.Stop != StopAnswer || len(c.queries) != 1 || c.queries[0] != "gout crystals" {
		t.Fatalf("%+v %v %q", tr, err, c.queries)
	}
	// The reasoning is not sent back, so the kept assistant turn must hold
	// the search itself, or the results follow a question never asked.
	msgs := log.last()["messages"].([]any)
	if a := msgs[2].(map[string]any)["content"]; a != "<search>gout crystals</search>" {
		t.Errorf("assistant turn kept as %q", a)
	}
}

func TestBounds(t *testing.T) {
	always := func(_ string, turn int, _ []llm.Message) reply {
		return reply{content: fmt.Sprintf("<search>query %d</search>", turn), completion: 10}
	}
	t.Run("searches", func(t *testing.T) {
		chat, log := scripted(t, always)
		c := &corpus{}
		tr, err := Run(context.Background(), chat, c.search, "q", Config{MaxSearches: 2})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Stop != StopMaxSearches || !tr.Fallback || tr.Expansion != "q" || len(c.queries) != 2 || tr.Searches != 2 {
			t.Fatalf("trace %+v, searches %q", tr, c.queries)
		}
		if tr.Steps[2].Note == "" || log.calls.Load() != 4 {
			t.Errorf("steps %+v, %d calls", tr.Steps, log.calls.Load())
		}
	})
	t.Run("searches then answer", func(t *testing.T) {
		chat, log := scripted(t, func(q string, turn int, msgs []llm.Message) reply {
			if strings.Contains(msgs[len(msgs)-1].Content, "search limit is reached") {
				return reply{content: "<answer>final</answer>"}
			}
			return always(q, turn, msgs)
		})
		tr, err := Run(context.Background(), chat, (&corpus{}).search, "q", Config{MaxSearches: 1})
		if err != nil || tr.Stop != StopAnswer || tr.Expansion != "final" || log.calls.Load() != 3 {
			t.Fatalf("%+v %v", tr, err)
		}
	})
	t.Run("turns", func(t *testing.T) {
		chat, _ := scripted(t, always)
		tr, _ := Run(context.Background(), chat, (&corpus{}).search, "q", Config{MaxSearches: 10, MaxTurns: 3})
		if tr.Stop != StopMaxTurns || !tr.Fallback || len(tr.Steps) != 3 {
			t.Fatalf("trace %+v", tr)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		chat, log := scripted(t, func(_ string, turn int, _ []llm.Message) reply {
			return reply{content: fmt.Sprintf("<search>q%d</search>", turn), completion: 100}
		})
		tr, _ := Run(context.Background(), chat, (&corpus{}).search, "q", Config{TokenBudget: 250, MaxSearches: 10, Request: llm.Request{MaxTokens: 120}})
		if tr.Stop != StopMaxTokens || !tr.Fallback || len(tr.Steps) != 3 || tr.CompletionTokens != 300 {
			t.Fatalf("trace %+v", tr)
		}
		if mt := log.last()["max_tokens"]; mt != 50.0 {
			t.Errorf("last turn's max_tokens %v, want the 50 left", mt)
		}
		if mt := log.requests[0]["max_tokens"]; mt != 120.0 {
			t.Errorf("first turn's max_tokens %v, want the per-turn cap 120", mt)
		}
	})
	t.Run("cut off", func(t *testing.T) {
		chat, _ := scripted(t, func(string, int, []llm.Message) reply {
			return reply{content: "a long thought that never", finish: "length", completion: 10}
		})
		tr, _ := Run(context.Background(), chat, (&corpus{}).search, "q", Config{})
		if tr.Stop != StopMaxTokens || !tr.Fallback {
			t.Fatalf("trace %+v", tr)
		}
	})
}

func TestMalformedAndFailures(t *testing.T) {
	cases := map[string]struct {
		script func(string, int, []llm.Message) reply
		stop   string
		steps  int
	}{
		"no tags twice": {func(string, int, []llm.Message) reply { return reply{content: "I think it is gout."} }, StopMalformed, 2},
		"empty answer":  {func(string, int, []llm.Message) reply { return reply{content: "<answer> </answer>"} }, StopMalformed, 2},
		"empty search":  {func(string, int, []llm.Message) reply { return reply{content: "<search></search>"} }, StopMalformed, 2},
		"http 400":      {func(string, int, []llm.Message) reply { return reply{status: 400} }, StopLLMError, 1},
		"http 503":      {func(string, int, []llm.Message) reply { return reply{status: 503} }, StopLLMError, 1},
		"no choices":    {func(string, int, []llm.Message) reply { return reply{raw: `{"choices":[]}`} }, StopLLMError, 1},
		"bad json":      {func(string, int, []llm.Message) reply { return reply{raw: `{"choices":`} }, StopLLMError, 1},
		"fails later": {func(_ string, turn int, _ []llm.Message) reply {
			if turn == 0 {
				return reply{content: "<search>x</search>"}
			}
			return reply{status: 500}
		}, StopLLMError, 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			chat, _ := scripted(t, tc.script)
			tr, err := Run(context.Background(), chat, (&corpus{}).search, "the query", Config{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Stop != tc.stop || !tr.Fallback || tr.Expansion != "the query" || tr.Reason == "" || len(tr.Steps) != tc.steps {
				t.Errorf("trace %+v", tr)
			}
		})
	}
	t.Run("nudged then answers", func(t *testing.T) {
		chat, _ := scripted(t, func(_ string, turn int, _ []llm.Message) reply {
			if turn == 0 {
				return reply{content: "Hmm."}
			}
			return reply{content: "<answer>ok</answer>"}
		})
		tr, _ := Run(context.Background(), chat, (&corpus{}).search, "q", Config{})
		if tr.Stop != StopAnswer || tr.Steps[0].Note == "" {
			t.Errorf("trace %+v", tr)
		}
	})
	t.Run("searcher error", func(t *testing.T) {
		chat, _ := scripted(t, func(string, int, []llm.Message) reply { return reply{content: "<search>x</search>"} })
		_, err := Run(context.Background(), chat, (&corpus{fail: true}).search, "q", Config{})
		if err == nil || !strings.Contains(err.Error(), "index closed") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("bad prompt", func(t *testing.T) {
		chat, log := scripted(t, func(string, int, []llm.Message) reply { return reply{} })
		if _, err := Run(context.Background(), chat, (&corpus{}).search, "q", Config{Prompt: "{{.Nope}}"}); err == nil {
			t.Error("a prompt with an unknown field was accepted")
		}
		if log.calls.Load() != 0 {
			t.Error("requests sent")
		}
	})
}

func TestRunAll(t *testing.T) {
	chat, _ := scripted(t, func(q string, turn int, _ []llm.Message) reply {
		if q == "broken" {
			return reply{status: 400}
		}
		if turn == 0 {
			return reply{content: "<search>" + q + " facts</search>", completion: 3}
		}
		return reply{content: "<answer>passage on " + q + "</answer>", completion: 3}
	})
	var queries []ir.Query
	for i := range 12 {
		text := fmt.Sprintf("case %d", i)
		if i == 5 {
			text = "broken"
		}
		queries = append(queries, ir.Query{ID: fmt.Sprint(i), Text: text})
	}
	var progress atomic.Int64
	traces, err := RunAll(context.Background(), chat, (&corpus{}).search, queries, Config{}, 3, func(int, int) { progress.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if progress.Load() != 12 {
		t.Errorf("progress called %d times", progress.Load())
	}
	for i, tr := range traces {
		want := "passage on " + queries[i].Text
		if i == 5 {
			want = "broken"
		}
		if tr.QueryID != queries[i].ID || tr.Expansion != want {
			t.Errorf("trace %d: %+v", i, tr)
		}
	}
	if fb := Fallbacks(traces); len(fb) != 1 || fb[0] != "5" {
		t.Errorf("fallbacks %v", fb)
	}
	gens := Generations(queries, traces, "my-llm")
	applied, err := expand.Apply(queries, gens)
	if err != nil {
		t.Fatal(err)
	}
	// search-r1 with a non-reasoning label: R2MED's BM25 text is hy_doc.
	if applied[0].Text != "passage on case 0" || applied[5].Text != "broken" || gens[0].Method != expand.SearchR1 {
		t.Errorf("applied %+v", applied[:6])
	}

	if _, err := RunAll(context.Background(), chat, (&corpus{fail: true}).search, queries, Config{}, 3, nil); err == nil {
		t.Error("a searcher failure did not stop the batch")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunAll(ctx, chat, (&corpus{}).search, queries, Config{}, 3, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled batch: %v", err)
	}
}

// With a cache, a rerun replays the whole conversation without requests.
func TestCachedRerun(t *testing.T) {
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct{ Messages []llm.Message }
		json.NewDecoder(r.Body).Decode(&req)
		content := "<search>first</search>"
		if len(req.Messages) > 2 {
			content = "<answer>cached answer</answer>"
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}}}})
	}))
	defer s.Close()
	store := &llm.MemoryStore{}
	run := func() Trace {
		c, _ := llm.New(llm.Options{BaseURL: s.URL, Model: "m", Cache: store})
		tr, err := Run(context.Background(), c, (&corpus{}).search, "q", Config{Request: llm.Request{Seed: llm.Seed(42)}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	first := run()
	n := calls.Load()
	second := run()
	if calls.Load() != n || second.Expansion != first.Expansion || !second.Steps[0].Cached || !second.Steps[1].Cached {
		t.Errorf("rerun sent %d requests; %+v", calls.Load()-n, second)
	}
}
