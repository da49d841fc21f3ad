package tokenizer

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer appends the normalized form of src to dst. tmp is scratch
// space it may use (and grow); it returns the grown scratch.
type normalizer interface {
	normalize(dst, src []byte, tmp []byte) (out, tmpOut []byte)
}

// bertNormalizer is HF's BertNormalizer. Its steps run in HF's order:
// clean_text, handle_chinese_chars, strip_accents (NFD, then drop Mn),
// lowercase. Every step but NFD works rune by rune, so the first three run
// fused in one pass; NFD and the Mn filter run only when the text has
// non-ASCII characters left (NFD of ASCII is ASCII).
type bertNormalizer struct {
	clean, chinese, strip, lower bool
}

func (n *bertNormalizer) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	start := len(dst)
	nonASCII := false
	for i := 0; i < len(src); {
		b := src[i]
		if b < utf8.RuneSelf {
			i++
			if n.clean {
				if b == '\t' || b == '\n' || b == '\r' {
					dst = append(dst, ' ')
					continue
				}
				if b < 0x20 || b == 0x7f {
					continue
				}
			}
			if n.lower && b >= 'A' && b <= 'Z' {
				b += 'a' - 'A'
			}
			dst = append(dst, b)
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		i += size
		c := class(r)
		if n.clean {
			if r == utf8.RuneError || c&clsOther != 0 {
				continue
			}
			if c&clsSpace != 0 {
				dst = append(dst, ' ')
				continue
			}
		}
		nonASCII = true
		if n.chinese && c&clsChinese != 0 {
			dst = append(dst, ' ')
			dst = utf8.AppendRune(dst, r)
			dst = append(dst, ' ')
			continue
		}
		// With accents to strip, lowercasing waits until after NFD, as in HF.
		if n.lower && !n.strip {
			dst = appendLower(dst, r)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	if !n.strip || !nonASCII {
		return dst, tmp
	}
	tmp = norm.NFD.Append(tmp[:0], dst[start:]...)
	dst = dst[:start]
	for i := 0; i < len(tmp); {
		b := tmp[i]
		if b < utf8.RuneSelf {
			// Decomposition makes ASCII of É, so lowercase again.
			if n.lower && b >= 'A' && b <= 'Z' {
				b += 'a' - 'A'
			}
			dst = append(dst, b)
			i++
			continue
		}
		r, size := utf8.DecodeRune(tmp[i:])
		i += size
		if class(r)&clsMn != 0 {
			continue
		}
		if n.lower {
			dst = appendLower(dst, r)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst, tmp
}

// sequenceNormalizer runs its steps in order, each on the previous output.
type sequenceNormalizer []normalizer

func (s sequenceNormalizer) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	if len(s) == 0 {
		return append(dst, src...), tmp
	}
	// Steps ping-pong between two private buffers; the last appends to dst.
	var a, b []byte
	cur := src
	for i, step := range s {
		if i == len(s)-1 {
			return step.normalize(dst, cur, tmp)
		}
		a, tmp = step.normalize(a[:0], cur, tmp)
		cur, a, b = a, b, a
	}
	return dst, tmp
}

type unicodeForm struct{ f norm.Form }

func (u unicodeForm) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	return u.f.Append(dst, src...), tmp
}

type lowercase struct{}

func (lowercase) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	for i := 0; i < len(src); {
		b := src[i]
		if b < utf8.RuneSelf {
			if b >= 'A' && b <= 'Z' {
				b += 'a' - 'A'
			}
			dst = append(dst, b)
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		i += size
		dst = appendLower(dst, r)
	}
	return dst, tmp
}

// stripAccents is HF's StripAccents normalizer: it drops every combining
// mark (Mn, Mc, Me) but decomposes nothing, so it is used after NFD/NFKD.
type stripAccents struct{}

func (stripAccents) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	for i := 0; i < len(src); {
		if src[i] < utf8.RuneSelf {
			dst = append(dst, src[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if class(r)&clsMark == 0 {
			dst = append(dst, src[i:i+size]...)
		}
		i += size
	}
	return dst, tmp
}

// strip is HF's Strip normalizer (white space at either end).
type strip struct{ left, right bool }

func (s strip) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	isSpace := func(r rune) bool { return class(r)&clsSpace != 0 }
	if s.left {
		src = bytes.TrimLeftFunc(src, isSpace)
	}
	if s.right {
		src = bytes.TrimRightFunc(src, isSpace)
	}
	return append(dst, src...), tmp
}

// replace is HF's Replace normalizer with a literal (String) pattern.
type replace struct{ old, new []byte }

func (r replace) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	for {
		i := bytes.Index(src, r.old)
		if i < 0 {
			return append(dst, src...), tmp
		}
		dst = append(dst, src[:i]...)
		dst = append(dst, r.new...)
		src = src[i+len(r.old):]
	}
}

// prepend is HF's Prepend normalizer: it prefixes non-empty text.
type prepend struct{ s string }

func (p prepend) normalize(dst, src, tmp []byte) ([]byte, []byte) {
	if len(src) == 0 {
		return dst, tmp
	}
	dst = append(dst, p.s...)
	return append(dst, src...), tmp
}
