package trec

import (
	"strings"
	"testing"
)

func TestReadRunTag(t *testing.T) {
	for in, want := range map[string]string{
		"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1 bm25\n":                           "bm25",
		"\xef\xbb\xbfq1 Q0 d1 1 2.5 bm25→tei@10\n\nq2 Q0 d2 1 1 bm25→tei@10": "bm25→tei@10",
		"q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 b\n":                                   "", // several tags: none names the run
		"":                                                                   "",
	} {
		got, err := ReadRunTag(strings.NewReader(in), "run")
		if err != nil || got != want {
			t.Errorf("ReadRunTag(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestReadRunLastTag: runid is the last line's tag, as trec_eval keeps it,
// where the lines carry several; a short line names no tag.
func TestReadRunLastTag(t *testing.T) {
	for in, want := range map[string]string{
		"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1 bm25\n":     "bm25",
		"q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 b\nq2 Q0 d3 1 1": "b",
		"\xef\xbb\xbfq1 Q0 d1 1 2.5 x\n":               "x",
		"":                                             "",
	} {
		got, err := ReadRunLastTag(strings.NewReader(in), "run")
		if err != nil || got != want {
			t.Errorf("ReadRunLastTag(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
