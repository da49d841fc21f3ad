// Package errtext holds the wording the dataset and expansion readers share
// in their error messages, so that a user who meets the same problem in a
// task file and in a generation file reads the same sentence, and the
// plurals every output counts with (Plural, Count).
package errtext

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// QuoteList quotes ids, comma-separated, and after the first limit says
// only how many more there are: a broken file can mismatch thousands of
// ids, and the first few are enough to see the pattern.
func QuoteList(ids []string, limit int) string {
	var b strings.Builder
	for i, id := range ids {
		if i == limit {
			fmt.Fprintf(&b, " and %d more", len(ids)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", id)
	}
	return b.String()
}

// Plural is one when n is 1 and many otherwise ("1 query is", "2 queries
// are").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n and the noun for it, "1 system", "2 systems": what a page's
// template counts with.
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// JSONKind names a JSON value's type for messages ("a string", "an object",
// "null", …), from its first byte; an empty value is "nothing".
func JSONKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// JSONMsg is err's message without the "json: " prefix Go's JSON errors
// carry, which means nothing to someone fixing a data file.
func JSONMsg(err error) string {
	s := err.Error()
	if len(s) > 6 && s[:6] == "json: " {
		return s[6:]
	}
	return s
}

// DecodeObject decodes one line of a JSON-lines file, which must hold
// exactly one JSON object, and says in the readers' common words what the
// line holds instead when it does not. Text that is not valid Unicode is
// refused (CheckJSONText) rather than read as U+FFFD.
func DecodeObject(line []byte) (map[string]json.RawMessage, error) {
	if err := CheckJSONText(line, "line"); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			switch strings.TrimSpace(string(line)) {
			case "[", "[{":
				return nil, errors.New(`line opens a JSON array and ends: the file looks like one pretty-printed JSON array, not JSON lines; convert it to one object per line with jq -c '.[]' FILE`)
			case "{":
				return nil, errors.New(`line holds only "{": the objects look pretty-printed over several lines; write one object per line with jq -c . FILE`)
			}
			return nil, fmt.Errorf("malformed JSON at column %d: %s; each line must be one complete JSON object", se.Offset, JSONMsg(se))
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("line holds a JSON %s, want one JSON object per line", te.Value)
		}
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if m == nil {
		return nil, errors.New("line holds a JSON null, want one JSON object per line")
	}
	return m, nil
}
