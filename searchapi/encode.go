package searchapi

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/internal/jsonw"
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
		b = jsonw.AppendString(b, r.ID)
		b = append(b, ',')
	}
	b = append(b, `"query":`...)
	b = jsonw.AppendString(b, r.Query)
	b = append(b, `,"system":`...)
	b = jsonw.AppendString(b, r.System)
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
		b = jsonw.AppendString(b, e.Method)
		b = append(b, `,"llm":`...)
		b = jsonw.AppendString(b, e.LLM)
		b = append(b, `,"generation":`...)
		b = jsonw.AppendString(b, e.Generation)
		b = append(b, `,"text":`...)
		b = jsonw.AppendString(b, e.Text)
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
	b = jsonw.AppendString(b, h.ID)
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
			b = jsonw.AppendString(b, t)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func appendSegment(b []byte, s highlight.Segment) []byte {
	b = append(b, `{"text":`...)
	b = jsonw.AppendString(b, s.Text)
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
