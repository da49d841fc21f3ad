package minhash

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Breast Cancer & Alcohol: How Much is Safe?", "breast cancer alcohol how much is safe"},
		{"  Is   Caffeinated\tTea\nDehydrating?!  ", "is caffeinated tea dehydrating"},
		{"Dragon's Blood", "dragons blood"},
		{"ﬁbrosis", "fibrosis"},               // ligature: NFKC
		{"ＣＯＶＩＤ－１９", "covid 19"},              // full width letters, digits and hyphen
		{"STRASSE Straße", "strasse strasse"}, // full case folding, not lowercasing
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"},                // final sigma folds to σ
		{"Monsanto’s Roundup®", "monsantos roundup"},
		{"5 mg/kg, 37.5°C", "5 mg kg 37 5 c"},
		{"x² + ½", "x2 1 2"}, // superscript → digit, fraction → 1⁄2 (⁄ is a symbol)
		{"naïve café", "naïve café"},
		{"nai\u0308ve", "naïve"}, // combining diaeresis composes
		{"", ""},
		{"?!…", ""},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The ASCII fast path must agree with the Unicode path on every ASCII text.
func TestNormalizeASCIIPathAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(128))
		}
		s := string(b)
		if fast, slow := string(AppendNormalized(nil, s)), string(appendNormalizedUnicode(nil, s)); fast != slow {
			t.Fatalf("%q: ASCII path %q, Unicode path %q", s, fast, slow)
		}
	}
}

