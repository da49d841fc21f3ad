package report

import (
	"bytes"
	"context"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/sysname"
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
// (the whole LiberationSans was some 220 KB a chart) and writes "→" and
// "…" as themselves (Windows-1252 has no arrow); its legend shows the
// names as the report does, cut, and its metadata gives them whole; the
// same report gives the same bytes.
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
	if shown := sysname.Short(longNames[2], sysname.Width); !strings.Contains(string(out), shown) || strings.Contains(string(out), longNames[2]) {
		t.Errorf("bars.pdf text, want %q:\n%s", shown, out)
	}
	if _, err := exec.LookPath("pdfinfo"); err != nil {
		return
	}
	info, err := exec.Command("pdfinfo", filepath.Join(a, "bars.pdf")).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range longNames {
		if !strings.Contains(string(info), n) {
			t.Errorf("bars.pdf's metadata lacks %q:\n%s", n, info)
		}
	}
}

// TestLegendLayout: the keys of a chart file's legend flow in rows, each
// as wide as its name, and none overlaps another or leaves the chart; a
// name wider than the chart is cut further by the one rule
// (sysname.Short: its end kept).
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
			if k.text != entries[i].name && (!strings.Contains(k.text, "…") || k.text != sysname.Short(entries[i].name, utf8.RuneCountInString(k.text))) {
				t.Errorf("width %v: %q cut otherwise than by sysname.Short", w, k.text)
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

// TestChartFilesGiveNamesWhole: a chart file's legend shows cut names, as
// the report does; its metadata gives them whole (an SVG's <desc>, a
// PNG's iTXt Description, a PDF's Subject: TestPDFChartsSubsetFonts), and
// the PNG still decodes.
func TestChartFilesGiveNamesWhole(t *testing.T) {
	_, r := build(t, longFixture(t), false, Options{})
	for _, f := range []ChartFormat{SVG, PNG} {
		dir := t.TempDir()
		if _, err := r.WriteCharts(dir, f); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "bars."+string(f)))
		if err != nil {
			t.Fatal(err)
		}
		var meta string
		switch f {
		case SVG:
			meta = html.UnescapeString(regexp.MustCompile(`(?s)<desc>(.*?)</desc>`).FindStringSubmatch(string(data) + "<desc></desc>")[1])
		case PNG:
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				t.Fatalf("bars.png with its text chunk: %v", err)
			}
			if i := bytes.Index(data, []byte("iTXtDescription\x00")); i > 0 {
				meta = string(data[i+len("iTXtDescription\x00")+4:])
			}
		}
		for _, n := range longNames {
			if !strings.Contains(meta, n) || !strings.Contains(meta, sysname.Short(n, sysname.Width)+" is "+n) {
				t.Errorf("bars.%s: metadata lacks %q:\n%.400s", f, n, meta)
			}
		}
	}
}
