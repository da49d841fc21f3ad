package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/report/reporttest"
)

// TestLegendNamesDistinct: no two keys of a legend read the same. A long
// name is cut in its middle, so the end that tells similar systems apart
// (a depth, a hash suffix) stays; one of ours named as a published system
// is told apart by its origin.
func TestLegendNamesDistinct(t *testing.T) {
	long := "rrf(bm25,run:bm25→insertrank:deepseek-r1-distill-qwen-32b) → reasonrank:deepseek-r1"
	for _, pair := range [][2]string{
		{long + "@10", long + "@20"},
		{long + " #3f2a", long + " #9c01"},
		{"bm25 → insertrank:deepseek-r1-distill-qwen-32b@20", "bm25 → reasonrank:deepseek-r1-distill-qwen-32b@20"},
	} {
		a, b := short(pair[0]), short(pair[1])
		if a == b || len([]rune(a)) > MaxLabel || len([]rune(b)) > MaxLabel {
			t.Errorf("%q and %q are cut to %q and %q", pair[0], pair[1], a, b)
		}
	}
	if s := short(long + " #3f2a"); !strings.HasSuffix(s, " #3f2a") {
		t.Errorf("the hash suffix is cut: %q", s)
	}

	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := reporttest.Write(reporttest.Run{Dir: filepath.Join(root, "nv", "Biology"), Task: "Biology", System: "nv", Ranked: reporttest.Perfect(task)}); err != nil {
		t.Fatal(err)
	}
	_, r := build(t, root, true, Options{Systems: []string{"ours/nv", "base/nv"}})
	if got := strings.Join(r.chartedNames(), "|"); got != "nv (ours)|nv (published)" {
		t.Errorf("legend names %q", got)
	}
	html := r.Bars.SVG()
	if !strings.Contains(html, "nv (ours)") || !strings.Contains(html, "nv (published)") {
		t.Errorf("the bar chart's legend does not tell the two nv apart")
	}
}
