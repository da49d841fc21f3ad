package synth

import (
	"math/bits"
	"sync"
)

// vocabSize is the number of word forms ranked by the Zipf law. With numbers
// generated on the fly a full corpus shows somewhat more distinct tokens.
const vocabSize = 120_000

// vocab is the ranked word list (rank 0 most frequent) packed into one byte
// slice, plus a sampler that draws ranks with probability ∝ 1/(rank+1).
type vocab struct {
	buf  []byte
	off  []uint32 // word i is buf[off[i]:off[i+1]]
	zipf zipfSampler
	// slot holds each word of up to slotLen bytes zero-padded, so that
	// appending one is a fixed-size move instead of a memmove call — the
	// single biggest cost of generation otherwise.
	slot []slotWord
}

const slotLen = 15

type slotWord struct {
	b [slotLen]byte
	n uint8 // length, or 0 when the word is longer than slotLen
}

var (
	vocabOnce sync.Once
	theVocab  *vocab
)

// getVocab builds the vocabulary once per process. It does not depend on the
// seed: every synthetic task speaks the same language, like the real ones.
func getVocab() *vocab {
	vocabOnce.Do(func() { theVocab = buildVocab(vocabSize) })
	return theVocab
}

func (v *vocab) size() int { return len(v.off) - 1 }

func (v *vocab) word(i int32) []byte { return v.buf[v.off[i]:v.off[i+1]] }

func (v *vocab) appendWord(dst []byte, i int32) []byte {
	s := &v.slot[i]
	if l := len(dst); s.n > 0 && cap(dst)-l >= slotLen {
		dst = dst[:l+slotLen]
		*(*[slotLen]byte)(dst[l:]) = s.b
		return dst[:l+int(s.n)]
	}
	return append(dst, v.buf[v.off[i]:v.off[i+1]]...)
}

// sample draws a rank with probability ∝ 1/(rank+1).
func (v *vocab) sample(r *rng) int32 { return v.zipf.sample(uint16(r.next()), r.next()) }

// headWords occupy the top ranks so the commonest tokens are real English
// function words and clinical staples, as stop-word lists and stemmers
// expect; everything below is synthetic.
var headWords = []string{
	"the", "of", "and", "in", "to", "a", "with", "was", "is", "for",
	"were", "by", "on", "as", "that", "or", "at", "from", "are", "be",
	"this", "an", "which", "patients", "not", "after", "had", "no", "has", "have",
	"been", "it", "may", "but", "there", "these", "than", "his", "her", "both",
	"patient", "also", "during", "between", "into", "all", "can", "most", "other", "more",
	"such", "their", "one", "two", "its", "within", "without", "treatment", "disease", "when",
	"cells", "clinical", "years", "showed", "levels", "blood", "history", "normal", "acute", "left",
	"right", "pain", "cell", "risk", "increased", "associated", "presented", "diagnosis", "study", "cases",
}

// abbreviations are dotted tokens that tokenizers handle differently
// (Lucene keeps "e.g" whole, naive splitters break it into letters).
var abbreviations = []string{
	"e.g.", "i.e.", "t.i.d.", "b.i.d.", "q.d.", "p.o.", "i.v.", "s.c.", "vs.", "approx.",
	"q.i.d.", "p.r.n.", "i.m.", "etc.", "cf.", "h.s.",
}

var (
	onsets = []string{
		"", "", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
		"br", "cr", "dr", "gr", "pr", "tr", "st", "sp", "ch", "th", "ph", "pl", "cl", "fl", "gl", "sl", "sc", "qu",
	}
	nuclei = []string{"a", "e", "i", "o", "u", "a", "e", "i", "o", "y", "ae", "ia", "io", "ou", "ei", "ea"}
	// Word-internal codas are single consonants and rare, final ones may
	// cluster: that keeps words pronounceable and near English lengths.
	midCodas = []string{"", "", "", "", "", "", "", "n", "r", "s", "l", "m", "t"}
	endCodas = []string{"", "", "", "n", "r", "s", "l", "m", "t", "x", "st", "nt", "nd", "ct", "ph", "ng", "rm"}
	// suffixes make long words look like clinical vocabulary and give a
	// stemmer something to strip.
	suffixes = []string{
		"itis", "osis", "ase", "ine", "oma", "emia", "al", "ic", "ous", "ation",
		"ing", "ed", "es", "ly", "ectomy", "ology", "ular", "ide", "ate", "ism",
	}
	prefixes = []string{"anti", "non", "post", "pre", "sub", "hyper", "hypo", "intra", "co", "re"}
	upper    = "ABCDEFGHIKLMNPRSTVX"
)

// buildVocab makes n distinct word forms. The construction uses a fixed
// stream so the vocabulary is identical in every process.
func buildVocab(n int) *vocab {
	r := derive(0x5ee0_0000_0000_0001, 1)
	seen := make(map[string]struct{}, n)
	v := &vocab{off: make([]uint32, 1, n+1)}
	var w []byte
	add := func(b []byte) bool {
		if _, dup := seen[string(b)]; dup {
			return false
		}
		seen[string(b)] = struct{}{}
		v.buf = append(v.buf, b...)
		v.off = append(v.off, uint32(len(v.buf)))
		return true
	}
	nextAbbrev := 0
	for rank := 0; rank < n; {
		switch {
		case rank < len(headWords):
			w = append(w[:0], headWords[rank]...)
		case rank >= 150 && nextAbbrev < len(abbreviations) && rank%37 == 0:
			w = append(w[:0], abbreviations[nextAbbrev]...)
			nextAbbrev++
		default:
			w = synthWord(w[:0], &r, rank)
		}
		if add(w) {
			rank++
		}
	}
	v.zipf = newZipfSampler(n)
	v.slot = make([]slotWord, n)
	for i := range v.slot {
		if w := v.word(int32(i)); len(w) <= slotLen {
			copy(v.slot[i].b[:], w)
			v.slot[i].n = uint8(len(w))
		}
	}
	return v
}

