package textwrap

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLines(t *testing.T) {
	s := "  system-a, largest gains: demo/q8 0.6131→0.8503; demo/q9 0.8066→0.8175; demo/q1 0.5307→0.7039"
	got := Lines(s, 40)
	for i, l := range got {
		if utf8.RuneCountInString(l) > 40 {
			t.Errorf("line %d is %d wide: %q", i, utf8.RuneCountInString(l), l)
		}
		if want := map[bool]string{true: "  s", false: "    "}[i == 0]; !strings.HasPrefix(l, want) {
			t.Errorf("line %d %q: indentation lost", i, l)
		}
	}
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(s), " ") {
		t.Errorf("words lost: %q", got)
	}
	if got := Lines("short", 0); len(got) != 1 || got[0] != "short" {
		t.Errorf("unbounded: %q", got)
	}
}

func TestName(t *testing.T) {
	name := "rrf(bm25,bm25-robertson) → insertrank:deepseek-r1@20 [k1=1.2 b=0.75 window=20 step=10]"
	got := Name(name, 24)
	for _, l := range got {
		if utf8.RuneCountInString(l) > 24 {
			t.Errorf("%q is wider than 24", l)
		}
	}
	if strings.ReplaceAll(strings.Join(got, ""), " ", "") != strings.ReplaceAll(name, " ", "") {
		t.Errorf("the name is not whole: %q", got)
	}
	if got[0] != "rrf(bm25,bm25-" {
		t.Errorf("first line %q: want a break after the hyphen", got[0])
	}
}
