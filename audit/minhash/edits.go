package minhash

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/analysis"
)

// Defaults of Edits' zero fields.
const (
	DefaultEditMinWords        = 5
	DefaultEditContentMinWords = 6
	DefaultEditMaxWords        = 32
)

// Edits says which short texts are near-duplicates by word edits: two
// texts whose normalised word sequences differ by at most one word
// replaced, dropped or added (word edit distance ≤ 1), the longer of them
// of MinWords to MaxWords words. Word shingles cannot see these: a
// six-word claim with one word replaced shares 5 of its 7 distinct words
// with the original, Jaccard 0.71, under the default 0.8. The similarity
// reported is 1 − edits / words of the longer text.
//
// One content word replaced by another in a very short text changes what
// it says as often as it copies it: NFCorpus's other splits hold "Are
// dates good for you?" beside the test query "Are avocados good for you?".
// Such a pair counts only from ContentMinWords words (6: the shortest
// claims a benchmark of this kind holds, where one word in six replaced
// is still a copy of the other five in order, similarity 0.833); a
// function word (Lucene's English stop words) replaced, or by a word, or
// any word dropped or added, counts from MinWords. Six-word titles one
// content word apart that are different articles ("Phytates for the
// prevention of cancer" / "… treatment of cancer") are therefore reported,
// with measure word_edits and their similarity, as near-copies: by form
// they are, and an audit that let them pass would let a planted six-word
// claim pass too. Texts of four words or fewer are left alone ("heart
// attack symptoms", "heart attack treatment").
//
// The zero value works: 5, 6 and 32 words. Longer texts are left to
// MinHash, whose Jaccard already sees one edit among ten distinct words.
type Edits struct {
	// Off turns the detector off.
	Off bool `json:"off,omitempty"`
	// MinWords is the fewest words the longer text of a pair may have; 0
	// means DefaultEditMinWords.
	MinWords int `json:"min_words"`
	// ContentMinWords is the fewest words the longer text may have when
	// the edit replaces a content word by another; 0 means
	// DefaultEditContentMinWords.
	ContentMinWords int `json:"content_min_words"`
	// MaxWords is the most words an indexed text may have (a probe one
	// more, as it may have one word added); 0 means DefaultEditMaxWords.
	MaxWords int `json:"max_words"`
}

// Resolved fills the defaults and checks the spec.
func (e Edits) Resolved() (Edits, error) {
	if e.Off {
		return Edits{Off: true}, nil
	}
	if e.MinWords == 0 {
		e.MinWords = DefaultEditMinWords
	}
	if e.ContentMinWords == 0 {
		e.ContentMinWords = max(DefaultEditContentMinWords, e.MinWords)
	}
	if e.MaxWords == 0 {
		e.MaxWords = DefaultEditMaxWords
	}
	if e.MinWords < 2 || e.ContentMinWords < e.MinWords || e.MaxWords < e.ContentMinWords || e.MaxWords > 255 {
		return e, fmt.Errorf("minhash: word edits with min %d, content min %d, max %d words; want 2 ≤ min ≤ content min ≤ max ≤ 255", e.MinWords, e.ContentMinWords, e.MaxWords)
	}
	return e, nil
}

// String writes the spec as ParseEdits reads it: "off" or
// "MIN,CONTENT,MAX" with the defaults filled in.
func (e Edits) String() string {
	r, err := e.Resolved()
	if err != nil {
		return fmt.Sprintf("%d,%d,%d", e.MinWords, e.ContentMinWords, e.MaxWords)
	}
	if r.Off {
		return "off"
	}
	return fmt.Sprintf("%d,%d,%d", r.MinWords, r.ContentMinWords, r.MaxWords)
}