// synthWord builds one word for a rank: frequent ranks get short words, as
// in natural language, and a few percent of forms are acronyms with
// numbers (IL-6), hyphenated compounds (anti-x) or all-caps abbreviations.
func synthWord(w []byte, r *rng, rank int) []byte {
	if rank > 300 {
		switch k := r.intn(100); {
		case k < 2: // acronym with a number: "TNF-12"
			w = appendUpper(w, r, 2+r.intn(3))
			w = append(w, '-')
			return appendUint(w, uint64(1+r.intn(30)))
		case k < 4: // prefixed compound: "anti-brolase"
			w = append(w, prefixes[r.intn(len(prefixes))]...)
			w = append(w, '-')
			return appendSyllables(w, r, 1+r.intn(3))
		case k < 5: // plain acronym: "ECR"
			return appendUpper(w, r, 2+r.intn(3))
		}
	}
	var syl int
	switch {
	case rank < 600:
		syl = 1 + r.intn(2)
	case rank < 8000:
		syl = 2 + r.intn(2)
	default:
		syl = 2 + r.intn(3)
	}
	if rank >= 600 && r.intn(10) < 3 {
		// The suffix stands in for the last syllable.
		w = appendSyllables(w, r, max(syl-1, 1))
		return append(w, suffixes[r.intn(len(suffixes))]...)
	}
	return appendSyllables(w, r, syl)
}

func appendSyllables(w []byte, r *rng, n int) []byte {
	for i := 0; i < n; i++ {
		w = append(w, onsets[r.intn(len(onsets))]...)
		w = append(w, nuclei[r.intn(len(nuclei))]...)
		if i == n-1 {
			w = append(w, endCodas[r.intn(len(endCodas))]...)
		} else {
			w = append(w, midCodas[r.intn(len(midCodas))]...)
		}
	}
	return w
}

func appendUpper(w []byte, r *rng, n int) []byte {
	for i := 0; i < n; i++ {
		w = append(w, upper[r.intn(len(upper))])
	}
	return w
}

func appendUint(w []byte, x uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + x%10)
		x /= 10
		if x == 0 {
			break
		}
	}
	return append(w, tmp[i:]...)
}

// zipfWeight is rank's weight under P(rank) ∝ 1/(rank+1), in integers so
// that the tables built from it — and every word drawn through them — are
// the same on every CPU (floating point would let FMA fusion or an assembly
// Log differ in the last bit between architectures).
func zipfWeight(rank int) uint64 { return (1 << 40) / uint64(rank+1) }

// zipfSampler draws ranks from the Zipf law. A single alias table over all
// ranks would pick a uniformly random column per word, a cache miss nearly
// every time; splitting off the 4,096 head ranks, which carry about 72% of
// the mass, keeps most draws inside a 32 KiB table that stays in cache.
type zipfSampler struct {
	headP uint16   // probability of the head, as a 16-bit threshold
	head  []uint64 // alias table over ranks [0, len(head))
	tail  []uint64 // alias table over the remaining ranks
}

const headRanks = 4096

func newZipfSampler(n int) zipfSampler {
	h := min(headRanks, n)
	var headW, total uint64
	for i := 0; i < n; i++ {
		total += zipfWeight(i)
		if i < h {
			headW += zipfWeight(i)
		}
	}
	hi, lo := bits.Mul64(headW, 1<<16)
	p, _ := bits.Div64(hi, lo, total+1) // total+1 keeps p below 2^16
	return zipfSampler{
		headP: uint16(p),
		head:  aliasTable(0, h),
		tail:  aliasTable(h, n),
	}
}

// sample maps random bits to a rank: h chooses head or tail, y's high half
// a column, its low half between the column and its alias.
func (z *zipfSampler) sample(h uint16, y uint64) int32 {
	tbl, base := z.head, uint64(0)
	if h >= z.headP && len(z.tail) > 0 {
		tbl, base = z.tail, uint64(len(z.head))
	}
	i := (y >> 32) * uint64(len(tbl)) >> 32
	e := tbl[i]
	if uint32(y) < uint32(e>>32) {
		return int32(base + i)
	}
	return int32(uint32(e))
}

// aliasTable builds Vose's alias table for ranks [lo, hi) with Zipf
// weights. Entry i is threshold<<32 | alias rank: column i keeps rank lo+i
// when the low 32 random bits fall below threshold, else yields the alias.
func aliasTable(lo, hi int) []uint64 {
	n := hi - lo
	if n <= 0 {
		return nil
	}
	var total uint64
	for r := lo; r < hi; r++ {
		total += zipfWeight(r)
	}
	// Column i holds scaled[i]/total of its own rank; the mean column is
	// exactly total, so entries below total are "small".
	scaled := make([]uint64, n)
	small := make([]int, 0, n)
	large := make([]int, 0, n)
	for i := range scaled {
		scaled[i] = zipfWeight(lo+i) * uint64(n)
		if scaled[i] < total {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	tbl := make([]uint64, n)
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		h, l64 := bits.Mul64(scaled[s], 1<<32)
		thr, _ := bits.Div64(h, l64, total)
		tbl[s] = thr<<32 | uint64(lo+l)
		scaled[l] -= total - scaled[s]
		if scaled[l] < total {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left is full up to rounding: it always yields its own rank.
	for _, i := range append(small, large...) {
		tbl[i] = uint64(lo + i)
	}
	return tbl
}
