package analysis

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// The hand-written automata are checked against Lucene's rules transcribed
// as plain regular expressions and run by Go's regexp in leftmost-longest
// mode, which is exactly JFlex's longest-match semantics. The character
// classes come from the same property table, so this tests the automata,
// not the Unicode data (the conformance tests do that).

// class returns a regexp character class of the code points whose property
// word satisfies keep.
func class(keep func(r rune, p uint16) bool) string {
	var b strings.Builder
	b.WriteByte('[')
	open := rune(-1)
	flush := func(hi rune) {
		if open >= 0 {
			fmt.Fprintf(&b, `\x{%X}-\x{%X}`, open, hi)
			open = -1
		}
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			flush(r - 1)
			continue
		}
		if keep(r, propsOf(r)) {
			if open < 0 {
				open = r
			}
		} else {
			flush(r - 1)
		}
	}
	flush(utf8.MaxRune)
	if b.Len() == 1 {
		return `[^\x00-\x{10FFFF}]` // matches nothing
	}
	b.WriteByte(']')
	return b.String()
}

func wbIs(values ...uint16) func(rune, uint16) bool {
	return func(_ rune, p uint16) bool {
		for _, v := range values {
			if p&wbMask == v {
				return true
			}
		}
		return false
	}
}

func flagIs(f uint16) func(rune, uint16) bool {
	return func(_ rune, p uint16) bool { return p&f != 0 }
}

var (
	grammarOnce sync.Once
	wordRE      *regexp.Regexp
	emojiRE     *regexp.Regexp
	saRE        *regexp.Regexp
	singleRE    *regexp.Regexp
)

func compileGrammar() { grammarOnce.Do(compileGrammarOnce) }

func compileGrammarOnce() {
	x := class(func(_ rune, p uint16) bool { return isX(p) })
	xp := class(func(r rune, p uint16) bool { return isX(p) && r != 0xFE0E && r != 0xFE0F })
	ex := func(c string) string { return "(?:" + c + x + "*)" }
	var (
		enl = ex(class(wbIs(wbExtendNumLet)))
		ka  = ex(class(wbIs(wbKatakana)))
		hl  = ex(class(wbIs(wbHebrewLetter)))
		ahl = ex(class(wbIs(wbALetter, wbHebrewLetter)))
		nu  = ex(class(wbIs(wbNumeric)))
		ml  = ex(class(wbIs(wbMidLetter, wbMidNumLet, wbSingleQuote)))
		mn  = ex(class(wbIs(wbMidNum, wbMidNumLet, wbSingleQuote)))
		sq  = ex(class(wbIs(wbSingleQuote)))
		dq  = ex(class(wbIs(wbDoubleQuote)))
	)
	seg := "(?:" + ka + "(?:" + enl + "*" + ka + ")*" +
		"|(?:" + hl + "(?:" + sq + "|" + dq + hl + ")" +
		"|" + nu + "(?:(?:" + enl + "*|" + mn + ")" + nu + ")*" +
		"|" + ahl + "(?:(?:" + enl + "*|" + ml + ")" + ahl + ")*" +
		")+)"
	wordRE = regexp.MustCompile("^(?:" + enl + "*" + seg + "(?:" + enl + "+" + seg + ")*" + enl + "*)")
	wordRE.Longest()

	zwj := class(wbIs(wbZWJ))
	char := class(flagIs(flagEmojiChar))
	base := class(flagIs(flagEmojiModBase))
	mod := class(flagIs(flagEmojiMod))
	a := "(?:" + zwj + "*" + char + xp + `*\x{FE0F}?|(?:` + zwj + "*" + base + xp + "*)?" + mod + xp + "*)"
	emojiRE = regexp.MustCompile("^(?:" + a + "(?:(?:" + zwj + a + `)*|[\x{E0020}-\x{E007E}]+\x{E007F})` +
		"|[0-9#*]" + xp + `*\x{FE0F}?\x{20E3}` + xp + "*" +
		"|" + class(wbIs(wbRegionalIndicator)) + x + "*" + class(wbIs(wbRegionalIndicator)) + x + "*)")
	emojiRE.Longest()

	saRE = regexp.MustCompile("^(?:" + class(flagIs(flagSA)) + x + "*)+")
	saRE.Longest()
	singleRE = regexp.MustCompile("^" + class(flagIs(flagHan|flagHiragana)) + x + "*")
	singleRE.Longest()
}