// ParseEdits reads "off", "" (the defaults) or "MIN,CONTENT,MAX" (the
// numbers of words of Edits' fields), checked.
func ParseEdits(s string) (Edits, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Edits{}.Resolved()
	}
	if strings.EqualFold(s, "off") {
		return Edits{Off: true}, nil
	}
	parts := strings.Split(s, ",")
	var n [3]int
	if len(parts) != 3 {
		return Edits{}, fmt.Errorf("%q: want off or MIN,CONTENT,MAX words (the default: %s)", s, Edits{})
	}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return Edits{}, fmt.Errorf("%q: %q is not a positive number of words; want off or MIN,CONTENT,MAX (the default: %s)", s, p, Edits{})
		}
		n[i] = v
	}
	return Edits{MinWords: n[0], ContentMinWords: n[1], MaxWords: n[2]}.Resolved()
}

// EditIndex finds the members of a fixed set of texts that a text is
// within one word edit of (Edits). Each member of MinWords−1 to MaxWords
// words is stored under the hash of its word sequence and of each
// sequence left by deleting one of its words; two sequences within one
// edit share one of these keys (a replaced word deleted from both, a
// dropped word deleted from the longer), so a probe of n words makes n+1
// lookups in a sorted table, whatever the number of members, and verifies
// the members found word by word. Memory is about 12 bytes per key plus 8
// per word of each indexed member. It is read-only and safe for
// concurrent use after NewEditIndex.
type EditIndex struct {
	spec  Edits
	table keyTable
	words [][]uint64 // member i's word hashes; nil when not indexed
	n     int
}

// EditMatch is a member within one word edit of a searched text.
type EditMatch struct {
	Member int
	// Edits is the word edit distance, 0 or 1 (0: the same words, which
	// an exact match usually reports first).
	Edits int
	// Similarity is 1 − Edits / words of the longer text.
	Similarity float64
}

// NewEditIndex normalises and indexes texts (members numbered in order).
func NewEditIndex(spec Edits, texts []string) (*EditIndex, error) {
	spec, err := spec.Resolved()
	if err != nil {
		return nil, err
	}
	ix := &EditIndex{spec: spec, words: make([][]uint64, len(texts)), n: len(texts)}
	if spec.Off {
		return ix, nil
	}
	var keys []uint64
	var ids []int32
	var norm []byte
	var ks []uint64
	for i, t := range texts {
		norm = AppendNormalized(norm[:0], t)
		w := appendWordHashes(nil, string(norm))
		if len(w) < spec.MinWords-1 || len(w) > spec.MaxWords {
			continue
		}
		ix.words[i] = w
		ks = editKeys(ks[:0], w)
		for _, k := range ks {
			keys = append(keys, k)
			ids = append(ids, int32(i))
		}
	}
	ix.table = newKeyTable(keys, ids)
	return ix, nil
}

// Spec returns the spec with its defaults filled in.
func (ix *EditIndex) Spec() Edits { return ix.spec }

// Indexed counts the members short enough to be indexed.
func (ix *EditIndex) Indexed() int {
	n := 0
	for _, w := range ix.words {
		if w != nil {
			n++
		}
	}
	return n
}

// EditSearcher searches an EditIndex; each goroutine uses its own.
type EditSearcher struct {
	ix    *EditIndex
	words []uint64
	keys  []uint64
	cand  []int32
	out   []EditMatch
}

// NewSearcher makes a searcher of ix.
func (ix *EditIndex) NewSearcher() *EditSearcher { return &EditSearcher{ix: ix} }

