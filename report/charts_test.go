package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report/reporttest"
)

// longNames are systems of ours with the names fused and reranked runs
// have.
var longNames = []string{
	"rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@20 [window=20 step=10]",
	"rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@20 [window=40 step=20]",
	"hyde/gpt4 → nv-embed-v2 → rankllama-7b@top10",
}

// longFixture writes three runs of ours with long names on Biology and
// demo.
func longFixture(t *testing.T) string {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for i, name := range longNames {
		for _, tn := range []string{"Biology", "demo"} {
			shift := func(string) int { return i }
			r := reporttest.Run{Dir: filepath.Join(root, strconv.Itoa(i), tn), Task: tn, System: "sys" + strconv.Itoa(i),
				Config: map[string]any{"retriever": "sys" + strconv.Itoa(i), "name": name}, Ranked: reporttest.Shifted(task, shift)}
			if err := reporttest.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestPDFChartsSubsetFonts: a PDF chart embeds only the glyphs it uses
// (the whole LiberationSans was some 220 KB a chart) and writes "→" as
// "→" (Windows-1252 has no arrow); the same report gives the same bytes.
func TestPDFChartsSubsetFonts(t *testing.T) {
	root := longFixture(t)
	_, r := build(t, root, false, Options{})
	a, b := t.TempDir(), t.TempDir()
	files, err := r.WriteCharts(a, PDF)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteCharts(b, PDF); err != nil {
		t.Fatal(err)
	}
	length1 := regexp.MustCompile(`/Length1 (\d+)`)
	for _, f := range files {
		x, _ := os.ReadFile(f)
		y, _ := os.ReadFile(filepath.Join(b, filepath.Base(f)))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes", filepath.Base(f))
		}
		m := length1.FindSubmatch(x)
		if m == nil || !bytes.Contains(x, []byte("/FontFile2")) {
			t.Errorf("%s: no embedded TrueType font", filepath.Base(f))
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n > 60_000 || len(x) > 80_000 {
			t.Errorf("%s: %d bytes with a %d-byte font: not a subset", filepath.Base(f), len(x), n)
		}
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Log("pdftotext not found: the PDF's text is not checked")
		return
	}
	out, err := exec.Command("pdftotext", filepath.Join(a, "bars.pdf"), "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "hyde/gpt4 → nv-embed-v2 → rankllama-7b@top10") {
		t.Errorf("bars.pdf text:\n%s", out)
	}
}

// TestLegendLayout: the keys of a chart file's legend flow in rows, each
// as wide as its name, and none overlaps another or leaves the chart; a
// name wider than the chart is cut with "…".
func TestLegendLayout(t *testing.T) {
	var sty text.Style
	sans(&sty, 10)
	sty.Handler = plot.DefaultTextHandler
	names := append([]string{"bm25", "bm25-robertson", strings.Repeat("very long system name ", 12)}, longNames...)
	var entries []legendEntry
	for _, n := range names {
		entries = append(entries, legendEntry{name: n})
	}
	for _, w := range []vg.Length{3.4 * vg.Inch, 8 * vg.Inch} {
		keys := layoutLegend(entries, w, sty)
		for i, k := range keys {
			end := k.x + vg.Points(26) + sty.Width(k.text)
			if k.x < 0 || end > w {
				t.Errorf("width %v: key %q from %v to %v leaves the chart", w, k.text, k.x, end)
			}
			if k.text != entries[i].name && !strings.HasSuffix(k.text, "…") {
				t.Errorf("width %v: %q cut without …", w, k.text)
			}
			for _, o := range keys[:i] {
				if o.row == k.row && o.x+vg.Points(26)+sty.Width(o.text) > k.x {
					t.Errorf("width %v: keys %q and %q overlap", w, o.text, k.text)
				}
			}
		}
	}
}

// TestDefaultChartedReferences: with R2MED's and the later papers'
// systems on the board, the charts show our best runs beside R2MED's
// three best published systems (what report --help promises), not the
// later papers' ReasonEmbed rows; with only the papers', their three
// best.
func TestDefaultChartedReferences(t *testing.T) {
	root, _ := fixture(t)
	for _, c := range []struct {
		src  leaderboard.Sources
		want string
	}{
		{leaderboard.Sources{Published: true, External: true}, "ours/buried,ours/perfect,gar/query2doc/gpt4/nv,gar/hyde/huatuo-o1-70b/nv,gar/hyde/gpt4/nv"},
		{leaderboard.Sources{External: true}, "ours/buried,ours/perfect,external/ReasonEmbed-Qwen3-8B,external/ReasonEmbed-Llama-3.1-8B,external/ReasonEmbed-Basic-Qwen3-8B"},
	} {
		d, err := Load(root, c.src, reporttest.Loader)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Build(context.Background(), d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range r.Charted {
			ids = append(ids, s.ID)
		}
		if got := strings.Join(ids, ","); got != c.want {
			t.Errorf("%+v: charted %s, want %s", c.src, got, c.want)
		}
	}
}
