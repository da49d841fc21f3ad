package rerank

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/r2med/r2med/llm"
)

// Listwise ranks documents with an LLM in the manner of RankGPT (Sun et
// al., 2023): the model sees a window of numbered passages and answers
// with a permutation ("[3] > [1] > [2]"); windows of Window passages slide
// from the bottom of the list to the top by Step, so a relevant passage
// can rise through several windows in one pass. With 100 documents,
// window 20 and step 10 that is RankGPT's nine calls; a list of at most
// Window documents takes one call. Unlike RankGPT's loop, which stops
// before a window that would start above the list, the last window always
// ends at the top, so any list length is ranked to its first place.
//
// Scores are n − position in the final ranking, so Rerank's sort keeps
// it. The prompt follows RankGPT's conversation structure (passages fed
// as user turns, each acknowledged) in our own wording.
type Listwise struct {
	Chat  Chatter
	Model string
	// Window and Step: 0 means RankGPT's 20 and 10.
	Window, Step int
	// MaxWords cuts each passage to its first MaxWords words; 0 means 300
	// (RankGPT's), negative means no cut.
	MaxWords int
	// MaxTokens of an answer; 0 means the server's default.
	MaxTokens int

	stats Stats
}

// Listwise reports that the scores only order one call's documents.
func (l *Listwise) Listwise() bool { return true }

// Stats returns the counts so far.
func (l *Listwise) Stats() Stats { return l.stats.snapshot() }

// Score ranks docs by sliding windows and returns n − final position; the
// scores order this call's documents only (see Lister).
func (l *Listwise) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	if l.Chat == nil {
		return nil, fmt.Errorf("listwise reranker has no LLM client")
	}
	return slideWindows(ctx, len(docs), l.Window, l.Step, func(ctx context.Context, _ int, win []int) error {
		return l.rankWindow(ctx, query, docs, win)
	})
}

// slideWindows is RankGPT's sliding-window pass over n documents, shared
// by the listwise rerankers (Listwise, InsertRank, ReasonRank): windows of
// window documents (0 means 20) move from the bottom of the list to the
// top by step (0 means 10), and rank reorders each window in place. rank
// gets the window's number in call order and the window, a slice of the
// current order whose values are indices into the n documents. A window
// of one document is not ranked. The scores returned are n − final
// position, so Rerank's sort keeps the final order.
func slideWindows(ctx context.Context, n, window, step int, rank func(ctx context.Context, call int, win []int) error) ([]float64, error) {
	if window == 0 {
		window = DefaultWindow
	}
	if step == 0 {
		step = DefaultStep
	}
	if window < 2 || step < 1 || step > window {
		return nil, fmt.Errorf("listwise window %d and step %d: need window ≥ 2 and 1 ≤ step ≤ window", window, step)
	}
	order := make([]int, n) // order[pos] is the document at position pos
	for i := range order {
		order[i] = i
	}
	call := 0
	for end := n; end > 0; end -= step {
		start := max(end-window, 0)
		if end-start >= 2 {
			if err := rank(ctx, call, order[start:end]); err != nil {
				return nil, err
			}
			call++
		}
		if start == 0 {
			break
		}
	}
	scores := make([]float64, n)
	for pos, d := range order {
		scores[d] = float64(n - pos)
	}
	return scores, nil
}

// permute reorders win by perm (0-based positions in win, best first).
func permute(win, perm []int) {
	old := append([]int(nil), win...)
	for i, p := range perm {
		win[i] = old[p]
	}
}

// rankWindow asks for a permutation of the documents in win and reorders
// win by it.
func (l *Listwise) rankWindow(ctx context.Context, query string, docs []string, win []int) error {
	msgs := ListwiseMessages(query, passages(docs, win, l.MaxWords))
	resp, err := l.Chat.Chat(ctx, llm.Request{Model: l.Model, Messages: msgs, MaxTokens: l.MaxTokens})
	if err != nil {
		return err
	}
	l.stats.answer(resp)
	perm, r := ParseRanking(resp.Content, len(win))
	l.stats.repaired(r)
	permute(win, perm)
	return nil
}

func passages(docs []string, win []int, maxWords int) []string {
	out := make([]string, len(win))
	for i, d := range win {
		out[i] = oneLine(docs[d], maxWords)
	}
	return out
}

// oneLine is a passage as listwise prompts show it: cut to its first
// maxWords words (see truncateWords), white space collapsed to single
// spaces, so each passage is one line.
func oneLine(text string, maxWords int) string {
	return strings.Join(strings.Fields(truncateWords(text, maxWords)), " ")
}

// windowLLM ranks windows of candidates with an LLM from a template: the
// shared body of InsertRank and ReasonRank. Each window's answer is parsed
// with ParseRanking (the part inside <answer> </answer> when there is
// one), its repairs counted in stats, the window reordered, and the
// exchange traced.
type windowLLM struct {
	chat                Chatter
	model, method       string
	prompts             *Prompts
	maxWords, maxTokens int
	stats               *Stats
	reasoning           bool     // count answers without reasoning
	shown               []string // InsertRank: the score (or rank) shown per candidate
	scale               string
	ranksOnly           bool   // InsertRank: the first stage gave ranks alone
	firstStage          string // InsertRank: what shown is, for the trace
	qid, query          string
	cands               []Candidate
}

