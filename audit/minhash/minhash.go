package minhash

import (
	"fmt"
	"math"
	"slices"
)

// Defaults of Spec's zero fields.
const (
	DefaultThreshold = 0.8
	DefaultShingle   = 1
	// MaxHashes bounds the signature length a derived plan may use.
	MaxHashes = 128
	// PlanRecall is the probability with which a derived plan makes a pair
	// at exactly the threshold a candidate.
	PlanRecall = 0.995
)

// Spec says what counts as a near-duplicate and how candidates are found.
// The zero value works: Jaccard ≥ 0.8 over single words, seed 0, a plan
// derived from the threshold.
type Spec struct {
	// Threshold is the Jaccard similarity at or above which two texts are
	// near-duplicates; 0 means DefaultThreshold.
	Threshold float64
	// Shingle is the number of consecutive words in a shingle; 0 means
	// DefaultShingle.
	Shingle int
	// Seed seeds every hash; the same seed gives the same results.
	Seed uint64
	// Bands and Rows are the LSH plan: the signature has Bands×Rows
	// MinHash values and two texts are candidates when all Rows values
	// of some band agree. Zero means Plan(Threshold).
	Bands, Rows int
}

// Plan picks the LSH bands and rows for a threshold: among the plans of at
// most MaxHashes values that make a pair at the threshold a candidate with
// probability ≥ PlanRecall, the one least likely to make a pair at half the
// threshold a candidate (fewer values on a tie). For 0.8 that is 18 bands
// of 6 rows: recall 0.996 at 0.8, 0.07 of the pairs at 0.4 verified.
func Plan(threshold float64) (bands, rows int) {
	best := math.Inf(1)
	for r := 1; r <= MaxHashes; r++ {
		p := math.Pow(threshold, float64(r))
		if p <= 0 {
			break
		}
		// Smallest b with 1-(1-p)^b ≥ PlanRecall.
		fb := 1.0
		if p < 1 {
			fb = max(1, math.Ceil(math.Log(1-PlanRecall)/math.Log1p(-p)))
		}
		if fb*float64(r) > MaxHashes {
			continue
		}
		b := int(fb)
		if f := Recall(threshold/2, b, r); f < best || f == best && b*r < bands*rows {
			best, bands, rows = f, b, r
		}
	}
	if bands == 0 { // threshold so low that no plan fits: all values in one row each
		bands, rows = MaxHashes, 1
	}
	return bands, rows
}

// Recall is the probability that LSH with the given plan makes a pair of
// Jaccard similarity j a candidate: 1 − (1 − j^rows)^bands.
func Recall(j float64, bands, rows int) float64 {
	return 1 - math.Pow(1-math.Pow(j, float64(rows)), float64(bands))
}

// resolved fills the spec's defaults and checks it.
func (s Spec) resolved() (Spec, error) {
	if s.Threshold == 0 {
		s.Threshold = DefaultThreshold
	}
	if !(s.Threshold > 0 && s.Threshold <= 1) {
		return s, fmt.Errorf("minhash: Jaccard threshold %v is outside (0, 1]", s.Threshold)
	}
	if s.Shingle == 0 {
		s.Shingle = DefaultShingle
	}
	if s.Shingle < 1 {
		return s, fmt.Errorf("minhash: shingle size %d; want at least 1 word", s.Shingle)
	}
	if (s.Bands == 0) != (s.Rows == 0) {
		return s, fmt.Errorf("minhash: give both bands and rows, or neither to derive them from the threshold")
	}
	if s.Bands == 0 {
		s.Bands, s.Rows = Plan(s.Threshold)
	}
	if s.Bands < 1 || s.Rows < 1 || s.Bands*s.Rows > 4096 {
		return s, fmt.Errorf("minhash: %d bands × %d rows; want positive counts and at most 4096 values", s.Bands, s.Rows)
	}
	return s, nil
}

// Hasher turns texts into shingle sets, signatures and band keys. It is
// safe for concurrent use.
type Hasher struct {
	spec Spec
	// MinHash value i of a shingle hash x is the top 32 bits of
	// mul[i]·x + add[i] (mod 2⁶⁴): multiply-shift hashing, a universal
	// family, over shingle hashes that are already well mixed.
	mul, add []uint64
	bandSeed []uint64
	shSeed   uint64
}

// New builds a Hasher for spec (defaults filled in).
func New(spec Spec) (*Hasher, error) {
	s, err := spec.resolved()
	if err != nil {
		return nil, err
	}
	n := s.Bands * s.Rows
	h := &Hasher{spec: s, mul: make([]uint64, n), add: make([]uint64, n), bandSeed: make([]uint64, s.Bands)}
	st := s.Seed ^ 0x6a09e667f3bcc909
	h.shSeed = splitmix(&st)
	for i := range n {
		h.mul[i] = splitmix(&st) | 1
		h.add[i] = splitmix(&st)
	}
	for i := range h.bandSeed {
		h.bandSeed[i] = splitmix(&st)
	}
	return h, nil
}

// Spec returns the spec with its defaults filled in.
func (h *Hasher) Spec() Spec { return h.spec }

