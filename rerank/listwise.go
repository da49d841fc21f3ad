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
	window, step := l.Window, l.Step
	if window == 0 {
		window = 20
	}
	if step == 0 {
		step = 10
	}
	if window < 2 || step < 1 || step > window {
		return nil, fmt.Errorf("listwise window %d and step %d: need window ≥ 2 and 1 ≤ step ≤ window", window, step)
	}
	n := len(docs)
	order := make([]int, n) // order[pos] is the document at position pos
	for i := range order {
		order[i] = i
	}
	for end := n; end > 0; end -= step {
		start := max(end-window, 0)
		if err := l.rankWindow(ctx, query, docs, order[start:end]); err != nil {
			return nil, err
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

// rankWindow asks for a permutation of the documents in win and reorders
// win by it.
func (l *Listwise) rankWindow(ctx context.Context, query string, docs []string, win []int) error {
	if len(win) < 2 {
		return nil
	}
	msgs := ListwiseMessages(query, passages(docs, win, l.MaxWords))
	resp, err := l.Chat.Chat(ctx, llm.Request{Model: l.Model, Messages: msgs, MaxTokens: l.MaxTokens})
	if err != nil {
		return err
	}
	atomic.AddInt64(&l.stats.Calls, 1)
	perm, found, clean := ParsePermutation(resp.Content, len(win))
	switch {
	case found == 0:
		atomic.AddInt64(&l.stats.Unparsed, 1)
	case !clean:
		atomic.AddInt64(&l.stats.Partial, 1)
	}
	old := append([]int(nil), win...)
	for i, p := range perm {
		win[i] = old[p]
	}
	return nil
}

func passages(docs []string, win []int, maxWords int) []string {
	out := make([]string, len(win))
	for i, d := range win {
		out[i] = strings.Join(strings.Fields(truncateWords(docs[d], maxWords)), " ")
	}
	return out
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
	nums := bracketed(answer)
	if len(nums) == 0 {
		nums = digitRuns(answer)
	}
	seen := make([]bool, n)
	perm = make([]int, 0, n)
	clean = len(nums) == n
	for _, s := range nums {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > n {
			clean = false
			continue
		}
		if seen[v-1] {
			clean = false
			continue
		}
		seen[v-1] = true
		perm = append(perm, v-1)
	}
	found = len(perm)
	for i, ok := range seen {
		if !ok {
			perm = append(perm, i)
		}
	}
	return perm, found, clean && found == n
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
