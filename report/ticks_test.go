package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// The chart files mark their y axes as the page's charts do: round steps
// from 0 up to a round maximum (niceTicks), labelled 20, not 20.00, the
// same way in every panel. gonum's default marked the bar chart at three
// ticks and each recall panel at steps of its own.
func TestChartTicksReadAlike(t *testing.T) {
	root := longFixture(t)
	_, r := build(t, root, false, Options{})
	dir := t.TempDir()
	if _, err := r.WriteCharts(dir, SVG); err != nil {
		t.Fatal(err)
	}
	label := regexp.MustCompile(`>(-?[0-9][0-9.]*)</text>`)
	read := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range label.FindAllSubmatch(b, -1) {
			out = append(out, string(m[1]))
			if regexp.MustCompile(`\.0+$`).Match(m[1]) {
				t.Errorf("%s: tick label %q", name, m[1])
			}
		}
		return out
	}
	bars := read("bars.svg")
	var ticks []float64
	for _, s := range bars {
		v, _ := strconv.ParseFloat(s, 64)
		ticks = append(ticks, v)
	}
	if len(ticks) < 4 || ticks[0] != 0 {
		t.Fatalf("bars.svg y ticks %v: want round steps from 0", bars)
	}
	for i := 2; i < len(ticks); i++ {
		if ticks[i]-ticks[i-1] != ticks[1] {
			t.Errorf("bars.svg y ticks %v: not equal steps", bars)
		}
	}
	if want := niceTicks(ticks[len(ticks)-1], 5); len(want) != len(ticks) {
		t.Errorf("bars.svg y ticks %v, want niceTicks' %v", ticks, want)
	}
	read("recall.svg")
}
