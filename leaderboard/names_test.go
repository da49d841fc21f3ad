package leaderboard

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/latextest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/sysname"
)

// Long names of ours, as GAR, fusion and reranking with a hash make them;
// the first two differ only in the depth of the reranker, the last two in
// the reranker's kind, which a cut in the middle would leave out.
var longOurs = []string{
	"query2doc/qwen2.5-72b-instruct → rrf(bm25,bge,e5-mistral-7b-instruct) → insertrank:deepseek-r1-distill-qwen-32b@20 #3f2a",
	"query2doc/qwen2.5-72b-instruct → rrf(bm25,bge,e5-mistral-7b-instruct) → insertrank:deepseek-r1-distill-qwen-32b@40 #3f2a",
	"hyde/gpt4 → rrf(bm25,run:bm25→reasonrank:qwq-32b@20) → rank1:rank1-32b@100",
	"rrf(bm25,run:bm25-robertson) → insertrank:deepseek-r1-distill-qwen-32b@20",
	"rrf(bm25,run:bm25-robertson) → reasonrank:deepseek-r1-distill-qwen-32b@20",
}

// longBoard is R2MED's published systems, the later papers' and three of
// ours with long names on R2MED's eight tasks.
func longBoard(t *testing.T) *Board {
	t.Helper()
	root := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, name := range longOurs {
		for j, task := range TaskNames("") {
			writeRun(t, filepath.Join(root, string(rune('a'+i)), task), task, t0, map[string]any{"retriever": "bm25", "name": name},
				&results.R2MED{DatasetName: task, ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.3 + 0.01*float64(i+j)}})
		}
	}
	b, err := Load(root, Sources{Published: true, External: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLongNamesOnBoard: a board names each system by the one rule
// (sysname.ShortAll over its systems: at most sysname.Width characters,
// the hash and the depth kept, no two alike), every table format shows
// that name, the terminal at 120 columns and LaTeX included, and says
// what "…" means; csv and json give the names whole, and LaTeX and
// Markdown name each cut one whole in a comment.
func TestLongNamesOnBoard(t *testing.T) {
	b := longBoard(t)
	names := make([]string, len(b.Systems))
	for i, s := range b.Systems {
		names[i] = s.Name
	}
	want := sysname.ShortAll(names, sysname.Width)
	seen := map[string]bool{}
	for i := range b.Systems {
		s := &b.Systems[i]
		if got := s.DisplayName(); got != want[i] || utf8.RuneCountInString(got) > sysname.Width || seen[got] {
			t.Errorf("%q shown as %q, want %q, at most %d characters, once", s.Name, got, want[i], sysname.Width)
		}
		seen[s.DisplayName()] = true
		if s.IsOurs() && (!s.Cut() || !strings.Contains(s.DisplayName(), sysname.Ellipsis) || !strings.HasSuffix(s.DisplayName(), s.Name[strings.LastIndex(s.Name, "@"):])) {
			t.Errorf("%q shown as %q: not cut, or its depth and hash lost", s.Name, s.DisplayName())
		}
	}
	tb, err := b.Table(Options{PinOurs: true, Top: 10})
	if err != nil {
		t.Fatal(err)
	}
	out := map[Format]string{}
	for _, f := range []Format{Terminal, Markdown, CSV, JSON, LaTeX} {
		var w strings.Builder
		if err := tb.WriteWith(&w, f, WriteOptions{Width: 120}); err != nil {
			t.Fatal(err)
		}
		out[f] = w.String()
	}
	if w := maxWidth(out[Terminal]); w > 120 {
		t.Errorf("the terminal table is %d columns wide:\n%s", w, out[Terminal])
	}
	terminal := terminalNames(out[Terminal])
	for _, s := range tb.Rows[:len(longOurs)] {
		shown, full := s.System.DisplayName(), s.System.FullName()
		if !slices.Contains(terminal, shown) {
			t.Errorf("terminal table: no row names %q as %q: %q", full, shown, terminal)
		}
		for f, text := range map[Format]string{Markdown: "| " + shown + " (ours) |", LaTeX: " & " + texName(shown) + " (ours) & "} {
			if !strings.Contains(out[f], text) || strings.Contains(out[f], "| "+full) {
				t.Errorf("%s table: no row names %q as %q:\n%s", f, full, text, out[f])
			}
		}
		for f, text := range map[Format]string{LaTeX: "% " + shown + " is " + full + "\n", Markdown: "<!-- " + shown + " is " + full + " -->\n", CSV: `"` + full + `"`} {
			if !strings.Contains(out[f], text) {
				t.Errorf("%s table: lacks %q", f, text)
			}
		}
	}
	for _, f := range []Format{Terminal, Markdown} {
		if !strings.Contains(out[f], CutLegend) && !strings.Contains(strings.Join(strings.Fields(out[f]), " "), CutLegend) {
			t.Errorf("%s table does not say what … means:\n%s", f, out[f])
		}
	}
	var j JSONTable
	if err := json.Unmarshal([]byte(out[JSON]), &j); err != nil {
		t.Fatal(err)
	}
	var jsonNames []string
	for _, r := range j.Rows[:len(longOurs)] {
		jsonNames = append(jsonNames, r.Name)
	}
	slices.Sort(jsonNames)
	if !slices.Equal(jsonNames, slices.Sorted(slices.Values(longOurs))) {
		t.Errorf("json names our rows %q, want %q", jsonNames, longOurs)
	}
	latextest.CompilePage(t, LaTeXPackages(len(tb.Rows)), out[LaTeX])
}

// terminalNames reads the system column of a terminal table: each row's
// name, its wrapped lines joined (after a space, or directly after a
// hyphen, comma or slash, where textwrap breaks).
func terminalNames(table string) []string {
	lines := strings.Split(table, "\n")
	var names []string
	from, to := -1, -1
	for _, l := range lines {
		r := []rune(l)
		if from < 0 {
			if i := strings.Index(l, "system"); i >= 0 {
				from, to = utf8.RuneCountInString(l[:i]), utf8.RuneCountInString(l[:strings.Index(l, "src")])
			}
			continue
		}
		for len(r) < to {
			r = append(r, ' ')
		}
		if strings.TrimSpace(string(r[:from])) == "" && strings.TrimSpace(string(r[from:to])) == "" || strings.HasPrefix(l, "ᵖ") {
			break // the notes under the table
		}
		cell := strings.TrimSpace(string(r[from:to]))
		if strings.TrimSpace(string(r[:from])) != "" || len(names) == 0 {
			names = append(names, cell)
			continue
		}
		last := names[len(names)-1]
		if !strings.HasSuffix(last, "-") && !strings.HasSuffix(last, ",") && !strings.HasSuffix(last, "/") {
			last += " "
		}
		names[len(names)-1] = last + cell
	}
	return names
}
