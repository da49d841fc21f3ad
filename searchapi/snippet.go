package searchapi

import (
	"cmp"
	"slices"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/index"
)

// Snippets cost what the window they show costs, not what the document
// does: a hit's snippet is the start of its text, marked from the tokens
// the index file stores of each document's start (index.HeadTokens,
// highlight.Marked: no analysis at all), or, past what is stored,
// analyzed up to a little past the snippet's end only (highlight.Head);
// the query terms the whole document holds come from the terms the file
// stores per document (index.DocTerms), or its postings (bm25.Index.
// Holds), instead of analyzing its text. Where
// no BM25 part with the highlighting analyzer covers the corpus, the
// text is read and scanned whole, as it must be.

// lexical is how a request's snippets mark words: the analyzer of its
// first BM25 retriever, else the service's default one, and a BM25 part
// with that analyzer whose postings say which query terms a document
// holds (nil: the document's text is scanned).
type lexical struct {
	hl   *highlight.Highlighter
	post *retriever
}

func (s *Service) lexicalOf(rs []*retriever) lexical {
	for _, r := range rs {
		if r.hl != nil {
			return lexical{r.hl, r}
		}
	}
	return lexical{s.defaultHL, rs[0].corpus.terms}
}

// ix is the file whose postings are read, if any.
func (l lexical) ix() *index.Index {
	if l.post == nil {
		return nil
	}
	return l.post.ix
}

// matcher marks one query's terms in its hits.
type matcher struct {
	hl     *highlight.Highlighter
	set    map[string]bool
	terms  []string // the query's, in its order
	post   *bm25.Index
	postIx *index.Index
	ids    []int32 // terms' ids in post; -1 for one no document holds
	idSet  map[int32]bool
	byID   []idAt // the terms post holds, by id
	found  []bool
	toks   []index.HeadToken
	spans  []highlight.Span
}

// idAt is a query term's id and its place in the query.
type idAt struct {
	id int32
	at int
}

func (l lexical) matcher(query string) (*matcher, error) {
	m := &matcher{hl: l.hl}
	if l.post == nil {
		m.terms = l.hl.TermList(query)
	} else {
		// The query's tokens as its search analyzed them (remembered by
		// the index), not analyzed again.
		toks, err := l.post.ix.QueryTokens(query)
		if err != nil {
			return nil, err
		}
		m.terms = unique(toks)
	}
	if l.post == nil {
		return m, nil
	}
	b, err := l.post.ix.BM25()
	if err != nil {
		return nil, err
	}
	m.post, m.postIx, m.ids, m.idSet = b, l.post.ix, make([]int32, len(m.terms)), make(map[int32]bool, len(m.terms))
	for i, t := range m.terms {
		if id, ok := b.TermID(t); ok {
			m.ids[i] = id
			m.idSet[id] = true
			m.byID = append(m.byID, idAt{id, i})
		} else {
			m.ids[i] = -1
		}
	}
	slices.SortFunc(m.byID, func(a, b idAt) int { return cmp.Compare(a.id, b.id) })
	m.found = make([]bool, len(m.terms))
	return m, nil
}

// termSet is the query's terms as a set, for marking words by analysis
// (made when a hit needs it).
func (m *matcher) termSet() map[string]bool {
	if m.set == nil {
		m.set = make(map[string]bool, len(m.terms))
		for _, t := range m.terms {
			m.set[t] = true
		}
	}
	return m.set
}

// unique is toks each once, in the order they first occur.
func unique(toks []string) []string {
	out := make([]string, 0, len(toks))
	seen := make(map[string]bool, len(toks))
	for _, t := range toks {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// holds lists the query's terms document d holds, in the query's order:
// a merge of the document's stored terms with the query's, or a search
// of each term's postings where the file stores none.
func (m *matcher) holds(d int) ([]string, error) {
	dt, ok, err := m.postIx.DocTerms(d)
	if err != nil {
		return nil, err
	}
	var out []string
	if !ok {
		for i, id := range m.ids {
			if id >= 0 && m.post.Holds(id, int32(d)) {
				out = append(out, m.terms[i])
			}
		}
		return out, nil
	}
	clear(m.found)
	for i, j := 0, 0; i < len(m.byID) && j < len(dt); {
		switch q := m.byID[i]; {
		case q.id == dt[j]:
			m.found[q.at] = true
			i++
			j++
		case q.id < dt[j]:
			i++
		default:
			j++
		}
	}
	n := 0
	for _, f := range m.found {
		if f {
			n++
		}
	}
	out = make([]string, 0, n)
	for i, f := range m.found {
		if f {
			out = append(out, m.terms[i])
		}
	}
	return out, nil
}

// stored marks the first n bytes of document d from the tokens the file
// stores of its start, when they cover them; ok is false otherwise.
func (m *matcher) stored(d, n int) (segs []highlight.Segment, cut, ok bool, err error) {
	var covered int
	m.toks, covered, ok, err = m.postIx.HeadTokens(m.toks[:0], d)
	if !ok || err != nil {
		return nil, false, false, err
	}
	need := n + 1 // the cut looks at the character at n
	m.spans = m.spans[:0]
	for _, t := range m.toks {
		if t.Start > n {
			break
		}
		m.spans = append(m.spans, highlight.Span{Start: t.Start, End: t.End, Match: t.Term >= 0 && m.idSet[t.Term]})
		need = max(need, t.End)
	}
	head, size, err := m.postIx.DocHead(d, need)
	if err != nil || n > covered && covered < size {
		return nil, false, false, err
	}
	segs, cut = highlight.Marked(head, size, m.spans, n)
	return segs, cut, true, nil
}

// headSlack is how much of a document is read past the snippet's end to
// find where its last word ends.
const headSlack = 256

// snippet is the first n bytes of document d marked, whether the text
// goes on, and the query's terms the whole document holds.
func (m *matcher) snippet(ix *index.Index, d, n int) (segs []highlight.Segment, matched []string, cut bool, err error) {
	ok := false
	if m.post != nil {
		if segs, cut, ok, err = m.stored(d, n); err != nil {
			return nil, nil, false, err
		}
	}
	var head string
	var size int
	if !ok {
		if head, size, err = ix.DocHead(d, n+headSlack); err != nil {
			return nil, nil, false, err
		}
		segs, cut, ok = m.hl.Head(head, len(head) == size, m.termSet(), n)
	}
	if ok && m.post != nil {
		matched, err = m.holds(d)
		return segs, matched, cut, err
	}
	if size == 0 {
		if head, size, err = ix.DocHead(d, n+headSlack); err != nil {
			return nil, nil, false, err
		}
	}
	text := head
	if len(head) < size {
		if text, _, err = ix.DocHead(d, size); err != nil {
			return nil, nil, false, err
		}
	}
	var found []string
	segs, found, cut = m.hl.Snippet(text, m.termSet(), n)
	in := make(map[string]bool, len(found))
	for _, t := range found {
		in[t] = true
	}
	for _, t := range m.terms {
		if in[t] {
			matched = append(matched, t)
		}
	}
	return segs, matched, cut, nil
}
