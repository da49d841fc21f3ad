package fileio

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

type lineAt struct {
	line int
	text string
	off  int64
}

// readAll hands back every line Scan (or Next, for nonBlank) gives, with
// its number and the offset after it, and Err.
func readAll(l *Lines, nonBlank bool) ([]lineAt, error) {
	var got []lineAt
	for {
		var b []byte
		var ok bool
		if nonBlank {
			b, ok = l.Next()
		} else {
			b, ok = l.Scan()
		}
		if !ok {
			return got, l.Err()
		}
		got = append(got, lineAt{l.Line(), string(b), l.Offset()})
	}
}

func TestLines(t *testing.T) {
	cases := []struct {
		name, in string
		nonBlank bool
		want     []lineAt
		err      string
	}{
		{"LF", "a\nb\n", false, []lineAt{{1, "a", 2}, {2, "b", 4}}, ""},
		{"CRLF reads as LF", "a\r\nb\r\n", false, []lineAt{{1, "a", 3}, {2, "b", 6}}, ""},
		{"last line without newline", "a\nb", false, []lineAt{{1, "a", 2}, {2, "b", 3}}, ""},
		{"empty file", "", false, nil, ""},
		{"blank lines kept by Scan", "a\n\n \t\nb\n", false, []lineAt{{1, "a", 2}, {2, "", 3}, {3, " \t", 6}, {4, "b", 8}}, ""},
		{"blank lines skipped by Next, numbered", "a\n\n \t\r\nb\n", true, []lineAt{{1, "a", 2}, {4, "b", 9}}, ""},
		{"BOM at the start skipped", "\xef\xbb\xbfa\nb\n", false, []lineAt{{1, "a", 5}, {2, "b", 7}}, ""},
		{"BOM alone on line 1", "\xef\xbb\xbf\nb\n", true, []lineAt{{2, "b", 6}}, ""},
		{"BOM on a later line", "a\n\xef\xbb\xbfb\n", false, []lineAt{{1, "a", 2}}, "in.txt:2: line starts with a byte-order mark"},
		{"BOM inside a line is data", "a\xef\xbb\xbfb\n", false, []lineAt{{1, "a\xef\xbb\xbfb", 6}}, ""},
	}
	for _, c := range cases {
		got, err := readAll(NewLines(strings.NewReader(c.in), "in.txt", "text"), c.nonBlank)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestLinesLimit(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 17) + "\nafter\n"
	got, err := readAll(NewLines(strings.NewReader(in), "big.jsonl", "JSON-lines").Limit(16), false)
	want := "big.jsonl:2: line is longer than 16 bytes, the most the readers accept; a JSON-lines file holds one record per line"
	if len(got) != 1 || err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, error %v\nwant one line, then %s", got, err, want)
	}
	// A line of exactly the limit reads.
	if got, err := readAll(NewLines(strings.NewReader(strings.Repeat("x", 16)+"\n"), "ok", "text").Limit(16), false); err != nil || len(got) != 1 {
		t.Errorf("a line at the limit: %v, %v", got, err)
	}
}

// FreeText keeps a byte-order mark on a later line as the text's U+FEFF,
// still skipping the one at the start.
func TestLinesFreeText(t *testing.T) {
	got, err := readAll(NewLines(strings.NewReader("\xef\xbb\xbfa\n\xef\xbb\xbfb\n"), "t.txt", "text").FreeText(), false)
	if err != nil || len(got) != 2 || got[0].text != "a" || got[1].text != "\xef\xbb\xbfb" {
		t.Errorf("got %+v, %v", got, err)
	}
}

// Resume numbers lines and offsets on from where a reader starts.
func TestLinesResume(t *testing.T) {
	l := NewLines(strings.NewReader("c\nd\n"), "r", "text")
	l.Resume(2, 4)
	got, err := readAll(l, false)
	if err != nil || len(got) != 2 || got[0] != (lineAt{3, "c", 6}) || got[1] != (lineAt{4, "d", 8}) {
		t.Errorf("got %v, %v", got, err)
	}
}

// A gzip stream cut short is reported as a truncated file, not as a half
// line of data.
func TestLinesTruncated(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("a\nb\npartial"))
	zw.Flush()
	zr, err := gzip.NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(NewLines(zr, "cut.gz", "text"), false)
	if len(got) != 2 || err == nil || !strings.HasPrefix(err.Error(), "cut.gz:3: file ends in the middle of its data") {
		t.Errorf("got %v, error %v", got, err)
	}
}
