// Package jsonw writes JSON text by hand where encoding/json's reflection
// and HTML escaping would be the bulk of a writer's time (tokenised corpora
// and synthetic tasks of hundreds of megabytes).
package jsonw

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s to b as a JSON string and returns the extended
// slice: the bytes of encoding/json with SetEscapeHTML(false). It leaves
// <, > and & alone (nothing written here is embedded in HTML), writes
// \b \f \n \r \t so and other control characters as \u00XX, invalid
// UTF-8 as U+FFFD, and escapes U+2028 and U+2029, which are valid JSON but
// end a line in JavaScript, so every value stays on its JSON line for any
// reader.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether each of the 8 bytes of s is ASCII that a JSON
// string holds as it is (not a control character, '"' or '\\'), testing
// them at once: a byte below 0x20 borrows in x-0x20…, a byte equal to
// '"' or '\\' is zero in x^'"'… and so borrows in (x^'"')-0x01…, and a
// byte from 0x80 has its top bit set. A borrow can only flag more bytes,
// never fewer, so a false answer just sends the bytes one at a time.
func plain8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, high = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return (x|(x-ones*0x20)|(q-ones)|(bs-ones))&high == 0
}
