package fileio

import (
	"testing"
	"unicode/utf8"
)

// pythonSpace is every character Python 3's str.isspace() is true for
// ([c for c in range(0x110000) if chr(c).isspace()]), which str.split()
// splits on.
var pythonSpace = []rune{
	0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
	0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
}

// TestCheckIDIsPythonSplit: an id passes exactly when Python's str.split()
// leaves it whole, for every character there is.
func TestCheckIDIsPythonSplit(t *testing.T) {
	splits := make(map[rune]bool)
	for _, r := range pythonSpace {
		splits[r] = true
	}
	for r := rune(1); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		id := "a" + string(r) + "b"
		if got := CheckID(id) != nil; got != splits[r] {
			t.Errorf("CheckID(%q) refuses: %v, Python splits it: %v", id, got, splits[r])
		}
		if _, i := PythonSpace([]byte(id)); (i == 1) != (splits[r] && !(r < utf8.RuneSelf && IsSpace(byte(r)))) || (i != 1 && i != -1) {
			t.Errorf("PythonSpace(%q) at %d", id, i)
		}
	}
	if CheckID("") == nil {
		t.Error("an empty id passes")
	}
}

func TestSkipBOM(t *testing.T) {
	if b, err := SkipBOM([]byte("\xef\xbb\xbfq1 0 d1 1"), 1); err != nil || string(b) != "q1 0 d1 1" {
		t.Errorf("first line: %q, %v", b, err)
	}
	if _, err := SkipBOM([]byte("\xef\xbb\xbfq1 0 d1 1"), 2); err == nil {
		t.Error("a byte-order mark on line 2 (files joined with cat) passes")
	}
	if b, err := SkipBOM([]byte("q1"), 2); err != nil || string(b) != "q1" {
		t.Errorf("plain line: %q, %v", b, err)
	}
}