// SearchNormalized returns the members within one word edit of a
// normalised text whose longer side has at least MinWords words, in member
// order. The slice is reused by the next call.
func (s *EditSearcher) SearchNormalized(normalized string) []EditMatch {
	s.out = s.out[:0]
	sp := s.ix.spec
	if sp.Off || normalized == "" {
		return s.out
	}
	// Count the words before hashing them: most training texts are longer
	// than any indexed member and cost only this scan.
	n := 1
	for i := 0; i < len(normalized); i++ {
		if normalized[i] == ' ' {
			if n++; n > sp.MaxWords+1 {
				return s.out
			}
		}
	}
	if n < sp.MinWords-1 {
		return s.out
	}
	s.words = appendWordHashes(s.words[:0], normalized)
	s.keys = editKeys(s.keys[:0], s.words)
	s.cand = s.cand[:0]
	for _, k := range s.keys {
		s.cand = append(s.cand, s.ix.table.find(k)...)
	}
	slices.Sort(s.cand)
	for _, m := range slices.Compact(s.cand) {
		other := s.ix.words[m]
		longer := max(len(other), len(s.words))
		if longer < sp.MinWords {
			continue
		}
		d, at := wordEdits1(s.words, other)
		if d > 1 || d == 1 && len(other) == len(s.words) && longer < sp.ContentMinWords && !stopWord[s.words[at]] && !stopWord[other[at]] {
			continue
		}
		s.out = append(s.out, EditMatch{Member: int(m), Edits: d, Similarity: 1 - float64(d)/float64(longer)})
	}
	return s.out
}

// appendWordHashes appends the hashes of a normalised text's words.
func appendWordHashes(dst []uint64, normalized string) []uint64 {
	for i := 0; i < len(normalized); {
		j := i
		for j < len(normalized) && normalized[j] != ' ' {
			j++
		}
		dst = append(dst, mix(wordHash(normalized[i:j])))
		i = j + 1
	}
	return dst
}

// editKeys appends the distinct keys of a word sequence: the hash of the
// sequence and of each sequence one deletion leaves. The hash is a
// polynomial over the words (mod 2⁶⁴) tagged with the length, so that the
// deletions' hashes come from prefix and suffix sums in O(n); a collision
// only costs a verification.
func editKeys(dst []uint64, w []uint64) []uint64 {
	const base = 0x9e3779b97f4a7c15 // odd
	n := len(w)
	start := len(dst)
	// pow[k] = base^k; suf[i] = Σ_{j≥i} w[j]·base^(n−1−j).
	var pow, suf [256 + 1]uint64 // MaxWords+1 ≤ 256 words
	pow[0] = 1
	for k := 1; k <= n; k++ {
		pow[k] = pow[k-1] * base
	}
	for i := n - 1; i >= 0; i-- {
		suf[i] = suf[i+1] + w[i]*pow[n-1-i]
	}
	dst = append(dst, seqKey(suf[0], n))
	// Deleting word i leaves prefix·base^(n−1−i) + suf[i+1], where
	// prefix = Σ_{j<i} w[j]·base^(i−1−j): the hash of the shorter
	// sequence.
	var prefix uint64
	for i := range n {
		dst = append(dst, seqKey(prefix*pow[n-1-i]+suf[i+1], n-1))
		prefix = prefix*base + w[i]
	}
	s := dst[start:]
	slices.Sort(s)
	return dst[:start+len(slices.Compact(s))]
}

func seqKey(h uint64, n int) uint64 { return mix(h ^ uint64(n)<<56 ^ 0x5be0cd19137e2179) }

// wordEdits1 is the word edit distance of a and b when it is 0 or 1, else
// 2; at is where the two differ (the replaced word, or the word the
// longer has added).
func wordEdits1(a, b []uint64) (d, at int) {
	if len(a) < len(b) {
		a, b = b, a
	}
	switch len(a) - len(b) {
	case 0:
		for i := range a {
			if a[i] != b[i] {
				if d++; d > 1 {
					return 2, 0
				}
				at = i
			}
		}
		return d, at
	case 1:
		i := 0
		for i < len(b) && a[i] == b[i] {
			i++
		}
		// a[i] is the added word: the rest must line up.
		if slices.Equal(a[i+1:], b[i:]) {
			return 1, i
		}
	}
	return 2, 0
}

// IsStopWord reports whether a normalised word is a function word to the
// word edit rule: one of Lucene's English stop words.
func IsStopWord(word string) bool { return stopWord[mix(wordHash(word))] }

// stopWord holds the word hashes of Lucene's English stop words.
var stopWord = func() map[uint64]bool {
	m := map[uint64]bool{}
	for _, w := range analysis.EnglishStopWords() {
		m[mix(wordHash(w))] = true
	}
	return m
}()
