package searchapi

import (
	"bytes"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// checkJSONText refuses what encoding/json would quietly accept: text
// that is not UTF-8 and escapes of lone UTF-16 surrogates (both decoded
// as U+FFFD, where a GET's query string is refused), and an object member
// given twice (decoded as the last, where the first may be what was
// meant). jsontext (the JSON v2 proposal's tokenizer) checks all three
// by default. (Given a bytes.Buffer it reads b in place, not a copy.)
func checkJSONText(b []byte) error {
	err := jsontext.NewDecoder(bytes.NewBuffer(b)).SkipValue()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return errors.New(strings.TrimPrefix(se.Error(), "jsontext: "))
	}
	return nil // other syntax errors are the decoder's to report
}
