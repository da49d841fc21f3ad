package tokenizer

import (
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes as Hugging Face tokenizers (Rust) defines them. The
// Basic Multilingual Plane is tabulated once; the rarer supplementary planes
// are classified on the fly.
const (
	// clsOther: Rust's unicode_categories is_other minus \t \n \r, which
	// BertNormalizer's clean_text removes. HF's table holds Cc, Cf, Co and Cs
	// but not unassigned code points (the oracle keeps U+0378), so neither
	// do we.
	clsOther uint8 = 1 << iota
	// clsSpace: Rust char::is_whitespace (the White_Space property).
	clsSpace
	// clsPunct: ASCII punctuation (which includes $ + < = > ^ ` | ~) or any
	// Unicode P* category: the BertPreTokenizer and Punctuation split set.
	clsPunct
	// clsMn: nonspacing marks, which BertNormalizer's strip_accents drops.
	clsMn
	// clsMark: all marks (Mn, Mc, Me), which the StripAccents normalizer drops.
	clsMark
	// clsChinese: the CJK ideograph blocks BertNormalizer pads with spaces.
	clsChinese
)

var (
	bmpOnce  sync.Once
	bmpClass *[0x10000]uint8
)

func class(r rune) uint8 {
	if r < 0x10000 {
		bmpOnce.Do(buildBMP)
		return bmpClass[r]
	}
	return classify(r)
}

func buildBMP() {
	t := new([0x10000]uint8)
	for r := rune(0); r < 0x10000; r++ {
		t[r] = classify(r)
	}
	bmpClass = t
}

// classify is Go's Unicode tables, corrected by hfClassFix where the Rust
// crates behind HF tokenizers carry older Unicode data.
func classify(r rune) uint8 {
	if i, ok := slices.BinarySearchFunc(hfClassFix, r, func(f classFix, r rune) int { return int(f.r - r) }); ok {
		return hfClassFix[i].c
	}
	return goClass(r)
}

type classFix struct {
	r rune
	c uint8
}

// goClass classifies by Go's Unicode tables alone.
func goClass(r rune) uint8 {
	var c uint8
	if r != '\t' && r != '\n' && r != '\r' &&
		(unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)) {
		c |= clsOther
	}
	if unicode.Is(unicode.White_Space, r) {
		c |= clsSpace
	}
	if isASCIIPunct(r) || unicode.IsPunct(r) {
		c |= clsPunct
	}
	if unicode.Is(unicode.Mn, r) {
		c |= clsMn
	}
	if unicode.IsMark(r) {
		c |= clsMark
	}
	if isChinese(r) {
		c |= clsChinese
	}
	return c
}

func isASCIIPunct(r rune) bool {
	return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
}

// isChinese is BertNormalizer's range list (Rust tokenizers), which differs
// from Google's original BERT in the Extension C/D boundary: U+2B820–2B91F
// is not padded.
func isChinese(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// asciiClass is the pre-tokenizer's view of the ASCII range.
var asciiClass = func() (t [128]uint8) {
	for b := 0; b < 128; b++ {
		t[b] = classify(rune(b))
	}
	return t
}()

// appendLower appends Rust's char::to_lowercase(r): Go's simple case
// mapping except for U+0130, whose full lowercase mapping is two runes.
func appendLower(dst []byte, r rune) []byte {
	if r == 0x130 {
		return append(dst, 'i', 0xCC, 0x87)
	}
	if len(hfLowerFix) > 0 && r >= hfLowerFix[0].r && r <= hfLowerFix[len(hfLowerFix)-1].r {
		if i, ok := slices.BinarySearchFunc(hfLowerFix, r, func(f lowerFix, r rune) int { return int(f.r - r) }); ok {
			return utf8.AppendRune(dst, hfLowerFix[i].to)
		}
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

// lowerFix is a lowercase mapping Rust's (newer) Unicode tables have and
// Go's lack.
type lowerFix struct{ r, to rune }