func (w *windowLLM) rank(ctx context.Context, call int, win []int) error {
	lp := ListPrompt{Query: w.query, Num: len(win), Passages: make([]PromptPassage, len(win)), ScoreScale: w.scale, RanksOnly: w.ranksOnly}
	var shown []string
	for i, d := range win {
		lp.Passages[i] = PromptPassage{N: i + 1, Text: oneLine(w.cands[d].Text, w.maxWords), Rank: w.cands[d].Rank}
		if w.shown != nil {
			if !w.ranksOnly {
				lp.Passages[i].Score = w.shown[d]
			}
			shown = append(shown, w.shown[d])
		}
	}
	msgs, err := w.prompts.Messages(w.method, lp)
	if err != nil {
		return err
	}
	resp, err := w.chat.Chat(ctx, llm.Request{Model: w.model, Messages: msgs, MaxTokens: w.maxTokens})
	if err != nil {
		return err
	}
	w.stats.answer(resp)
	answer, reasoning := answerPart(resp)
	if w.reasoning && strings.TrimSpace(reasoning) == "" {
		atomic.AddInt64(&w.stats.NoReasoning, 1)
	}
	perm, r := ParseRanking(answer, len(win))
	w.stats.repaired(r)
	asked := candidateIDs(w.cands, win)
	permute(win, perm)
	emitTrace(ctx, Trace{
		QueryID: w.qid, Step: call, Docs: asked, Reasoning: reasoning, Answer: resp.Content,
		FinishReason: resp.FinishReason, FirstStage: w.firstStage, Shown: shown,
		Ranking: candidateIDs(w.cands, win), Repair: &r, Fallback: r.Named == 0,
	})
	return nil
}

// answerPart splits a listwise answer into the ranking text and the
// reasoning: the ranking is what lies inside the last <answer> (to its
// </answer>, or to the end when the output was cut off), or the whole
// content when there is no such tag; the reasoning is the server's
// reasoning field or <think> block, else the content before <answer>.
func answerPart(r llm.Response) (answer, reasoning string) {
	answer, reasoning = r.Content, r.Reasoning
	i := strings.LastIndex(answer, "<answer>")
	if i < 0 {
		return answer, reasoning
	}
	if reasoning == "" {
		reasoning = strings.TrimSpace(answer[:i])
	}
	answer = answer[i+len("<answer>"):]
	if j := strings.Index(answer, "</answer>"); j >= 0 {
		answer = answer[:j]
	}
	return answer, reasoning
}

// ListwiseMessages is the conversation for one window: an instruction,
// each passage as a numbered user turn the assistant acknowledges, and the
// request for a permutation.
func ListwiseMessages(query string, passages []string) []llm.Message {
	n := len(passages)
	msgs := make([]llm.Message, 0, 2*n+4)
	msgs = append(msgs,
		llm.System("You are a ranking assistant: you order passages by how well they help answer a search query."),
		llm.User(fmt.Sprintf("I will give you %d passages, each marked with a number in brackets. You will rank them by their relevance to this query: %s", n, query)),
		llm.Assistant("Understood. Please send the passages."),
	)
	for i, p := range passages {
		msgs = append(msgs, llm.User(fmt.Sprintf("[%d] %s", i+1, p)), llm.Assistant(fmt.Sprintf("Received passage [%d].", i+1)))
	}
	msgs = append(msgs, llm.User(fmt.Sprintf("Query: %s\nRank the %d passages above from the most to the least relevant to the query. "+
		"Answer with their numbers only, most relevant first, in the form [2] > [1] > [3], and nothing else.", query, n)))
	return msgs
}

// ParsePermutation reads an LLM's ranking of n passages numbered from 1,
// such as "[3] > [1] > [2]", as 0-based indices best first, repaired the
// way RankGPT repairs it: numbers out of range are dropped, a repeated
// number counts at its first place, and passages never named follow in
// their original order. The numbers read are the bracketed ones when the
// answer has any, otherwise every run of digits ("3 > 1 > 2", "3, 1, 2"),
// so a bracketed answer's prose ("the 20 passages") is not taken for a
// ranking. found is the number of distinct passages named, and clean
// reports an answer that named every passage exactly once and nothing
// else.
func ParsePermutation(answer string, n int) (perm []int, found int, clean bool) {
	perm, r := ParseRanking(answer, n)
	return perm, r.Named, r.Clean()
}

// Repair counts what ParseRanking had to mend in an answer.
type Repair struct {
	Named      int // distinct passages named in range
	Missing    int // passages never named, appended in their input order
	Repeated   int // numbers naming a passage already named (dropped)
	OutOfRange int // numbers outside 1..n (dropped)
	// Quoted counts GroupRank scores written as quoted numbers ("3"),
	// read as the numbers.
	Quoted int `json:",omitempty"`
}

// Clean reports an answer that named every passage exactly once and
// nothing else.
func (r Repair) Clean() bool { return r.Missing == 0 && r.Repeated == 0 && r.OutOfRange == 0 }

// ParseRanking is ParsePermutation with the repairs counted: the same
// permutation, and how many passages were missing, repeated or out of
// range. Repairs are deterministic: the first mention of a passage
// counts, and missing passages keep their input order below the named
// ones. An answer naming none (Named 0) gives the input order.
func ParseRanking(answer string, n int) (perm []int, r Repair) {
	nums := bracketed(answer)
	if len(nums) == 0 {
		nums = digitRuns(answer)
	}
	seen := make([]bool, n)
	perm = make([]int, 0, n)
	for _, s := range nums {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > n {
			r.OutOfRange++
			continue
		}
		if seen[v-1] {
			r.Repeated++
			continue
		}
		seen[v-1] = true
		perm = append(perm, v-1)
	}
	r.Named = len(perm)
	for i, ok := range seen {
		if !ok {
			perm = append(perm, i)
			r.Missing++
		}
	}
	return perm, r
}

// bracketed returns the digits of every "[digits]" in s.
func bracketed(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			return out
		}
		s = s[i+1:]
		j := 0
		for j < len(s) && s[j] == ' ' {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k > j && k < len(s) && s[k] == ']' {
			out = append(out, strings.TrimSpace(s[j:k]))
		}
	}
}

func digitRuns(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}
