package searchapi

import (
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/index"
)

// Snippets cost what the window they show costs, not what the document
// does: a hit's snippet is the start of its text, read from the index
// file up to a little past the snippet's end and highlighted there only
// (highlight.Head), and the query terms the whole document holds are
// looked up in a BM25 part's postings (bm25.Index.Holds) instead of
// analyzing its text. Where no BM25 part with the highlighting analyzer
// covers the corpus, the text is read and scanned whole, as it must be.

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
	hl    *highlight.Highlighter
	set   map[string]bool
	terms []string // the query's, in its order
	post  *bm25.Index
	ids   []int32 // terms' ids in post; -1 for one no document holds
}

func (l lexical) matcher(query string) (*matcher, error) {
	m := &matcher{hl: l.hl, terms: l.hl.TermList(query)}
	m.set = make(map[string]bool, len(m.terms))
	for _, t := range m.terms {
		m.set[t] = true
	}
	if l.post == nil {
		return m, nil
	}
	b, err := l.post.ix.BM25()
	if err != nil {
		return nil, err
	}
	m.post, m.ids = b, make([]int32, len(m.terms))
	for i, t := range m.terms {
		if id, ok := b.TermID(t); ok {
			m.ids[i] = id
		} else {
			m.ids[i] = -1
		}
	}
	return m, nil
}

// headSlack is how much of a document is read past the snippet's end to
// find where its last word ends.
const headSlack = 256

// snippet is the first n bytes of document d marked, whether the text
// goes on, and the query's terms the whole document holds.
func (m *matcher) snippet(ix *index.Index, d, n int) (segs []highlight.Segment, matched []string, cut bool, err error) {
	head, size, err := ix.DocHead(d, n+headSlack)
	if err != nil {
		return nil, nil, false, err
	}
	whole := len(head) == size
	segs, cut, ok := m.hl.Head(head, whole, m.set, n)
	if ok && m.post != nil {
		for i, id := range m.ids {
			if id >= 0 && m.post.Holds(id, int32(d)) {
				matched = append(matched, m.terms[i])
			}
		}
		return segs, matched, cut, nil
	}
	text := head
	if !whole {
		if text, _, err = ix.DocHead(d, size); err != nil {
			return nil, nil, false, err
		}
	}
	var found []string
	segs, found, cut = m.hl.Snippet(text, m.set, n)
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