func mustNew(t testing.TB, s Spec) *Hasher {
	t.Helper()
	h, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestShingles(t *testing.T) {
	h1 := mustNew(t, Spec{})
	if got := len(h1.Shingles(nil, "a b a c")); got != 3 {
		t.Errorf("unigrams of %q: %d distinct, want 3", "a b a c", got)
	}
	if got := h1.Shingles(nil, ""); len(got) != 0 {
		t.Errorf("empty text has shingles %v", got)
	}
	h3 := mustNew(t, Spec{Shingle: 3})
	if got := len(h3.Shingles(nil, "a b c d a b c")); got != 4 { // abc bcd cda dab (abc again)
		t.Errorf("3-grams: %d distinct, want 4", got)
	}
	short := h3.Shingles(nil, "a b")
	if len(short) != 1 {
		t.Fatalf("a 2-word text under 3-word shingles gives %d shingles, want 1 (the whole text)", len(short))
	}
	if slices.Equal(short, h3.Shingles(nil, "b a")) {
		t.Error("a short text's one shingle ignores word order")
	}
	// Order matters inside a shingle, not across the set for unigrams.
	if !slices.Equal(h1.Shingles(nil, "x y z"), h1.Shingles(nil, "z x y")) {
		t.Error("unigram sets differ under reordering")
	}
	if slices.Equal(h3.Shingles(nil, "x y z w"), h3.Shingles(nil, "w z y x")) {
		t.Error("3-gram sets equal under reversal")
	}
	// Shingles longer than the ring buffer take the other path.
	h20 := mustNew(t, Spec{Shingle: 20})
	words := strings.Fields(strings.Repeat("alpha beta gamma delta epsilon ", 6))
	if got := len(h20.Shingles(nil, strings.Join(words, " "))); got != 5 { // period 5: 5 distinct windows
		t.Errorf("20-grams over a period-5 text: %d distinct, want 5", got)
	}
	// Seeds change hashes; the same seed repeats them.
	a, b := mustNew(t, Spec{Seed: 1}), mustNew(t, Spec{Seed: 1})
	c := mustNew(t, Spec{Seed: 2})
	sa, sb, sc := a.Shingles(nil, "one two three"), b.Shingles(nil, "one two three"), c.Shingles(nil, "one two three")
	if !slices.Equal(sa, sb) || slices.Equal(sa, sc) {
		t.Error("seeded shingle hashes are not deterministic per seed")
	}
}

func TestJaccard(t *testing.T) {
	for _, c := range []struct {
		a, b []uint64
		want float64
	}{
		{[]uint64{1, 2, 3}, []uint64{2, 3, 4}, 2.0 / 4},
		{[]uint64{1, 2, 3}, []uint64{1, 2, 3}, 1},
		{[]uint64{1}, []uint64{2}, 0},
		{nil, nil, 0},
		{[]uint64{1, 5, 9, 12}, []uint64{5, 12}, 2.0 / 4},
	} {
		if got := Jaccard(c.a, c.b); got != c.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestPlan(t *testing.T) {
	for _, c := range []struct {
		t          float64
		bands, row int
	}{{0.8, 18, 6}, {0.5, 40, 3}, {0.9, 11, 9}} {
		b, r := Plan(c.t)
		if b != c.bands || r != c.row {
			t.Errorf("Plan(%v) = %d×%d, want %d×%d", c.t, b, r, c.bands, c.row)
		}
		if rec := Recall(c.t, b, r); rec < PlanRecall {
			t.Errorf("Plan(%v): recall %v at the threshold", c.t, rec)
		}
		if b*r > MaxHashes {
			t.Errorf("Plan(%v) uses %d values", c.t, b*r)
		}
	}
	if got := Recall(0.4, 18, 6); math.Abs(got-0.0712) > 0.001 {
		t.Errorf("Recall(0.4, 18, 6) = %v, the package comment says 0.07", got)
	}
	if _, err := New(Spec{Threshold: 1.5}); err == nil {
		t.Error("threshold 1.5 accepted")
	}
	if _, err := New(Spec{Bands: 3}); err == nil {
		t.Error("bands without rows accepted")
	}
}

// sets returns two random sets of exactly the Jaccard similarity j
// (|a∩b| = round(j·u), |a∪b| = u).
func pairWithJaccard(r *rand.Rand, u int, j float64) (a, b []uint64) {
	inter := int(math.Round(j * float64(u)))
	for i := range u {
		x := r.Uint64()
		switch {
		case i < inter:
			a, b = append(a, x), append(b, x)
		case (i-inter)%2 == 0:
			a = append(a, x)
		default:
			b = append(b, x)
		}
	}
	slices.Sort(a)
	slices.Sort(b)
	return a, b
}

// The share of pairs LSH makes candidates follows Recall within sampling
// error, on both sides of the threshold.
func TestLSHFollowsRecallCurve(t *testing.T) {
	h := mustNew(t, Spec{Seed: 7})
	sp := h.Spec()
	r := rand.New(rand.NewPCG(3, 4))
	const pairs = 1500
	for _, j := range []float64{0.3, 0.5, 0.7, 0.8, 0.9} {
		ix := NewIndex(sp.Bands)
		var probes [][]uint64
		for range pairs {
			a, b := pairWithJaccard(r, 100, j)
			ix.Add(h.Keys(nil, h.Signature(nil, a)))
			probes = append(probes, h.Keys(nil, h.Signature(nil, b)))
		}
		ix.Freeze()
		p := ix.NewProbe()
		found := 0
		for i, keys := range probes {
			if slices.Contains(p.Candidates(keys), int32(i)) {
				found++
			}
		}
		got, want := float64(found)/pairs, Recall(j, sp.Bands, sp.Rows)
		sd := math.Sqrt(want*(1-want)/pairs) + 0.002
		if math.Abs(got-want) > 5*sd {
			t.Errorf("Jaccard %.1f: %.4f of pairs are candidates, the curve says %.4f", j, got, want)
		}
	}
}

func TestCollection(t *testing.T) {
	h := mustNew(t, Spec{})
	texts := []string{
		"Breast Cancer Cells Feed on Cholesterol", // 0
		"breast cancer cells feed on cholesterol", // 1: exact copy of 0
		"", // 2: empty
		"Cholesterol feeds on breast cancer cells",           // 3: same words but "feeds"
		"Using Diet to Treat Asthma and Eczema",              // 4
		"   ",                                                // 5: empty
		"Breast cancer: cells feed on cholesterol!",          // 6: exact copy of 0
		"Treating Asthma With Plants vs. Pills",              // 7
		"Cells on cholesterol feed Breast Cancer",            // 8: reordered: Jaccard 1, not exact
		"Breast cancer cells feed on cholesterol and sugars", // 9: 6/8 = 0.75 < 0.8
	}
	c := NewCollection(h, texts, 3)
	if c.Len() != 10 || c.Empty() != 2 {
		t.Fatalf("Len %d Empty %d, want 10 and 2", c.Len(), c.Empty())
	}
	s := c.NewSearcher()
	got := s.Search("BREAST CANCER CELLS FEED ON CHOLESTEROL.")
	want := []Match{{0, 1, true}, {1, 1, true}, {6, 1, true}, {8, 1, false}}
	if !slices.Equal(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
	if got := s.Search(""); len(got) != 0 {
		t.Errorf("empty text matches %v", got)
	}
	got = s.Search("treat asthma and eczema using diet")
	if len(got) != 1 || got[0].Member != 4 || got[0].Exact || got[0].Similarity != 6.0/7 {
		t.Errorf("5 of the 7 words (plus 1): %v, want member 4 near at 6/7", got)
	}
}

// Against brute force over random texts: every match is right (exact
// Jaccard ≥ threshold), and LSH finds nearly all pairs brute force finds.
func TestCollectionAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	randText := func() []string {
		w := make([]string, 5+r.IntN(30))
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return w
	}
	var members []string
	for range 400 {
		members = append(members, strings.Join(randText(), " "))
	}
	// Queries: perturbed members (some words replaced) and random texts.
	var queries []string
	for i := range 600 {
		if i%2 == 0 {
			queries = append(queries, strings.Join(randText(), " "))
			continue
		}
		w := strings.Fields(members[r.IntN(len(members))])
		for range r.IntN(4) {
			w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
		}
		queries = append(queries, strings.Join(w, " "))
	}
	h := mustNew(t, Spec{Seed: 11})
	c := NewCollection(h, members, 2)
	s := c.NewSearcher()
	want, found := 0, 0
	for _, q := range queries {
		qs := h.Shingles(nil, Normalize(q))
		truth := map[int]float64{}
		for m := range members {
			if j := Jaccard(qs, c.Shingles(m)); j >= 0.8 {
				truth[m] = j
			}
		}
		want += len(truth)
		for _, m := range s.Search(q) {
			j, ok := truth[m.Member]
			if !ok || j != m.Similarity {
				t.Fatalf("%q matches member %d at %v; brute force says %v (%v)", q, m.Member, m.Similarity, j, ok)
			}
			found++
		}
	}
	if want < 100 {
		t.Fatalf("only %d true pairs: the test data is too easy to miss anything", want)
	}
	if float64(found) < 0.98*float64(want) {
		t.Errorf("LSH found %d of %d pairs at Jaccard ≥ 0.8", found, want)
	}
}

// TestPairAtThresholdFound: a pair whose Jaccard is exactly the threshold
// is a near-duplicate. With threshold 0.55, a text of 55 words inside one
// of 100 (Jaccard 55/100) was dropped by the size test before its Jaccard
// was computed, as 0.55 × 100 rounds to 55.000000000000007.
func TestPairAtThresholdFound(t *testing.T) {
	for _, c := range []struct {
		t    float64
		a, b int
	}{{0.55, 55, 100}, {0.55, 99, 180}, {0.8, 4, 5}, {0.7, 7, 10}} {
		words := make([]string, c.b)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", i)
		}
		// One row per band and many bands: every pair sharing a word is a
		// candidate, so only the verification decides.
		h := mustNew(t, Spec{Threshold: c.t, Bands: 512, Rows: 1})
		coll := NewCollection(h, []string{strings.Join(words, " ")}, 1)
		got := coll.NewSearcher().Search(strings.Join(words[:c.a], " "))
		want := float64(c.a) / float64(c.b)
		if len(got) != 1 || got[0].Similarity != want {
			t.Errorf("threshold %v, %d words in %d: %+v, want one match at %v", c.t, c.a, c.b, got, want)
		}
	}
}
