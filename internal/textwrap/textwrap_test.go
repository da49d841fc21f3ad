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

func TestTable(t *testing.T) {
	rows := [][]string{
		{"task", "family", "queries", "repository"},
		{"Biology", "Q&A reference retrieval", "103", "hf://datasets/R2MED/Biology@8b9fec2db9eda4b5742d03732213fbaee8169556"},
		{"IIYi-Clinical", "Clinical case retrieval", "129", "hf://datasets/R2MED/IIYi-Clinical@974abbc9bc281c3169180a6aa5d7586cfd2f5877"},
	}
	wide := Table(rows, 0, Layout{Wrap: []int{1, 3}, Right: []int{2}})
	if len(wide) != 3 || !strings.HasPrefix(wide[1], "Biology        Q&A reference retrieval      103  hf://") {
		t.Fatalf("unlimited:\n%s", strings.Join(wide, "\n"))
	}
	for _, width := range []int{120, 80, 60} {
		lines := Table(rows, width, Layout{Wrap: []int{1, 3}, Right: []int{2}})
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d runes: %q", width, n, l)
			}
		}
		// Nothing is cut: each row's repository lines, joined, are its
		// repository (which has no spaces to break at).
		off := strings.Index(lines[0], "repository")
		var got []string
		for _, l := range lines[1:] {
			if l[0] != ' ' {
				got = append(got, "")
			}
			if len(l) > off {
				got[len(got)-1] += l[off:]
			}
		}
		if len(got) != 2 || got[0] != rows[1][3] || got[1] != rows[2][3] {
			t.Errorf("width %d: repositories %q, want them whole, in\n%s", width, got, strings.Join(lines, "\n"))
		}
	}
	// Columns not listed in wrap keep their width; what cannot fit is
	// returned as narrow as it goes.
	if lines := Table(rows, 10, Layout{}); lines[0] != wide[0] {
		t.Errorf("without wrap columns the header changed: %q", lines[0])
	}
}

// A Below column leaves a table too wide for it and goes, whole, on a
// line of its own under its row; a table that fits keeps it in place.
func TestTableBelow(t *testing.T) {
	rows := [][]string{
		{"task", "queries", "repository"},
		{"Biology", "103", "hf://datasets/R2MED/Biology@8b9fec2db9eda4b5742d03732213fbaee8169556"},
		{"all", "876", ""},
	}
	got := strings.Join(Table(rows, 40, Layout{Below: 3, Right: []int{1}}), "\n")
	want := "task     queries\n  repository\nBiology      103\n  hf://datasets/R2MED/Biology@8b9fec2db9eda4b5742d03732213fbaee8169556\nall          876"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if lines := Table(rows, 200, Layout{Below: 3}); len(lines) != 3 || !strings.HasSuffix(lines[1], "  hf://datasets/R2MED/Biology@8b9fec2db9eda4b5742d03732213fbaee8169556") {
		t.Errorf("a table that fits moved its column:\n%s", strings.Join(lines, "\n"))
	}
}
