package analysis

import (
	"math/rand/v2"
	"testing"
	"unicode/utf16"
)

func stemOracle(s string) string {
	return string(utf16.Decode(stemLucene(utf16.Encode([]rune(s)))))
}

// porterSuffixes lists every suffix the algorithm tests, plus a few
// endings; words built from them reach each rule with stems of every
// length, including none, where go-porterstemmer and Lucene once differed.
var porterSuffixes = []string{"sses", "ies", "ss", "s", "eed", "ed", "ing", "at", "bl", "iz", "y",
	"ational", "tional", "enci", "anci", "izer", "bli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator",
	"alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "logi",
	"icate", "ative", "alize", "iciti", "ical", "ful", "ness",
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "sion", "tion",
	"ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll", "l"}

var porterPrefixes = []string{"", "a", "b", "y", "e", "s", "l", "t", "i", "z", "ab", "ba", "bb", "ya", "ay", "ee", "ss", "ll", "aba", "bab", "tab", "ion", "at", "iz", "bl", "𝐚", "é"}

func porterEdgeWords(prefixes []string) []string {
	endings := []string{"", "s", "es", "ed", "ing", "e", "y", "ly"}
	var out []string
	for _, p := range prefixes {
		for _, s := range porterSuffixes {
			for _, e := range endings {
				out = append(out, p+s+e)
				for _, s2 := range porterSuffixes {
					out = append(out, p+s+s2+e)
				}
			}
		}
	}
	return out
}

// randomWord draws from the letters the rules look at, so that suffixes,
// doubled consonants, y-as-vowel and cvc patterns come up often.
func randomWord(rng *rand.Rand) string {
	const letters = "aeiouystlbzdngcprmxw"
	b := make([]byte, 1+rng.IntN(9))
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// TestPorterMatchesLuceneAlgorithm compares PorterStemFilter (go-porterstemmer
// plus this package's corrections) with a transcription of Lucene's stemmer
// on the reference vocabulary, every suffix combination and random words.
func TestPorterMatchesLuceneAlgorithm(t *testing.T) {
	words := porterEdgeWords(porterPrefixes)
	a := &Chain{Tokenizer: StandardTokenizer{}, Filters: []Filter{LowerCaseFilter{}}}
	for _, c := range loadReference(t) {
		words = a.Analyze(words, c.Text)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	n := 300000
	if testing.Short() {
		n = 20000
	}
	for range n {
		words = append(words, randomWord(rng))
	}
	bad := 0
	for _, w := range words {
		if got, want := stem(w), stemOracle(w); got != want {
			bad++
			if bad <= 20 {
				t.Errorf("stem(%q) = %q, Lucene's algorithm gives %q", w, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d words differ", bad, len(words))
	}
}
