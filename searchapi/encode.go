package searchapi

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/r2med/r2med/highlight"
)

// An answer's results are written by hand rather than by encoding/json's
// reflection: a default request's answer (ten hits with snippets, a few
// dozen strings) cost as much to encode as its snippets did to make. The
// bytes are exactly what a json.Encoder with SetEscapeHTML(false) writes
// of a Result, newline included (TestAppendResultIsEncodingJSON and
// FuzzAppendResult compare the two), so the answer's shape stays the one
// the struct tags declare.

// appendResult appends r as a json.Encoder with SetEscapeHTML(false)
// encodes it, and the error that encoder gives (a score that is NaN or
// infinite).
func appendResult(b []byte, r *Result) ([]byte, error) {
	b = append(b, '{')
	if r.ID != "" {
		b = append(b, `"id":`...)
		b = appendJSONString(b, r.ID)
		b = append(b, ',')
	}
	b = append(b, `"query":`...)
	b = appendJSONString(b, r.Query)
	b = append(b, `,"system":`...)
	b = appendJSONString(b, r.System)
	b = append(b, `,"hits":`...)
	if r.Hits == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Hits {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendHit(b, &r.Hits[i]); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	if e := r.Expansion; e != nil {
		b = append(b, `,"expansion":{"method":`...)
		b = appendJSONString(b, e.Method)
		b = append(b, `,"llm":`...)
		b = appendJSONString(b, e.LLM)
		b = append(b, `,"generation":`...)
		b = appendJSONString(b, e.Generation)
		b = append(b, `,"text":`...)
		b = appendJSONString(b, e.Text)
		b = append(b, `,"cached":`...)
		b = strconv.AppendBool(b, e.Cached)
		b = append(b, '}')
	}
	return append(b, "}\n"...), nil
}

func appendHit(b []byte, h *Hit) ([]byte, error) {
	b = append(b, `{"rank":`...)
	b = strconv.AppendInt(b, int64(h.Rank), 10)
	b = append(b, `,"id":`...)
	b = appendJSONString(b, h.ID)
	b = append(b, `,"score":`...)
	var err error
	if b, err = appendJSONFloat(b, h.Score); err != nil {
		return b, err
	}
	if len(h.Snippet) > 0 {
		b = append(b, `,"snippet":[`...)
		for i, s := range h.Snippet {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSegment(b, s)
		}
		b = append(b, ']')
	}
	if h.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	if len(h.Matched) > 0 {
		b = append(b, `,"matched_terms":[`...)
		for i, t := range h.Matched {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, t)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func appendSegment(b []byte, s highlight.Segment) []byte {
	b = append(b, `{"text":`...)
	b = appendJSONString(b, s.Text)
	if s.Match {
		b = append(b, `,"match":true`...)
	}
	return append(b, '}')
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest decimal that reads back as f, in exponent form below 1e-6 and
// from 1e21 on (ES6's rule), with a one-digit exponent where it has one;
// NaN and infinities are its UnsupportedValueError.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-07, not e-7: drop the exponent's leading zero
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendJSONString appends s quoted as encoding/json quotes a string
// without HTML escaping: '"' and '\\' escaped, control characters as
// \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped (JSONP), everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
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
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
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
