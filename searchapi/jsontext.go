package searchapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// checkJSONText refuses what encoding/json would quietly accept: text
// that is not UTF-8 and escapes of lone UTF-16 surrogates (both decoded
// as U+FFFD, where a GET's query string is refused), and an object key
// given twice (decoded as the last, where the first may be what was
// meant).
func checkJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8 (JSON text is UTF-8)")
	}
	if err := checkSurrogates(b); err != nil {
		return err
	}
	return checkDuplicateKeys(b)
}

// checkSurrogates finds \uD800–\uDFFF escapes that are not a high and a
// low surrogate in a row.
func checkSurrogates(b []byte) error {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			if i+1 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b, i+2)
				switch {
				case !ok:
				case r >= 0xD800 && r < 0xDC00:
					lo, ok := hex4(b, i+8)
					if i+7 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' || !ok || lo < 0xDC00 || lo > 0xDFFF {
						return fmt.Errorf("\\u%04X at byte %d is half a UTF-16 surrogate pair, not a character", r, i)
					}
					i += 6
				case r >= 0xDC00 && r <= 0xDFFF:
					return fmt.Errorf("\\u%04X at byte %d is half a UTF-16 surrogate pair, not a character", r, i)
				}
			}
			i++ // the escaped character
		}
	}
	return nil
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(n), err == nil
}

// checkDuplicateKeys walks the JSON tokens, refusing an object that
// gives a key twice. Syntax errors are left to the decoder.
func checkDuplicateKeys(b []byte) error {
	type frame struct {
		keys    map[string]bool // nil in an array
		wantKey bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.keys != nil {
			if top.wantKey {
				k, _ := tok.(string)
				if top.keys[k] {
					return fmt.Errorf("key %q given twice in one object", k)
				}
				top.keys[k] = true
				top.wantKey = false
				continue
			}
			top.wantKey = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		}
	}
}
