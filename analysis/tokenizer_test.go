package analysis

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func tokenize(text string) []string { return StandardTokenizer{}.Tokenize(nil, text) }

func checkTokens(t *testing.T, text string, want ...string) {
	t.Helper()
	got := tokenize(text)
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("Tokenize(%q)\n got %+q\nwant %+q", text, got, want)
	}
}

func TestStandardTokenizerWords(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{" \t\n.;!?()[]{}<>/\\|-+=%$@", nil},
		{"Aspirin 81mg daily", []string{"Aspirin", "81mg", "daily"}},
		// Numbers keep their inner separators (WB11/12) but not trailing ones.
		{"HbA1c 9.8% of 1,234.", []string{"HbA1c", "9.8", "of", "1,234"}},
		{"range 1..2, 3,,4", []string{"range", "1", "2", "3", "4"}},
		{"v2.3.1-beta 22q11.2", []string{"v2.3.1", "beta", "22q11.2"}},
		// Letters joined by MidLetter/MidNumLet/Single_Quote (WB6/7).
		{"e.g., i.e. q.h.s.", []string{"e.g", "i.e", "q.h.s"}},
		{"mail j.smith@mayo.edu", []string{"mail", "j.smith", "mayo.edu"}},
		{"https://www.ncbi.nlm.nih.gov/pmc", []string{"https", "www.ncbi.nlm.nih.gov", "pmc"}},
		{"don't can't O'Neil's", []string{"don't", "can't", "O'Neil's"}},
		{"ratio:value ratio::value", []string{"ratio:value", "ratio", "value"}},
		{"a.:b a:.b", []string{"a", "b", "a", "b"}},
		// A separator needs the same kind on both sides.
		{"c.1521 p.Phe508del 1.a a1.2", []string{"c", "1521", "p.Phe508del", "1", "a", "a1.2"}},
		{"rock 'n' roll, patients'", []string{"rock", "n", "roll", "patients"}},
		// ExtendNumLet joins anything (WB13a/b) but is no token alone.
		{"x86_64 file_name.txt __init__", []string{"x86_64", "file_name.txt", "__init__"}},
		{"___ _ a_ _1", []string{"a_", "_1"}},
		{"1.2_1..2 a.b_a..b", []string{"1.2_1", "2", "a.b_a", "b"}},
		{"a_.b", []string{"a_", "b"}},
		// Hebrew letters take a trailing apostrophe (WB7a) and a double
		// quote between them (WB7b/c); other letters do neither.
		{"צה\"ל a\"b", []string{"צה\"ל", "a", "b"}},
		{"ג' x'", []string{"ג'", "x"}},
		// Lucene's grammar, unlike UAX #29, lets a Hebrew letter + quote run
		// straight on into a number.
		{"ג'1", []string{"ג'1"}},
		// Marks, format characters and ZWJ stay with what precedes (WB4)
		// and are dropped where nothing precedes.
		{"moe\u0308chte soft\u00adhyphen a\u200db", []string{"moe\u0308chte", "soft\u00adhyphen", "a\u200db"}},
		{"\u0308abc \u00ad \u200d", []string{"abc"}},
		{"3\ufe0e", []string{"3\ufe0e"}},
		// Fullwidth forms are letters and digits like any other.
		{"Ｆｕｌｌ １２３", []string{"Ｆｕｌｌ", "１２３"}},
		{"α-synuclein β2 TNF-α", []string{"α", "synuclein", "β2", "TNF", "α"}},
		{"naïve Ménière's Sjögren", []string{"naïve", "Ménière's", "Sjögren"}},
		// Symbols and fractions are not numbers.
		{"½ ² ① ° ± → ×", nil},
		// Invalid UTF-8 is skipped like any other non-word byte.
		{"\xffabc\xfe1", []string{"abc", "1"}},
	}
	for _, tt := range tests {
		checkTokens(t, tt.text, tt.want...)
	}
}

