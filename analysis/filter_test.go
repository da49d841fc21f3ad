package analysis

import (
	"testing"
	"unicode"
)

type filterCase struct {
	in, out string
	keep    bool
}

func runFilter(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, c := range cases {
		out, keep := f.Filter(c.in)
		if keep != c.keep || keep && out != c.out {
			t.Errorf("%T.Filter(%q) = %q, %v; want %q, %v", f, c.in, out, keep, c.out, c.keep)
		}
	}
}

func TestEnglishPossessiveFilter(t *testing.T) {
	runFilter(t, EnglishPossessiveFilter{}, []filterCase{
		{"dog's", "dog", true},
		{"DOG'S", "DOG", true},
		{"mother\u2019s", "mother", true},
		{"ＡＢ\uff07s", "ＡＢ", true},
		{"O'Neil's", "O'Neil", true},
		{"'s", "", true}, // Lucene shortens it to nothing and keeps it
		{"its", "its", true},
		{"dogs'", "dogs'", true},
		{"boss", "boss", true},
		{"s", "s", true},
		{"x`s", "x`s", true},
		{"dog'ſ", "dog'ſ", true}, // only ASCII s/S count
		{"", "", true},
	})
}

func TestLowerCaseFilter(t *testing.T) {
	runFilter(t, LowerCaseFilter{}, []filterCase{
		{"hba1c", "hba1c", true},
		{"HbA1c", "hba1c", true},
		{"ÉCOLE", "école", true},
		{"NaÏVE", "naïve", true},
		// Simple case mapping, as Java's Character.toLowerCase: dotted
		// capital I becomes a plain i (no combining dot), and a final
		// capital sigma becomes σ, not ς.
		{"İSTANBUL", "istanbul", true},
		{"ΣΟΦΟΣ", "σοφοσ", true},
		{"Ｆｕｌｌ", "ｆｕｌｌ", true},
		{"\u212a", "k", true}, // KELVIN SIGN shrinks to one byte
		{"\u023a", "ⱥ", true}, // and Ⱥ grows to three
		{"ǅ", "ǆ", true},      // titlecase digraph
		{"𐐀𐐁", "𐐨𐐩", true},    // Deseret, outside the BMP
		{"Ꭰ", "\uab70", true}, // Cherokee lowercases to its Unicode 8 small letters
		{"ß", "ß", true},
		{"日本", "日本", true},
	})
	// No uppercase, no allocation.
	for _, s := range []string{"already lower", "naïve σοφός", ""} {
		if n := testing.AllocsPerRun(50, func() { LowerCaseFilter{}.Filter(s) }); n != 0 {
			t.Errorf("LowerCaseFilter allocates on %q", s)
		}
	}
}

// TestLowerMatchesSimpleMapping checks every code point against
// unicode.ToLower, the simple mapping, in each code path (ASCII prefix, no
// prefix).
func TestLowerMatchesSimpleMapping(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		want := string(unicode.ToLower(r))
		if got := lower(s); got != want {
			t.Fatalf("lower(%U) = %q, want %q", r, got, want)
		}
		if got := lower("A" + s); got != "a"+want {
			t.Fatalf("lower(A%U) = %q, want %q", r, got, "a"+want)
		}
	}
}

func TestStopFilter(t *testing.T) {
	f := NewStopFilter(EnglishStopWords())
	for _, w := range EnglishStopWords() {
		if _, keep := f.Filter(w); keep {
			t.Errorf("stop word %q kept", w)
		}
	}
	if n := len(EnglishStopWords()); n != 33 {
		t.Errorf("%d English stop words, want Lucene's 33", n)
	}
	runFilter(t, f, []filterCase{
		{"The", "The", true}, // exact match only: lowercase first
		{"them", "them", true},
		{"patient", "patient", true},
		{"", "", true},
	})
	// The list returned is a copy.
	EnglishStopWords()[0] = "patient"
	if _, keep := NewStopFilter(EnglishStopWords()).Filter("patient"); !keep {
		t.Error("EnglishStopWords returned the package's own slice")
	}
}

func TestPorterStemFilter(t *testing.T) {
	runFilter(t, PorterStemFilter{}, []filterCase{
		{"running", "run", true},
		{"caresses", "caress", true},
		{"ponies", "poni", true},
		{"generalizations", "gener", true},
		{"hopeful", "hope", true},
		{"diabetes", "diabet", true},
		{"gestation", "gestat", true},
		{"q.h.s", "q.h.", true},
		// Lucene lets a suffix match the whole word; go-porterstemmer alone
		// would give "sse", "ie", "e" and "e".
		{"sses", "ss", true},
		{"ies", "i", true},
		{"eed", "eed", true},
		{"eeds", "eed", true},
		// Lucene leaves terms of one or two UTF-16 units alone...
		{"as", "as", true},
		{"is", "is", true},
		{"ﬁs", "ﬁs", true}, // 4 bytes, 2 units
		{"𝐚", "𝐚", true},   // 4 bytes, 2 units
		{"ed", "ed", true},
		// ...but a supplementary character is two units, so this is stemmed.
		{"𝐚s", "𝐚", true},
		{"𝐚𝐛ing", "𝐚𝐛ing", true}, // no vowel before -ing: unchanged
		{"x𝐛ing", "x𝐛ing", true},
		{"run𝐛ing", "run𝐛", true},
		// Non-ASCII letters are consonants to the algorithm.
		{"naïve", "naïv", true},
		{"ménières", "ménièr", true},
		{"ﬁnance", "ﬁnanc", true},
		{"ｌｅｔｔｅｒｓ", "ｌｅｔｔｅｒｓ", true},
		{"日本語", "日本語", true},
		{"👍🏽", "👍🏽", true},
	})
	if n := testing.AllocsPerRun(50, func() { PorterStemFilter{}.Filter("patient") }); n != 0 {
		t.Errorf("an unchanged term allocates %v times", n)
	}
}
