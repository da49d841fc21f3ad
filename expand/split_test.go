package expand

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	cases := []struct {
		name string
		f    Format
		in   string
		want string
	}{
		{"think block", Think, "<think>\nlet me see\n</think>\n\nThe passage.\n", "The passage."},
		{"think: first of several </think>", Think, "a</think> b </think> c", "b </think> c"},
		{"think: no <think>, only </think>", Think, "reasoning</think>answer", "answer"},
		{"think: missing end tag returns the text unstripped", Think, "  <think> still thinking  ", "  <think> still thinking  "},
		{"think: nothing after the tag", Think, "x</think>  \n", ""},
		{"think: unterminated tag is not the tag", Think, " x</think", " x</think"},
		{"think: Python strip removes U+001C..U+001F", Think, "</think>\x1c\x1fA\x1e\x1d", "A"},
		{"think: strip removes U+3000 and NBSP but not ZWSP", Think, "</think>\u3000\u00a0A\u200b", "A\u200b"},

		{"final response across newlines (DOTALL)", FinalResponse,
			"## Thinking\nhmm\n\n## Final Response\n\nLine one.\nLine two.\n", "Line one.\nLine two."},
		{"final response: first occurrence", FinalResponse, "Final Response x Final Response y", "x Final Response y"},
		{"final response missing", FinalResponse, " ## Thinking\nonly thoughts ", " ## Thinking\nonly thoughts "},
		{"final response is case-sensitive", FinalResponse, "final response: x", "final response: x"},
		{"final response with empty answer", FinalResponse, "Thinking... Final Response\n\n", ""},
		{"final response glued to text", FinalResponse, "Final ResponseAnswer", "Answer"},

		{"solution", Solution, "<|begin_of_thought|>t<|end_of_thought|>\n<|begin_of_solution|>\n S \n<|end_of_solution|>", "S"},
		{"solution: first end after first begin", Solution,
			"<|begin_of_solution|>a<|end_of_solution|><|begin_of_solution|>b<|end_of_solution|>", "a"},
		{"solution: begin inside", Solution, "<|begin_of_solution|>a<|begin_of_solution|>b<|end_of_solution|>", "a<|begin_of_solution|>b"},
		{"solution: end missing", Solution, "<|begin_of_solution|> a ", "<|begin_of_solution|> a "},
		{"solution: end only before begin", Solution, "<|end_of_solution|>x<|begin_of_solution|>y", "<|end_of_solution|>x<|begin_of_solution|>y"},

		{"answer", Answer, "<think>search</think>\n<answer> Insulin \n</answer>", "Insulin"},
		{"answer: first of several", Answer, "<answer>a</answer><answer>b</answer>", "a"},
		{"answer spans newlines", Answer, "<answer>\nline1\nline2\n</answer>", "line1\nline2"},
		{"answer: close tag missing", Answer, " <answer>unfinished ", " <answer>unfinished "},
		{"answer: close before open only", Answer, "</answer><answer>x", "</answer><answer>x"},
		{"answer: nested open tag stays", Answer, "<answer>a<answer>b</answer>", "a<answer>b"},
		{"answer: empty", Answer, "<answer> </answer>", ""},

		{"plain keeps everything", Plain, " <think>x</think> <answer>y</answer> Final Response z ", " <think>x</think> <answer>y</answer> Final Response z "},
		{"unknown format keeps everything", Format(42), "a</think>b", "a</think>b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.f.Extract(c.in); got != c.want {
				t.Errorf("%v.Extract(%q) = %q, want %q", c.f, c.in, got, c.want)
			}
		})
	}
}

func TestFormatOf(t *testing.T) {
	want := map[string]Format{
		"r1-llama-8b": Think, "r1-qwen-32b": Think, "r1-llama-70b": Think, "qwq-32b": Think,
		"qwen3-32b": Think, "qwen3-8b": Think,
		"huatuo-o1-8b": FinalResponse, "huatuo-o1-70b": FinalResponse,
		"sky-32b":     Solution,
		"qwen-7b-ins": Answer, "qwen-3b-ins": Answer,
		// R2MED matches exact names, so these are non-reasoning.
		"qwen-7b": Plain, "qwen-32b": Plain, "qwen-72b": Plain, "llama-70b": Plain,
		"gpt4": Plain, "o3-mini": Plain, "qwen3-14b": Plain, "r1-qwen-7b": Plain,
		"QwQ-32B": Plain, "": Plain,
	}
	for llm, f := range want {
		if got := FormatOf(llm); got != f {
			t.Errorf("FormatOf(%q) = %v, want %v", llm, got, f)
		}
		if got := IsReasoningLLM(llm); got != (f != Plain) {
			t.Errorf("IsReasoningLLM(%q) = %v", llm, got)
		}
	}
	if n := len(reasoningLLMs); n != 11 {
		t.Errorf("%d reasoning LLMs, R2MED's r1_model_list has 11", n)
	}
	// Every published LLM name must resolve as the reference notes say.
	for _, llm := range LLMs() {
		reasoning := strings.HasPrefix(llm, "r1-") || strings.HasPrefix(llm, "huatuo-o1-") ||
			llm == "qwq-32b" || llm == "qwen3-32b" || strings.HasSuffix(llm, "-ins")
		if IsReasoningLLM(llm) != reasoning {
			t.Errorf("IsReasoningLLM(%q) = %v, want %v", llm, !reasoning, reasoning)
		}
	}
}

func TestFormatString(t *testing.T) {
	for f, want := range map[Format]string{Plain: "plain", Think: "think", FinalResponse: "final-response",
		Solution: "solution", Answer: "answer", Format(9): "Format(9)", Format(-1): "Format(-1)"} {
		if got := f.String(); got != want {
			t.Errorf("Format %d String() = %q, want %q", int(f), got, want)
		}
	}
}

// TestSplitMatchesPython replays outputs of R2MED's split_response_for_r1
// (src/base.py at 45cbac5) run under CPython 3.11 on random mixtures of the
// markers, ASCII and Unicode whitespace, and text, for every r1_model_list
// name and some others, plus every code point Python's str.strip removes.
func TestSplitMatchesPython(t *testing.T) {
	f, err := os.Open("testdata/split_python.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c struct {
			LLM       string `json:"llm"`
			In        string `json:"in"`
			Out       string `json:"out"`
			Reasoning bool   `json:"reasoning"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		if got := Split(c.LLM, c.In); got != c.Out {
			t.Errorf("Split(%q, %q) = %q, Python gives %q", c.LLM, c.In, got, c.Out)
		}
		if IsReasoningLLM(c.LLM) != c.Reasoning {
			t.Errorf("IsReasoningLLM(%q) = %v, Python's r1_model_list says %v", c.LLM, !c.Reasoning, c.Reasoning)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("only %d cases read", n)
	}
}
