package tokenizer

import (
	"sync"
	"unicode/utf8"
)

// Tokenizer turns text into model inputs. It is immutable once loaded and
// safe for concurrent use; per-call scratch space comes from a pool.
type Tokenizer struct {
	norm     normalizer // nil: text passes unchanged
	pre      preTokenizer
	wp       wordPiece
	raw      *matcher // added tokens matched on the input text
	normed   *matcher // added tokens matched on normalized text
	single   template
	pair     template
	trunc    truncation // maxLen 0: none
	padding  padding
	tokens   []string // id → token, for Encoding.Tokens
	nIDs     int
	scratchs sync.Pool
}

// Encoding is one tokenized input: ids with special tokens, the segment
// (token type) of each, an all-ones attention mask, and the token strings.
type Encoding struct {
	IDs, TypeIDs, AttentionMask []int64
	Tokens                      []string
	// Cut is how many of the text's tokens truncation removed to fit the
	// maximum length (0: the text fit whole).
	Cut int
}

// Batch is a padded batch in row-major order: Rows sequences of Len
// tokens each, padded with the pad id, pad type id and mask 0 on the side
// tokenizer.json's padding names (right unless it says Left).
type Batch struct {
	IDs, TypeIDs, AttentionMask []int64
	Rows, Len                   int
}

type template struct {
	items []templateItem
	added int // special tokens the template adds
}

// templateItem is a run of special token ids, or (seq 0 or 1) one of the
// input sequences, all with one type id.
type templateItem struct {
	ids    []int32
	seq    int // -1 for special tokens
	typeID int64
}

type truncStrategy uint8

const (
	longestFirst truncStrategy = iota
	onlyFirst
	onlySecond
)

type truncation struct {
	maxLen   int
	strategy truncStrategy
	left     bool // keep the end of the sequence
}

type padding struct {
	id, typeID int64
	left       bool
	multipleOf int
	fixed      int
}

type scratch struct {
	src       []byte // the text being tokenized
	norm, tmp []byte
	pieces    []piece
	pieces2   []piece
	spans     []span
	a, b      []int32
}

func (t *Tokenizer) getScratch() *scratch {
	if s, ok := t.scratchs.Get().(*scratch); ok {
		return s
	}
	return new(scratch)
}

func (t *Tokenizer) putScratch(s *scratch) {
	// Keep pooled buffers bounded so one huge document does not pin memory.
	const keep = 1 << 20
	if cap(s.src) > keep || cap(s.norm) > keep || cap(s.tmp) > keep || cap(s.a) > keep/4 || cap(s.b) > keep/4 || cap(s.spans) > keep/8 {
		return
	}
	t.scratchs.Put(s)
}

// tokenize appends the ids of text (no special tokens) to out.
func (t *Tokenizer) tokenize(text string, sc *scratch, out []int32) []int32 {
	// The steps work on bytes; the pooled buffer spares an allocation per
	// text (a plain []byte(text) escapes through the normalizer interface).
	if utf8.ValidString(text) {
		sc.src = append(sc.src[:0], text...)
	} else {
		sc.src = appendValid(sc.src[:0], text)
	}
	src := sc.src
	sc.pieces = t.raw.split(src, sc.pieces[:0])
	for _, p := range sc.pieces {
		if p.id >= 0 {
			out = append(out, p.id)
			continue
		}
		seg := src[p.start:p.end]
		if t.norm != nil {
			sc.norm, sc.tmp = t.norm.normalize(sc.norm[:0], seg, sc.tmp)
			seg = sc.norm
		}
		sc.pieces2 = t.normed.split(seg, sc.pieces2[:0])
		for _, q := range sc.pieces2 {
			if q.id >= 0 {
				out = append(out, q.id)
				continue
			}
			part := seg[q.start:q.end]
			sc.spans = t.pre.words(part, sc.spans[:0])
			for _, w := range sc.spans {
				out = t.wp.tokenize(part[w.start:w.end], out)
			}
		}
	}
	return out
}

// appendValid appends s with each invalid byte replaced by U+FFFD, as
// decoding rune by rune would; tokenizer.json's Rust side only ever sees
// valid UTF-8.
func appendValid(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += size
	}
	return b
}

// Encode tokenizes one text and adds the special tokens of the single
// template. maxLen > 0 truncates to maxLen tokens including the special
// ones; maxLen <= 0 applies tokenizer.json's truncation, if any.
func (t *Tokenizer) Encode(text string, maxLen int) Encoding {
	sc := t.getScratch()
	defer t.putScratch(sc)
	sc.a = t.tokenize(text, sc, sc.a[:0])
	a, _ := t.truncate(sc.a, nil, maxLen, &t.single)
	e := t.build(&t.single, a, nil)
	e.Cut = len(sc.a) - len(a)
	return e
}

// EncodePair tokenizes a text pair (query and passage for a cross-encoder)
// with the pair template: [CLS] a [SEP] b [SEP] for BERT, type ids 0 then 1.
// Truncation follows tokenizer.json's strategy (longest_first unless it
// says otherwise), as HF does.
func (t *Tokenizer) EncodePair(a, b string, maxLen int) Encoding {
	sc := t.getScratch()
	defer t.putScratch(sc)
	sc.a = t.tokenize(a, sc, sc.a[:0])
	sc.b = t.tokenize(b, sc, sc.b[:0])
	ta, tb := t.truncate(sc.a, sc.b, maxLen, &t.pair)
	e := t.build(&t.pair, ta, tb)
	e.Cut = len(sc.a) + len(sc.b) - len(ta) - len(tb)
	return e
}