// Shingles appends to dst the sorted, distinct hashes of the word
// shingles of a normalised text and returns it: runs of Spec.Shingle
// consecutive words, or the whole text when it has fewer words; none for
// an empty text.
func (h *Hasher) Shingles(dst []uint64, normalized string) []uint64 {
	start := len(dst)
	k := h.spec.Shingle
	var ring [16]uint64 // word hashes of the current window (k ≤ 16 uses it)
	var words []uint64
	if k > len(ring) {
		words = make([]uint64, 0, 64)
	}
	n := 0
	i := 0
	for i < len(normalized) {
		j := i
		for j < len(normalized) && normalized[j] != ' ' {
			j++
		}
		wh := wordHash(normalized[i:j])
		i = j + 1
		if k == 1 {
			dst = append(dst, mix(wh^h.shSeed))
			n++
			continue
		}
		if words != nil {
			words = append(words, wh)
		} else {
			ring[n%len(ring)] = wh
		}
		n++
		if n >= k {
			dst = append(dst, h.gram(&ring, words, n-k, k))
		}
	}
	if k > 1 && n > 0 && n < k {
		dst = append(dst, h.gram(&ring, words, 0, n))
	}
	s := dst[start:]
	slices.Sort(s)
	return dst[:start+len(slices.Compact(s))]
}

// gram hashes the words [from, from+k) of the text, read from the ring
// (or words, for long shingles).
func (h *Hasher) gram(ring *[16]uint64, words []uint64, from, k int) uint64 {
	x := h.shSeed ^ uint64(k)
	for w := from; w < from+k; w++ {
		var wh uint64
		if words != nil {
			wh = words[w]
		} else {
			wh = ring[w%len(ring)]
		}
		x = mix(x ^ wh)
	}
	return x
}

// Signature writes the MinHash signature of a shingle set into dst (grown
// to Bands×Rows values) and returns it. An empty set gives all-ones values,
// which Collection never indexes.
func (h *Hasher) Signature(dst []uint32, shingles []uint64) []uint32 {
	n := len(h.mul)
	dst = slices.Grow(dst[:0], n)[:n]
	mul, add := h.mul, h.add[:n]
	// Four values at a time over all shingles: four independent running
	// minima stay in registers. The minimum of the 64-bit values has the
	// minimum top 32 bits, so taking the top bits last is the same.
	i := 0
	for ; i+4 <= n; i += 4 {
		m0, m1, m2, m3 := mul[i], mul[i+1], mul[i+2], mul[i+3]
		a0, a1, a2, a3 := add[i], add[i+1], add[i+2], add[i+3]
		v0, v1, v2, v3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		for _, x := range shingles {
			v0 = min(v0, m0*x+a0)
			v1 = min(v1, m1*x+a1)
			v2 = min(v2, m2*x+a2)
			v3 = min(v3, m3*x+a3)
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = uint32(v0>>32), uint32(v1>>32), uint32(v2>>32), uint32(v3>>32)
	}
	for ; i < n; i++ {
		v := uint64(math.MaxUint64)
		for _, x := range shingles {
			v = min(v, mul[i]*x+add[i])
		}
		dst[i] = uint32(v >> 32)
	}
	return dst
}

// Keys appends the signature's band keys (one 64-bit hash of each band's
// rows) to dst and returns it.
func (h *Hasher) Keys(dst []uint64, sig []uint32) []uint64 {
	r := h.spec.Rows
	for b, seed := range h.bandSeed {
		x := seed
		for _, v := range sig[b*r : (b+1)*r] {
			x = mix(x ^ uint64(v))
		}
		dst = append(dst, x)
	}
	return dst
}

// Jaccard returns |a∩b| / |a∪b| of two sorted, distinct sets; 0 when both
// are empty.
func Jaccard(a, b []uint64) float64 {
	inter := intersect(a, b)
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func intersect(a, b []uint64) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// wordHash is FNV-1a over the word's bytes; mix then spreads it.
func wordHash(w string) uint64 {
	x := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		x ^= uint64(w[i])
		x *= 1099511628211
	}
	return x
}

// mix is splitmix64's finalizer: a bijection that spreads every input bit
// over the output.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// splitmix advances the state and returns its next output.
func splitmix(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	return mix(*state)
}

// TextKey is the 128-bit exact-match key of a normalised text: two
// differently seeded and mixed 64-bit hashes of its bytes with the spaces
// left out, so that texts differing only in where words split ("COVID-19",
// "covid 19", "Covid19"; "low-carb", "lowcarb") are one text.
func (h *Hasher) TextKey(normalized string) [2]uint64 {
	a, b := h.shSeed^0x243f6a8885a308d3, h.shSeed^0x13198a2e03707344
	var w uint64
	n, k := 0, 0 // bytes hashed, bytes in w
	for i := 0; i < len(normalized); i++ {
		c := normalized[i]
		if c == ' ' {
			continue
		}
		w |= uint64(c) << (8 * k)
		n++
		if k++; k == 8 {
			a = mix(a ^ w)
			b = mix(b + w*0x9e3779b97f4a7c15)
			w, k = 0, 0
		}
	}
	a = mix(a ^ w ^ uint64(n)<<56)
	b = mix(b + (w^uint64(n))*0x9e3779b97f4a7c15)
	return [2]uint64{a, b}
}
