package leaderboard

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/latextest"
)

// board is R2MED's published systems with the later papers' ones: the
// 91-row table people print.
func board(t *testing.T) []System {
	t.Helper()
	es, err := Externals()
	if err != nil {
		t.Fatal(err)
	}
	return append(pubSystems(t), es...)
}

// TestSelectRows: --systems and --top choose rows, ranks stay the whole
// board's (and the legend says so), the best of each column is the best
// of the rows shown, and a misspelt system is a usage error naming the
// nearest one.
func TestSelectRows(t *testing.T) {
	all := build(t, board(t), Options{})
	tb := build(t, board(t), Options{Top: 3, Systems: []string{"bm25", "base/nv"}})
	var names []string
	var ranks []int
	for _, r := range tb.Rows {
		names, ranks = append(names, r.System.Name), append(ranks, r.Rank)
	}
	if got := strings.Join(names, "|"); !strings.HasPrefix(got, "InsertRank") || len(tb.Rows) != 5 || !strings.HasSuffix(got, "|nv|bm25") {
		t.Fatalf("rows %s, ranks %v", got, ranks)
	}
	if ranks[3] != row(t, all, "nv").Rank || ranks[4] != row(t, all, "bm25").Rank || tb.BoardSize != len(all.Rows) {
		t.Errorf("ranks %v (board %d): want the whole board's", ranks, tb.BoardSize)
	}
	if want := fmt.Sprintf("5 of the board's %d systems shown; # is the rank among all %d", len(all.Rows), len(all.Rows)); !strings.Contains(strings.Join(tb.Legend(), "\n"), want) {
		t.Errorf("legend %q", tb.Legend())
	}
	// nv's MedXpert 13.42? The best MedXpertQA of these five rows.
	j := 3 // MedXpertQA-Exam
	best := math.Inf(-1)
	for _, r := range tb.Rows {
		if s := r.Scores[j]; s.OK {
			best = max(best, s.Value)
		}
	}
	if tb.Best[j] != best || tb.Best[j] == all.Best[j] {
		t.Errorf("MedXpert best %v: want %v, the shown rows' (the board's is %v)", tb.Best[j], best, all.Best[j])
	}
	_, err := Build(board(t), Options{Systems: []string{"bm52"}})
	var ue *UsageError
	// (This board keeps ReasonEmbed's reprint of R2MED's BM25 as a row of
	// its own, printed 15.13 as R2MED's is: either name is the nearest.)
	if !errors.As(err, &ue) || !strings.Contains(strings.ToLower(err.Error()), `unknown system "bm52" (did you mean "bm25"?)`) {
		t.Errorf("misspelt system: %v", err)
	}
	if _, err := Build(board(t), Options{Top: -1}); !errors.As(err, &ue) {
		t.Errorf("top -1: %v", err)
	}
	// Our runs stay with --top while pinned.
	ours := synthetic(map[string][]float64{"mine": {.1, .1, .1, .1, .1, .1, .1, .1}})
	tb = build(t, append(board(t), ours...), Options{Top: 2, PinOurs: true})
	if len(tb.Rows) != 3 || tb.Rows[0].System.Name != "mine" {
		t.Errorf("top 2 pinned: %d rows, first %s", len(tb.Rows), tb.Rows[0].System.Name)
	}
}

// TestChooseTasks: --tasks picks columns by name, alias or short name, in
// R2MED's order, the average over them; average-only rows (a paper's
// printed 8-task average) leave; a misspelt task is a usage error.
func TestChooseTasks(t *testing.T) {
	tb := build(t, board(t), Options{Tasks: []string{"IIYi", "Biology"}})
	if strings.Join(tb.Tasks, ",") != "Biology,IIYi-Clinical" || !tb.Subset || tb.Title() != "nDCG@10 ×100 (2-task average: Bio, IIYi)" {
		t.Fatalf("tasks %v subset %v title %q", tb.Tasks, tb.Subset, tb.Title())
	}
	for _, r := range tb.Rows {
		if r.AverageOnly {
			t.Errorf("%s: an 8-task printed average on a 2-task table", r.System.Name)
		}
	}
	// bm25: Biology 19.19, IIYi 12.02 → 15.61 (15.605 computed in float: 15.61).
	if got := tb.AverageText(row(t, tb, "bm25")); got != "15.61" {
		t.Errorf("bm25's 2-task average %s", got)
	}
	var ue *UsageError
	if _, err := Build(board(t), Options{Tasks: []string{"Biolgy"}}); !errors.As(err, &ue) || !strings.Contains(err.Error(), `did you mean "Biology"?`) {
		t.Errorf("misspelt task: %v", err)
	}
	if _, err := Build(board(t), Options{Tasks: []string{"Biology"}, Family: "qa-reference"}); !errors.As(err, &ue) {
		t.Errorf("tasks and family: %v", err)
	}
}