// window returns s[i:] cut to the longest prefix of whole runes that fits in
// MaxTokenLength UTF-16 code units.
func window(s string, i int) string {
	n := 0
	j := i
	for j < len(s) {
		_, size := utf8.DecodeRuneInString(s[j:])
		u := 1
		if size == 4 {
			u = 2
		}
		if n+u > MaxTokenLength {
			break
		}
		n += u
		j += size
	}
	return s[i:j]
}

// specMatch is the longest match of any token rule at s[i], from the
// regular expressions: the specification the automata must implement.
func specMatch(s string, i int) int {
	w := window(s, i)
	best := 0
	for _, re := range []*regexp.Regexp{wordRE, emojiRE, saRE, singleRE} {
		if loc := re.FindStringIndex(w); loc != nil {
			best = max(best, loc[1])
		}
	}
	return i + best
}

// specTokenize tokenizes with specMatch, skipping one rune where no rule
// matches.
func specTokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if end := specMatch(s, i); end > i {
			out = append(out, s[i:end])
			i = end
		} else {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
	}
	return out
}

// grammarAlphabet holds at least one rune of every class the grammar tells
// apart, several for the common ones, so random strings over it reach every
// transition.
var grammarAlphabet = []string{
	"a", "Z", "é", "ß", "α", "ℹ", // ALetter (ℹ also pictographic)
	"א", "ש", // Hebrew_Letter
	"0", "7", "١", "１", // Numeric
	"カ", "ー", // Katakana
	"_", "‿", // ExtendNumLet
	":", "·", // MidLetter
	".", "’", "＇", // MidNumLet
	",", ";", // MidNum
	"'", "\"", // Single_Quote, Double_Quote
	"\u0301", "\u00ad", "\u200d", "\ufe0e", "\ufe0f", "\u20e3", "🏽", // Extend/Format/ZWJ
	"🇺", "🇸", // Regional_Indicator
	"中", "𠀋", "の", "ก", "\u0e31", // Han, Hiragana, SA, SA+Extend
	"💊", "👍", "❤", "©", "#", "*", // emoji
	"\U000E0067", "\U000E007F", // tags
	" ", "-", "/", "½", "\xff", // others, invalid UTF-8
}

func randomText(rng *rand.Rand, n int) string {
	return randomTextFrom(rng, grammarAlphabet, n)
}

func randomTextFrom(rng *rand.Rand, alphabet []string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

func TestTokenizerMatchesGrammarSpec(t *testing.T) {
	compileGrammar()
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 20000 {
		text := randomText(rng, 1+rng.IntN(12))
		if iter%500 == 0 {
			// Long ones exercise the 255-unit window.
			text = strings.Repeat(text, 1+rng.IntN(60))
		}
		got, want := tokenize(text), specTokenize(text)
		if !slices.Equal(got, want) {
			t.Fatalf("Tokenize(%+q)\n got %+q\nwant %+q (grammar spec)", text, got, want)
		}
	}
}

// One representative per class the word rule distinguishes, and per class
// the emoji rule does. Every string over them up to a few runes long is
// checked, which reaches every path through the automata of that length;
// random strings miss patterns as specific as letter + '.' + Hebrew + '\”.
var (
	wordClassAlphabet  = []string{"a", "א", "1", "カ", "_", ":", ".", "'", ",", "\"", "\u0301", " "}
	emojiClassAlphabet = []string{"💊", "👍", "🏽", "\u200d", "\ufe0f", "\ufe0e", "\u20e3", "#", "1", "🇺", "\U000E0067", "\U000E007F", "\u0301", "a", "ก", "中"}
)

func TestTokenizerMatchesGrammarSpecExhaustive(t *testing.T) {
	compileGrammar()
	maxWord, maxEmoji := 5, 4
	if testing.Short() {
		maxWord, maxEmoji = 4, 3
	}
	n := 0
	for _, c := range []struct {
		alphabet []string
		maxLen   int
	}{{wordClassAlphabet, maxWord}, {emojiClassAlphabet, maxEmoji}} {
		var walk func(prefix string, depth int)
		walk = func(prefix string, depth int) {
			if depth > 0 {
				n++
				if got, want := tokenize(prefix), specTokenize(prefix); !slices.Equal(got, want) {
					t.Fatalf("Tokenize(%+q)\n got %+q\nwant %+q (grammar spec)", prefix, got, want)
				}
			}
			if depth == c.maxLen {
				return
			}
			for _, s := range c.alphabet {
				walk(prefix+s, depth+1)
			}
		}
		walk("", 0)
	}
	t.Logf("%d strings", n)
}
