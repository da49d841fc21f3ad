package minhash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// levenshtein is the word edit distance by the textbook table.
func levenshtein(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// randomWords draws n words from a small vocabulary, so that random texts
// often lie within an edit or two of each other.
func randomWords(r *rand.Rand, n, vocab int) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = randomWord(r, vocab)
	}
	return w
}

// randomWord is one of vocab content words or, one time in four, a stop
// word.
func randomWord(r *rand.Rand, vocab int) string {
	if r.IntN(4) == 0 {
		return []string{"the", "of", "with"}[r.IntN(3)]
	}
	return fmt.Sprintf("w%d", r.IntN(vocab))
}

func mutate(r *rand.Rand, w []string, vocab int) []string {
	w = slices.Clone(w)
	for range r.IntN(3) {
		switch r.IntN(3) {
		case 0:
			w[r.IntN(len(w))] = randomWord(r, vocab)
		case 1:
			if len(w) > 1 {
				i := r.IntN(len(w))
				w = slices.Delete(w, i, i+1)
			}
		default:
			w = slices.Insert(w, r.IntN(len(w)+1), randomWord(r, vocab))
		}
	}
	return w
}

func TestWordEdits1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 21))
	hash := func(w []string) []uint64 { return appendWordHashes(nil, strings.Join(w, " ")) }
	for range 20000 {
		a := randomWords(r, 1+r.IntN(8), 4)
		b := mutate(r, a, 4)
		if len(b) == 0 {
			continue
		}
		want := min(levenshtein(a, b), 2)
		if got, _ := wordEdits1(hash(a), hash(b)); got != want {
			t.Fatalf("wordEdits1(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

// Two sequences within one edit share a key; the key of a sequence with a
// word deleted is the key of that shorter sequence.
func TestEditKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 21))
	keys := func(w []string) []uint64 { return editKeys(nil, appendWordHashes(nil, strings.Join(w, " "))) }
	// The key of a whole sequence, by Horner's rule.
	key := func(w []string) uint64 {
		var h uint64
		for _, x := range appendWordHashes(nil, strings.Join(w, " ")) {
			h = h*0x9e3779b97f4a7c15 + x
		}
		return seqKey(h, len(w))
	}
	for range 5000 {
		a := randomWords(r, 1+r.IntN(12), 6)
		ka := keys(a)
		if !slices.Contains(ka, key(a)) {
			t.Fatalf("%q: its own key missing", a)
		}
		for i := range a {
			short := slices.Delete(slices.Clone(a), i, i+1)
			if len(short) > 0 && !slices.Contains(ka, key(short)) {
				t.Fatalf("deleting word %d of %q: key of %q missing", i, a, short)
			}
		}
		b := mutate(r, a, 6)
		if len(b) == 0 {
			continue
		}
		kb := keys(b)
		shared := slices.ContainsFunc(ka, func(k uint64) bool { return slices.Contains(kb, k) })
		if levenshtein(a, b) <= 1 && !shared {
			t.Fatalf("%q and %q are within one edit but share no key", a, b)
		}
	}
}

// contentReplaced reports whether two texts of the same length differ in
// one word and both of those words are content words.
func contentReplaced(a, b []string) bool {
	stop := map[string]bool{"the": true, "of": true, "with": true}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return !stop[a[i]] && !stop[b[i]]
		}
	}
	return false
}

// The index finds exactly the members a brute-force pass finds: within one
// word edit, the longer text MinWords to MaxWords words (ContentMinWords
// when a content word replaces another).
func TestEditIndexMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 21))
	spec := Edits{MinWords: 4, ContentMinWords: 6, MaxWords: 9}
	var members [][]string
	for range 600 {
		members = append(members, randomWords(r, 2+r.IntN(10), 5))
	}
	texts := make([]string, len(members))
	for i, m := range members {
		texts[i] = strings.Join(m, " ")
	}
	ix, err := NewEditIndex(spec, texts)
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	found := 0
	for range 3000 {
		probe := mutate(r, members[r.IntN(len(members))], 5)
		if len(probe) == 0 {
			continue
		}
		var want []EditMatch
		for i, m := range members {
			longer := max(len(m), len(probe))
			least := spec.MinWords
			if contentReplaced(probe, m) {
				least = spec.ContentMinWords
			}
			if d := levenshtein(probe, m); d <= 1 && longer >= least && len(m) <= spec.MaxWords && len(probe) <= spec.MaxWords+1 {
				want = append(want, EditMatch{Member: i, Edits: d, Similarity: 1 - float64(d)/float64(longer)})
			}
		}
		got := slices.Clone(s.SearchNormalized(strings.Join(probe, " ")))
		if !slices.Equal(got, want) {
			t.Fatalf("probe %q: got %v, want %v", probe, got, want)
		}
		found += len(got)
	}
	if found < 1000 {
		t.Fatalf("only %d matches: the test would not test much", found)
	}
}

