package expand

import (
	"strconv"
	"strings"
)

// Format is how an LLM's raw output wraps the part R2MED keeps.
type Format int

const (
	// Plain output is used whole (non-reasoning models).
	Plain Format = iota
	// Think keeps what follows the first "</think>" (DeepSeek-R1 distills,
	// QwQ, Qwen3 in thinking mode).
	Think
	// FinalResponse keeps what follows the first "Final Response"
	// (HuatuoGPT-o1).
	FinalResponse
	// Solution keeps what lies between "<|begin_of_solution|>" and the next
	// "<|end_of_solution|>" (Sky-T1).
	Solution
	// Answer keeps the first "<answer>…</answer>" (Search-R1 checkpoints).
	Answer
)

var formatNames = [...]string{"plain", "think", "final-response", "solution", "answer"}

func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// reasoningLLMs is R2MED's r1_model_list with the branch of
// split_response_for_r1 each name takes. The two agree name for name, so
// "is a reasoning LLM" and "has an extraction format" are one fact here.
var reasoningLLMs = map[string]Format{
	"r1-llama-8b":   Think,
	"r1-qwen-32b":   Think,
	"r1-llama-70b":  Think,
	"qwq-32b":       Think,
	"qwen3-32b":     Think,
	"qwen3-8b":      Think,
	"huatuo-o1-8b":  FinalResponse,
	"huatuo-o1-70b": FinalResponse,
	"sky-32b":       Solution,
	"qwen-7b-ins":   Answer,
	"qwen-3b-ins":   Answer,
}

// FormatOf is the output format R2MED assumes for an LLM name. Membership is
// by exact name, as in R2MED, so an unlisted reasoning model is Plain.
func FormatOf(llm string) Format {
	return reasoningLLMs[llm] // the zero value is Plain
}

// IsReasoningLLM reports whether llm is in R2MED's r1_model_list: its
// generations are cut down to the answer, and BM25 then drops the query.
func IsReasoningLLM(llm string) bool { return FormatOf(llm) != Plain }

// Split is R2MED's split_response_for_r1(llm, output).
func Split(llm, output string) string { return FormatOf(llm).Extract(output) }

const (
	thinkEnd      = "</think>"
	finalResponse = "Final Response"
	solutionBegin = "<|begin_of_solution|>"
	solutionEnd   = "<|end_of_solution|>"
	answerBegin   = "<answer>"
	answerEnd     = "</answer>"
)

// Extract returns the part of output that format f keeps, or output
// unchanged when its markers are missing.
//
// Each case is the closed form of R2MED's Python: str.split(sep, 1) takes
// the first separator; re.search(r"Final Response\s*(.*)", DOTALL) matches
// at the first occurrence and runs to the end; the lazy solution and answer
// patterns match from the first opening tag to the first closing tag after
// it (if the first opening tag has none after it, no later one does). The
// regexes' \s* around the group only remove whitespace that the .strip()
// applied afterwards would remove anyway.
func (f Format) Extract(output string) string {
	switch f {
	case Think:
		if i := strings.Index(output, thinkEnd); i >= 0 {
			return pyStrip(output[i+len(thinkEnd):])
		}
	case FinalResponse:
		if i := strings.Index(output, finalResponse); i >= 0 {
			return pyStrip(output[i+len(finalResponse):])
		}
	case Solution:
		if s, ok := between(output, solutionBegin, solutionEnd); ok {
			return pyStrip(s)
		}
	case Answer:
		if s, ok := between(output, answerBegin, answerEnd); ok {
			return pyStrip(s)
		}
	}
	return output
}

// between returns the text from the first begin to the first end after it.
func between(s, begin, end string) (string, bool) {
	i := strings.Index(s, begin)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(begin):]
	j := strings.Index(rest, end)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// pyStrip is Python's str.strip() with no argument. Go's unicode.IsSpace
// lacks U+001C..U+001F, which Python counts as whitespace (bidi class B/S),
// so strings.TrimSpace would keep them.
func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }

func isPySpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1c && r <= ' ', r == 0x85, r == 0xa0:
		return true
	case r < 0x1680:
		return false
	case r == 0x1680, r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029,
		r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}
