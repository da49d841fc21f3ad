package dataset

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// fastDoc decodes the shape nearly every corpus line has, {"id": "…",
// "text": "…"} (BEIR: "_id", optional "title", "text"), without reflection
// or the intermediate map the general path builds; on a 400 MB corpus that
// is the difference between JSON decoding dominating the load and not (see
// BenchmarkReadCorpus). It reports ok=false for anything else: other keys,
// non-string values, invalid UTF-8, lone surrogates, malformed JSON. The
// caller then decodes the line with slowDoc, which is authoritative and
// produces the error messages, so this path only ever has to be right about
// lines it accepts (FuzzReadCorpus checks that it agrees with slowDoc).
// scratch is reused for strings with escapes and returned grown.
func fastDoc(line []byte, beir bool, scratch []byte) (d ir.Doc, _ []byte, ok bool) {
	p := jparser{b: line, scratch: scratch}
	var id, title, text string
	var haveID, haveText bool
	p.ws()
	if !p.eat('{') {
		return ir.Doc{}, p.scratch, false
	}
	for first := true; ; first = false {
		p.ws()
		if !first {
			if p.eat('}') {
				break
			}
			if !p.eat(',') {
				return ir.Doc{}, p.scratch, false
			}
			p.ws()
		}
		key, kok := p.key()
		if !kok {
			return ir.Doc{}, p.scratch, false
		}
		p.ws()
		if !p.eat(':') {
			return ir.Doc{}, p.scratch, false
		}
		p.ws()
		s, sok := p.str()
		if !sok {
			return ir.Doc{}, p.scratch, false
		}
		// Repeated keys keep the last value, as encoding/json does. The
		// string(key) comparisons compile to byte compares, no allocation.
		switch {
		case string(key) == "text":
			text, haveText = s, true
		case string(key) == "id" && !beir, string(key) == "_id" && beir:
			id, haveID = s, true
		case string(key) == "title" && beir:
			title = s
		default:
			return ir.Doc{}, p.scratch, false
		}
	}
	p.ws()
	if p.i != len(p.b) || !haveID || !haveText || fileio.CheckID(id) != nil {
		return ir.Doc{}, p.scratch, false
	}
	return ir.Doc{ID: id, Text: joinTitle(title, text)}, p.scratch, true
}

type jparser struct {
	b       []byte
	i       int
	scratch []byte
}

func (p *jparser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key returns an object key's bytes; keys with escapes or non-ASCII bytes
// are left to the general path (no real corpus has them).
func (p *jparser) key() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			k := p.b[start:p.i]
			p.i++
			return k, true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// str decodes a JSON string value with encoding/json's result for every
// input it accepts. Content between escapes is located with
// bytes.IndexByte (vectorized) and checked eight bytes at a time, since
// this loop is where a corpus load spends its time.
func (p *jparser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	var buf []byte
	escaped := false
	quote := -1 // index of the next '"' at or after p.i, once known
	for {
		if quote < p.i {
			q := bytes.IndexByte(p.b[p.i:], '"')
			if q < 0 {
				return "", false
			}
			quote = p.i + q
		}
		end := quote
		if bs := bytes.IndexByte(p.b[p.i:quote], '\\'); bs >= 0 {
			end = p.i + bs
		}
		if !cleanRun(p.b[p.i:end]) {
			return "", false
		}
		if escaped {
			buf = append(buf, p.b[p.i:end]...)
		}
		p.i = end
		if end == quote {
			p.i++
			if !escaped {
				return string(p.b[start:end]), true
			}
			p.scratch = buf
			return string(buf), true
		}
		if !escaped {
			buf = append(p.scratch[:0], p.b[start:p.i]...)
			escaped = true
		}
		var ok bool
		if buf, ok = p.escape(buf); !ok {
			return "", false
		}
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// cleanRun reports whether run is string content JSON allows raw and
// encoding/json keeps unchanged: no control bytes, valid UTF-8. Invalid
// UTF-8 is legal JSON that encoding/json rewrites to U+FFFD; the caller
// leaves that rare case to it.
func cleanRun(run []byte) bool {
	firstHigh := -1 // start of the first 8-byte group with a non-ASCII byte
	i := 0
	for ; i+8 <= len(run); i += 8 {
		w := binary.LittleEndian.Uint64(run[i:])
		// Nonzero exactly when some byte is below 0x20 (the "hasless"
		// bit trick; borrows only add bits above a byte that is).
		if (w-ones*0x20)&^w&highs != 0 {
			return false
		}
		if firstHigh < 0 && w&highs != 0 {
			firstHigh = i
		}
	}
	for j := i; j < len(run); j++ {
		if run[j] < 0x20 {
			return false
		}
		if firstHigh < 0 && run[j] >= utf8.RuneSelf {
			firstHigh = j
		}
	}
	if firstHigh < 0 {
		return true
	}
	// The ASCII prefix cannot hold part of a multi-byte sequence.
	return utf8.Valid(run[firstHigh:])
}

// escape decodes the escape sequence at p.i onto buf.
func (p *jparser) escape(buf []byte) ([]byte, bool) {
	if p.i+1 >= len(p.b) {
		return buf, false
	}
	e := p.b[p.i+1]
	p.i += 2
	switch e {
	case '"', '\\', '/':
		return append(buf, e), true
	case 'b':
		return append(buf, '\b'), true
	case 'f':
		return append(buf, '\f'), true
	case 'n':
		return append(buf, '\n'), true
	case 'r':
		return append(buf, '\r'), true
	case 't':
		return append(buf, '\t'), true
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return buf, false
		}
		if utf16.IsSurrogate(r) {
			// Only a proper high+low pair is decoded here; encoding/json
			// turns lone halves into U+FFFD, which the general path does.
			if r >= 0xdc00 || p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
				return buf, false
			}
			p.i += 2
			r2, ok := p.hex4()
			if !ok {
				return buf, false
			}
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				return buf, false
			}
		}
		return utf8.AppendRune(buf, r), true
	}
	return buf, false
}

func (p *jparser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}