func TestStandardTokenizerAsianScripts(t *testing.T) {
	// Han ideographs and hiragana are one token per character; katakana
	// and hangul runs are one token; katakana does not join letters or
	// digits directly, only through ExtendNumLet.
	checkTokens(t, "日本語のテキスト", "日", "本", "語", "の", "テキスト")
	checkTokens(t, "中文文本 한국어 텍스트", "中", "文", "文", "本", "한국어", "텍스트")
	checkTokens(t, "ひらがな", "ひ", "ら", "が", "な")
	checkTokens(t, "カタ_カナ カa カ1 カ_a", "カタ_カナ", "カ", "a", "カ", "1", "カ_a")
	// Marks attach to ideographs and kana too.
	checkTokens(t, "漢\u3099字", "漢\u3099", "字")
	// A supplementary-plane ideograph is one token.
	checkTokens(t, "𠀋x", "𠀋", "x")
	// Scripts with Line_Break=SA (Thai, Lao, Myanmar, Khmer) have no
	// spaces between words; runs are kept whole.
	checkTokens(t, "การแพทย์ ໂຮງໝໍ", "การแพทย์", "ໂຮງໝໍ")
	checkTokens(t, "ยา.ยา", "ยา", "ยา")
	// Thai digits are Numeric, not SA.
	checkTokens(t, "ยา๑๒", "ยา", "๑๒")
}

func TestStandardTokenizerEmoji(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"fever🤒cough", []string{"fever", "🤒", "cough"}},
		{"💊 💊💊", []string{"💊", "💊", "💊"}},
		// Lucene's emoji rule (8.x as 9.x) takes Extended_Pictographic
		// symbols such as © ® ™ ↔ on their own, ending the word before
		// them; FE0F stays with the symbol, FE0E is dropped. These are
		// Lucene 8.8's tokens for the same texts.
		{"Brand® ©2020", []string{"Brand", "®", "©", "2020"}},
		{"Is Nutrasweet® Bad", []string{"Is", "Nutrasweet", "®", "Bad"}},
		{"Juice Plus+®", []string{"Juice", "Plus", "®"}},
		{"A™B x↔y ®™↔", []string{"A", "™", "B", "x", "↔", "y", "®", "™", "↔"}},
		{"™️ ↔︎ e.g.® Brand™'s", []string{"™️", "↔", "e.g", "®", "Brand", "™", "s"}},
		{"↔‍↔ x®́", []string{"↔‍↔", "x", "®́"}},
		// Presentation selector kept; text selector FE0E ends the emoji and
		// is then dropped.
		{"❤️ ❤\ufe0e", []string{"❤️", "❤"}},
		{"\u2b55\ufe0e\u200d\u2b55\ufe0e", []string{"\u2b55", "\u200d\u2b55"}},
		// Skin-tone modifiers, alone or after a base.
		{"👍🏽 🏽", []string{"👍🏽", "🏽"}},
		// ZWJ sequences, including with a modifier inside.
		{"👩‍⚕️ 👨🏼‍🔬 👩‍❤️‍👨", []string{"👩‍⚕️", "👨🏼‍🔬", "👩‍❤️‍👨"}},
		// Flags are pairs of regional indicators; a lone one is dropped.
		{"🇺🇸🇬🇧🇫", []string{"🇺🇸", "🇬🇧"}},
		{"🇫", nil},
		// Keycaps; a bare # or * is not an emoji.
		{"1️⃣ #️⃣ *⃣ # *", []string{"1️⃣", "#️⃣", "*⃣"}},
		// Tag sequence (flag of Scotland).
		{"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", []string{"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"}},
		// A letter absorbs a following ZWJ (WB4), so the emoji after it
		// stands alone (Lucene follows TR #51 here, not WB3c).
		{"a\u200d🛑", []string{"a\u200d", "🛑"}},
		// A pictograph that is also a letter (ℹ) joins a word.
		{"ℹabc ℹ️", []string{"ℹabc", "ℹ️"}},
	}
	for _, tt := range tests {
		checkTokens(t, tt.text, tt.want...)
	}
}

// units returns the length of s in UTF-16 code units.
func units(s string) int { return len(utf16.Encode([]rune(s))) }