func TestEditIndexShortTexts(t *testing.T) {
	texts := []string{
		"Vitamin D prevents hip fractures in older women", // 0: 8 words
		"heart attack symptoms",                           // 1: too short for one edit to be a copy
		"Does green tea lower blood pressure",             // 2: 6 words
		"Phytates for the treatment of cancer",            // 3: 6 words
		strings.Repeat("long text ", 20),                  // 4: 40 words: left to MinHash
	}
	ix, err := NewEditIndex(Edits{}, texts)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Spec() != (Edits{MinWords: 5, ContentMinWords: 6, MaxWords: 32}) || ix.Indexed() != 3 {
		t.Errorf("spec %+v, %d indexed", ix.Spec(), ix.Indexed())
	}
	s := ix.NewSearcher()
	sim := func(words int) float64 { return 1 - 1/float64(words) }
	for _, c := range []struct {
		probe string
		want  []EditMatch
	}{
		{"Vitamin D prevents knee fractures in older women", []EditMatch{{0, 1, 0.875}}},
		{"vitamin d prevents hip fractures in women", []EditMatch{{0, 1, 0.875}}},
		{"Vitamin D prevents hip fractures in older women!", []EditMatch{{0, 0, 1}}},
		{"Does green tea lower blood pressure?", []EditMatch{{2, 0, 1}}},
		{"Does green tea lower the blood pressure", []EditMatch{{2, 1, sim(7)}}},
		{"Does green tea lower pressure", []EditMatch{{2, 1, sim(6)}}},
		{"Does black tea lower blood pressure", []EditMatch{{2, 1, sim(6)}}}, // a content word replaced in six words
		{"Does black tea lower pressure", nil},                               // two edits
		{"Phytates for a treatment of cancer", []EditMatch{{3, 1, sim(6)}}},
		{"Phytates for the prevention of cancer", []EditMatch{{3, 1, sim(6)}}},
		{"Phytates with the treatment of cancer", []EditMatch{{3, 1, sim(6)}}},
		{"Does green tea raise blood pressure in adults", nil},           // two edits
		{"Vitamin D does not prevent hip fractures in older women", nil}, // two edits
		{"heart attack treatment", nil},
		{"heart attack", nil},
		{strings.Repeat("long text ", 19) + "long", nil},
	} {
		got := s.SearchNormalized(Normalize(c.probe))
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%q: %v, want %v", c.probe, got, c.want)
		}
	}
	off, _ := NewEditIndex(Edits{Off: true}, texts)
	if got := off.NewSearcher().SearchNormalized(Normalize(texts[0])); len(got) != 0 {
		t.Errorf("an index turned off finds %v", got)
	}
	for _, bad := range []Edits{{MinWords: 1}, {MinWords: 8, MaxWords: 6}, {MaxWords: 300}, {MinWords: 6, ContentMinWords: 5}} {
		if _, err := NewEditIndex(bad, texts); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestParseEdits(t *testing.T) {
	for in, want := range map[string]Edits{
		"":         {MinWords: 5, ContentMinWords: 6, MaxWords: 32},
		"off":      {Off: true},
		"OFF":      {Off: true},
		"6,6,20":   {MinWords: 6, ContentMinWords: 6, MaxWords: 20},
		" 4, 8,16": {MinWords: 4, ContentMinWords: 8, MaxWords: 16},
	} {
		got, err := ParseEdits(in)
		if err != nil || got != want {
			t.Errorf("ParseEdits(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := ParseEdits(got.String()); err != nil || back != want {
			t.Errorf("ParseEdits(%q.String() = %q) = %+v, %v", in, got.String(), back, err)
		}
	}
	if s := (Edits{}).String(); s != "5,6,32" {
		t.Errorf("default spec writes as %q", s)
	}
	for _, bad := range []string{"5,7", "5,x,32", "0,7,32", "8,7,32", "5,7,300", "on"} {
		if _, err := ParseEdits(bad); err == nil {
			t.Errorf("ParseEdits(%q) accepted", bad)
		}
	}
}
