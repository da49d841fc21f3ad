package analysis

import "unicode/utf8"

// WhitespaceTokenizer is Lucene's WhitespaceTokenizer: tokens are maximal
// runs of characters that Java's Character.isWhitespace rejects, and, as in
// Lucene's CharTokenizer, a run is cut as soon as it reaches MaxTokenLength
// UTF-16 code units (so a piece may reach 256 when a surrogate pair
// straddles the limit).
type WhitespaceTokenizer struct{}

// Tokenize implements Tokenizer.
func (WhitespaceTokenizer) Tokenize(dst []string, text string) []string {
	start, n := -1, 0
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if isJavaWhitespace(r) {
			if start >= 0 {
				dst = append(dst, text[start:i])
				start = -1
			}
			i += size
			continue
		}
		if start < 0 {
			start, n = i, 0
		}
		i += size
		if n += 1 + size>>2; n >= MaxTokenLength {
			dst = append(dst, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		dst = append(dst, text[start:])
	}
	return dst
}

// isJavaWhitespace is java.lang.Character.isWhitespace: the Unicode space,
// line and paragraph separators except the no-break spaces, plus the ASCII
// controls TAB..CR and FS..US. Unlike Go's unicode.IsSpace it excludes
// U+0085 and U+00A0.
func isJavaWhitespace(r rune) bool {
	switch {
	case r == ' ' || r >= '\t' && r <= '\r' || r >= 0x1C && r <= 0x1F:
		return true
	case r < 0x1680:
		return false
	}
	switch r {
	case 0x1680, 0x2028, 0x2029, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A && r != 0x2007
}