// TestBordaLeavesAverageOnly: a row with only a printed average has no
// per-task values to rank by Borda, so the Borda table leaves it out.
func TestBordaLeavesAverageOnly(t *testing.T) {
	avg := build(t, board(t), Options{})
	if !avg.Rows[0].AverageOnly {
		t.Fatal("the average view lost InsertRank's printed average")
	}
	for _, r := range build(t, board(t), Options{Ranking: ByBorda}).Rows {
		if r.AverageOnly || r.Have == 0 {
			t.Errorf("%s on the Borda table without per-task values", r.System.Name)
		}
	}
}

// TestTerminalFitsWidth: the terminal table of the whole board keeps to
// 120 columns (it is 180 wide unbounded): names, cut to sysname.Width by
// the one rule, wrap onto more lines, the averages' notes (with the
// whole name) and what "…" means move under the table. Unbounded, the
// table is as before.
func TestTerminalFitsWidth(t *testing.T) {
	tb := build(t, board(t), Options{})
	var wide, narrow strings.Builder
	if err := tb.WriteWith(&wide, Terminal, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tb.WriteWith(&narrow, Terminal, WriteOptions{Width: 120}); err != nil {
		t.Fatal(err)
	}
	if w := maxWidth(wide.String()); w <= 120 {
		t.Fatalf("the unbounded table is %d wide: nothing to fit", w)
	}
	if w := maxWidth(narrow.String()); w > 120 {
		t.Errorf("the table is %d columns wide, want at most 120:\n%s", w, narrow.String())
	}
	out := narrow.String()
	for _, want := range []string{" 1  InsertRank (DeepSeek-…given BM25 ", "\n    scores)", " ext ", "51.1ᵖ*", "…: a name over 40 characters cut in its middle;", "ᵖ InsertRank (DeepSeek-R1 listwise reranker given BM25 scores): 51.1 (printed)", "ᵖ RaDeR-gte-Qwen2-7B: 35.22 (printed 35.19)", "pub = R2MED's released"} {
		if !strings.Contains(out, want) {
			t.Errorf("the 120-column table lacks %q:\n%s", want, out[:min(len(out), 1500)])
		}
	}
}

func maxWidth(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// TestNoBestMarkLegendWithoutMarks: a table whose columns have one value
// each marks nothing best, and its title does not promise marks.
func TestNoBestMarkLegendWithoutMarks(t *testing.T) {
	nan := math.NaN()
	ss := synthetic(map[string][]float64{"only": {.5, nan, nan, nan, nan, nan, nan, nan}})
	var b strings.Builder
	if err := build(t, ss, Options{}).Write(&b, Terminal); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "*") {
		t.Errorf("marks or their legend with nothing to compare:\n%s", b.String())
	}
	ss = synthetic(map[string][]float64{"a": {.5, nan, nan, nan, nan, nan, nan, nan}, "b": {.4, nan, nan, nan, nan, nan, nan, nan}})
	b.Reset()
	if err := build(t, ss, Options{}).Write(&b, Terminal); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "* best in column") || !strings.Contains(b.String(), "50.00*") {
		t.Errorf("two rows, no best marked:\n%s", b.String())
	}
}

// TestLaTeXFitsPage compiles the LaTeX leaderboard in a plain article
// (portrait, a 345 pt line): the top 10 as one float scaled to the line,
// and the whole board as a longtable on landscape pages; neither may
// overflow (no overfull box, no float too large) — the whole board as one
// float was 799 pt too wide and 483 pt too tall.
func TestLaTeXFitsPage(t *testing.T) {
	for _, opt := range []Options{{Top: 10}, {}} {
		tb := build(t, board(t), opt)
		var b strings.Builder
		if err := tb.Write(&b, LaTeX); err != nil {
			t.Fatal(err)
		}
		tex := b.String()
		want := `\resizebox`
		if len(tb.Rows) > LaTeXFloatRows {
			want = `\begin{longtable}`
		}
		if !strings.Contains(tex, want) || !strings.HasPrefix(tex, "% r2med leaderboard: needs \\usepackage{"+strings.Join(LaTeXPackages(len(tb.Rows)), ",")+"}") {
			t.Errorf("%d rows: no %s or package line:\n%s", len(tb.Rows), want, tex[:300])
		}
		latextest.CompilePage(t, LaTeXPackages(len(tb.Rows)), tex)
	}
}