// Count returns the number of tokens Encode would produce without
// truncation, special tokens included: the measure for token budgets.
func (t *Tokenizer) Count(text string) int {
	sc := t.getScratch()
	defer t.putScratch(sc)
	sc.a = t.tokenize(text, sc, sc.a[:0])
	return len(sc.a) + t.single.added
}

// truncate cuts a (and b) so that they and the template's special tokens
// fit in maxLen, with HF's truncate_encodings rules.
func (t *Tokenizer) truncate(a, b []int32, maxLen int, tpl *template) ([]int32, []int32) {
	tr := t.trunc
	if maxLen > 0 {
		tr.maxLen = maxLen
	}
	if tr.maxLen <= 0 {
		return a, b
	}
	limit := max(tr.maxLen-tpl.added, 0)
	total := len(a) + len(b)
	if total <= limit {
		return a, b
	}
	cut := func(s []int32, n int) []int32 {
		if n >= len(s) {
			return s
		}
		if tr.left {
			return s[len(s)-n:]
		}
		return s[:n]
	}
	if b == nil {
		return cut(a, limit), nil
	}
	remove := total - limit
	switch {
	case tr.strategy == onlyFirst && len(a) > remove:
		return cut(a, len(a)-remove), b
	case tr.strategy == onlySecond && len(b) > remove:
		return a, cut(b, len(b)-remove)
	}
	// longest_first (also where only_first/only_second cannot fit, which
	// HF reports as an error), as tokenizers' truncate_encodings does: the
	// shorter text stays whole if the longer can take the rest; otherwise
	// each gets half and the odd token goes to the longer text, except
	// that when even the shorter text reaches max_length itself (before
	// room is reserved for special tokens) the odd token goes to the second
	// text. The last rule is not in any published source we know of; it is
	// what tokenizers@0.23.2 answers on a grid of 1,024 lengths.
	n1, n2 := len(a), len(b)
	if min(n1, n2) >= tr.maxLen {
		return cut(a, limit/2), cut(b, limit/2+limit%2)
	}
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 > limit {
		n2 = n1
	} else {
		n2 = max(n1, limit-n1)
	}
	if n1+n2 > limit {
		n1 = limit / 2
		n2 = n1 + limit%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return cut(a, n1), cut(b, n2)
}

func (t *Tokenizer) build(tpl *template, a, b []int32) Encoding {
	n := tpl.added + len(a) + len(b)
	buf := make([]int64, 3*n)
	e := Encoding{
		IDs:           buf[:0:n],
		TypeIDs:       buf[n : n : 2*n],
		AttentionMask: buf[2*n : 3*n],
		Tokens:        make([]string, 0, n),
	}
	for _, it := range tpl.items {
		ids := it.ids
		switch it.seq {
		case 0:
			ids = a
		case 1:
			ids = b
		}
		for _, id := range ids {
			e.IDs = append(e.IDs, int64(id))
			e.TypeIDs = append(e.TypeIDs, it.typeID)
			e.Tokens = append(e.Tokens, t.tokens[id])
		}
	}
	for i := range e.AttentionMask {
		e.AttentionMask[i] = 1
	}
	return e
}

// Pad right-pads (left-pads, when tokenizer.json says so) the encodings to
// the longest among them, rounded up to padding.pad_to_multiple_of, or to a
// Fixed padding length when that is longer.
func (t *Tokenizer) Pad(encs []Encoding) Batch {
	l := t.padding.fixed
	for _, e := range encs {
		l = max(l, len(e.IDs))
	}
	if m := t.padding.multipleOf; m > 0 && l%m != 0 {
		l += m - l%m
	}
	rows := len(encs)
	buf := make([]int64, 3*rows*l)
	bt := Batch{IDs: buf[:rows*l], TypeIDs: buf[rows*l : 2*rows*l], AttentionMask: buf[2*rows*l:], Rows: rows, Len: l}
	for r, e := range encs {
		row := r * l
		off := 0
		if t.padding.left {
			off = l - len(e.IDs)
		}
		for i := range l {
			j := i - off
			if j >= 0 && j < len(e.IDs) {
				bt.IDs[row+i] = e.IDs[j]
				bt.TypeIDs[row+i] = e.TypeIDs[j]
				bt.AttentionMask[row+i] = 1
				if j < len(e.AttentionMask) {
					bt.AttentionMask[row+i] = e.AttentionMask[j]
				}
				continue
			}
			bt.IDs[row+i] = t.padding.id
			bt.TypeIDs[row+i] = t.padding.typeID
		}
	}
	return bt
}

// PadID is the id Pad fills with.
func (t *Tokenizer) PadID() int64 { return t.padding.id }

// VocabSize is the number of distinct token ids: the model's vocabulary
// plus added tokens outside it (HF's get_vocab_size(true)).
func (t *Tokenizer) VocabSize() int { return t.nIDs }

// MaxLength is tokenizer.json's truncation max_length, 0 when it has none.
func (t *Tokenizer) MaxLength() int { return t.trunc.maxLen }
