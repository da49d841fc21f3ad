package searchapi

import (
	"fmt"
	"slices"
	"sync"

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

// snippets adds to hits (ranked, of corpus c) their snippets of n bytes
// and the query's terms each document holds.
func (l lexical) snippets(c *corpus, query string, hits []Hit, n int) error {
	m, err := l.matcher(query)
	if err != nil {
		return err
	}
	defer m.release()
	for i := range hits {
		h := &hits[i]
		d, ok := c.ix.Lookup(h.ID)
		if !ok {
			return fmt.Errorf("document %q was ranked but is not in the corpus", h.ID)
		}
		if h.Snippet, h.Matched, h.Truncated, err = m.snippet(c.ix, d, n); err != nil {
			return err
		}
	}
	keep(hits)
	return nil
}

// keep moves the hits' snippets and matched terms, made in a matcher's
// room, into two allocations of their exact size that the answer owns.
func keep(hits []Hit) {
	nseg, nstr := 0, 0
	for i := range hits {
		nseg += len(hits[i].Snippet)
		nstr += len(hits[i].Matched)
	}
	segs := make([]highlight.Segment, 0, nseg)
	strs := make([]string, 0, nstr)
	for i := range hits {
		h := &hits[i]
		if h.Snippet != nil {
			lo := len(segs)
			segs = append(segs, h.Snippet...)
			h.Snippet = segs[lo:len(segs):len(segs)]
		}
		if h.Matched != nil {
			lo := len(strs)
			strs = append(strs, h.Matched...)
			h.Matched = strs[lo:len(strs):len(strs)]
		}
	}
}

// matcher marks one query's terms in its hits. Its room is kept for the
// next query (matchers); what the answers hold is cut from allocations
// of their own.
type matcher struct {
	hl     *highlight.Highlighter
	set    map[string]bool
	terms  []string // the query's, each once, in its order
	post   *bm25.Index
	postIx *index.Index
	ids    []int32  // terms' ids in post; -1 for one no document holds
	in     []uint64 // a bit per term id of post: whether the query has it
	byID   []idAt   // the terms post holds, ascending
	found  []bool
	toks   []index.HeadToken
	spans  []highlight.Span
	mark   highlight.Marker
	// The hits' snippets and matched terms while they are made; keep
	// copies them out for the answer.
	segs []highlight.Segment
	strs []string
}

// matchers keeps matchers' room for the next request, up to keepRoom
// segments and terms.
var matchers sync.Pool

const keepRoom = 4096

// idAt is a query term's id (high 32 bits) and its place in the query
// (low): ascending by id as integers, sorted without a comparison func.
type idAt uint64

func (q idAt) id() int32 { return int32(q >> 32) }
func (q idAt) at() int   { return int(uint32(q)) }

func (l lexical) matcher(query string) (*matcher, error) {
	m, _ := matchers.Get().(*matcher)
	if m == nil {
		m = &matcher{}
	}
	m.hl = l.hl
	if l.post == nil {
		m.terms = l.hl.TermList(query)
		return m, nil
	}
	// The query's tokens and their ids as its search analyzed and looked
	// them up (remembered by the index), not again.
	toks, ids, err := l.post.ix.QueryTerms(query)
	if err != nil {
		m.release()
		return nil, err
	}
	b, err := l.post.ix.BM25()
	if err != nil {
		m.release()
		return nil, err
	}
	m.post, m.postIx = b, l.post.ix
	if words := (b.NumTerms() + 63) / 64; cap(m.in) < words {
		m.in = make([]uint64, words)
	} else {
		m.in = m.in[:words] // all clear: release clears what it set
	}
	// Each term once, in the order it first occurs: a known one by its
	// bit, one no document holds (a rare word, a typo) by its text.
	var unknown map[string]bool
	for i, t := range toks {
		if id := ids[i]; id >= 0 {
			if m.in[id>>6]&(1<<(id&63)) != 0 {
				continue
			}
			m.in[id>>6] |= 1 << (id & 63)
			m.byID = append(m.byID, idAt(uint64(id)<<32|uint64(len(m.terms))))
		} else {
			if unknown[t] {
				continue
			}
			if unknown == nil {
				unknown = map[string]bool{}
			}
			unknown[t] = true
		}
		m.terms = append(m.terms, t)
		m.ids = append(m.ids, ids[i])
	}
	slices.Sort(m.byID)
	m.found = slices.Grow(m.found[:0], len(m.terms))[:len(m.terms)]
	return m, nil
}

// release clears the matcher's room and keeps it for the next query.
func (m *matcher) release() {
	for _, q := range m.byID {
		m.in[q.id()>>6] = 0
	}
	clear(m.terms) // the index's memory of the query may go
	clear(m.strs)
	clear(m.segs) // nor the texts of the documents marked
	*m = matcher{terms: m.terms[:0], ids: m.ids[:0], in: m.in, byID: m.byID[:0], found: m.found[:0],
		toks: m.toks[:0], spans: m.spans[:0], mark: m.mark, segs: m.segs[:0], strs: m.strs[:0]}
	if cap(m.segs) > keepRoom || cap(m.strs) > keepRoom { // a rare large request's room goes
		m.segs, m.strs = nil, nil
	}
	matchers.Put(m)
}

// holdsQuery reports whether the query has the term with id t (≥ 0).
func (m *matcher) holdsQuery(t int32) bool { return m.in[t>>6]&(1<<(t&63)) != 0 }

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
	// A bit test per term of the document; a term of the query's finds
	// its place in byID after the last one found (both ascending).
	clear(m.found)
	n, i := 0, 0
	for _, t := range dt {
		if m.holdsQuery(t) {
			for m.byID[i].id() != t {
				i++
			}
			m.found[m.byID[i].at()] = true
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	lo := len(m.strs)
	for i, f := range m.found {
		if f {
			m.strs = append(m.strs, m.terms[i])
		}
	}
	return m.strs[lo:], nil
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
		m.spans = append(m.spans, highlight.Span{Start: t.Start, End: t.End, Match: t.Term >= 0 && m.holdsQuery(t.Term)})
		need = max(need, t.End)
	}
	head, size, err := m.postIx.DocHead(d, need)
	if err != nil || n > covered && covered < size {
		return nil, false, false, err
	}
	lo := len(m.segs)
	m.segs, cut = m.mark.Append(m.segs, head, size, m.spans, n)
	return m.segs[lo:], cut, true, nil
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