func TestStandardTokenizerLongTokens(t *testing.T) {
	b255 := strings.Repeat("b", MaxTokenLength)
	checkTokens(t, "x "+b255+" "+b255+"b", "x", b255, b255, "b")
	checkTokens(t, strings.Repeat("7", 600), strings.Repeat("7", 255), strings.Repeat("7", 255), strings.Repeat("7", 90))

	// The cut falls where the 255-unit window ends, so a separator at the
	// cut is lost with the rest of the scan restarting after it.
	dotted := strings.Repeat("ab.", 100) // 300 units
	// Unit 255 is a '.', which may not end a word, so the first piece is
	// 254 units long; the scan resumes at that '.' and drops it, and the
	// trailing '.' is not part of the last word either.
	got := tokenize(dotted)
	want := []string{dotted[:254], dotted[255:299]}
	if !slices.Equal(got, want) {
		t.Errorf("dotted: got %d tokens %q, want %q", len(got), got, want)
	}

	// Supplementary characters count two units: 127 of them fill 254
	// units and the 128th would overflow.
	math := strings.Repeat("𝐀", 200)
	checkTokens(t, math, strings.Repeat("𝐀", 127), strings.Repeat("𝐀", 73))

	// The window also bounds runs of South East Asian script and of marks.
	thai := strings.Repeat("ก", 300)
	checkTokens(t, thai, strings.Repeat("ก", 255), strings.Repeat("ก", 45))
	marks := "a" + strings.Repeat("\u0301", 300)
	got = tokenize(marks)
	if len(got) != 1 || got[0] != marks[:1+2*254] {
		t.Errorf("letter + 300 marks: got %d tokens, first %d units", len(got), units(got[0]))
	}

	for _, tok := range tokenize(strings.Repeat("word_", 200) + strings.Repeat("ก", 999) + strings.Repeat("中", 10)) {
		if units(tok) > MaxTokenLength {
			t.Errorf("token of %d units", units(tok))
		}
	}
}

func TestStandardTokenizerAppends(t *testing.T) {
	dst := []string{"keep"}
	dst = StandardTokenizer{}.Tokenize(dst, "two words")
	if !slices.Equal(dst, []string{"keep", "two", "words"}) {
		t.Errorf("got %q", dst)
	}
}

func TestStandardTokenizerAllocs(t *testing.T) {
	dst := make([]string, 0, 64)
	text := "The patient's HbA1c was 9.8% (ref <5.7%); naïve T-cells, β-blockers, 日本語."
	if n := testing.AllocsPerRun(100, func() { dst = StandardTokenizer{}.Tokenize(dst[:0], text) }); n != 0 {
		t.Errorf("Tokenize allocates %v times per call with a large enough dst", n)
	}
}

func TestWhitespaceTokenizer(t *testing.T) {
	ws := func(s string) []string { return WhitespaceTokenizer{}.Tokenize(nil, s) }
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"  \t\n ", nil},
		{"Hello, World!\tfoo\r\nbar", []string{"Hello,", "World!", "foo", "bar"}},
		// Java's isWhitespace: no-break spaces and NEL are not whitespace;
		// the other Unicode spaces, the separators and FS..US are.
		{"a\u00a0b c\u2007d e\u202ff g\u0085h", []string{"a\u00a0b", "c\u2007d", "e\u202ff", "g\u0085h"}},
		{"a\u2003b\u3000c\u2028d\u001fe\u1680f", []string{"a", "b", "c", "d", "e", "f"}},
	}
	for _, tt := range tests {
		if got := ws(tt.text); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	long := strings.Repeat("x", 300)
	if got := ws(long); !slices.Equal(got, []string{long[:255], long[255:]}) {
		t.Errorf("300 x: got pieces of %d", len(got))
	}
	// A surrogate pair that crosses the limit stays whole: 256 units.
	edge := strings.Repeat("x", 254) + "𝐀" + "y"
	if got := ws(edge); !slices.Equal(got, []string{edge[:254+4], "y"}) {
		t.Errorf("surrogate at the limit: got %q", got)
	}
}
