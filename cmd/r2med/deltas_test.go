package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/trec"
)

// writeNearRuns writes two runs of NFCorpus, run:base and run:tweak, that
// differ by a swap at ranks 9 and 10 of one query (shallow: nDCG@10's
// mean drops by about 8e-06, both print 31.97) and at ranks 99 and 100
// of another (deep: that query's MAP@100 drops by about 1e-05), and
// returns their results directory and the two queries.
func writeNearRuns(t *testing.T) (root, shallow, deep string) {
	t.Helper()
	needShared(t)
	run, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference", "nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := dataset.ReadQrelsFile(filepath.Join(shared, "nfcorpus", "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	// swap finds a query (not skip) whose documents at ranks i+1 and i+2
	// are relevant and not.
	swap := func(i int, skip string) string {
		for _, q := range slices.Sorted(maps.Keys(run)) {
			if h := run[q]; q != skip && len(h) > i+1 && qrels[q][h[i].DocID] > 0 && qrels[q][h[i+1].DocID] == 0 {
				return q
			}
		}
		t.Fatalf("no query with a relevant document at rank %d followed by another", i+1)
		return ""
	}
	shallow = swap(8, "")
	deep = swap(98, shallow)
	dir := t.TempDir()
	root = filepath.Join(dir, "out")
	for _, name := range []string{"base", "tweak"} {
		var b strings.Builder
		for _, q := range slices.Sorted(maps.Keys(run)) {
			ids := make([]string, len(run[q]))
			for i, h := range run[q] {
				ids[i] = h.DocID
			}
			if name == "tweak" && (q == shallow || q == deep) {
				i := map[bool]int{true: 8, false: 98}[q == shallow]
				ids[i], ids[i+1] = ids[i+1], ids[i]
			}
			for i, id := range ids {
				fmt.Fprintf(&b, "%s Q0 %s %d %d %s\n", q, id, i+1, 1000-i, name)
			}
		}
		file := filepath.Join(dir, name+".trec")
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		mustRun(t, "run", "--data", filepath.Join(shared, "nfcorpus"), "--split", "test", "--quiet", "--retriever", "run:"+file, "--out", filepath.Join(root, name))
	}
	return root, shallow, deep
}

// TestDeltasNeverNegativeZero: two runs of NFCorpus that differ by a
// swap at ranks 9 and 10 of one query (nDCG@10's mean drops by about
// 8e-06) and at ranks 99 and 100 of another (that query's MAP@100 drops
// by about 1e-05). The report's test of the two printed that mean
// difference "-0.0000" (its interval "[-0.0000, +0.0000]") and the
// viewer's per-query changes "-0.000": a sign on a zero. A difference
// that rounds to zero is written with two significant digits, an exact
// zero unsigned (numtext.Signed).
func TestDeltasNeverNegativeZero(t *testing.T) {
	root, shallow, deep := writeNearRuns(t)
	dir := t.TempDir()
	signedZero := regexp.MustCompile(`[-+]0\.0+\b`)
	small := regexp.MustCompile(`-\d\.\de-0[5-6]`)
	page := filepath.Join(dir, "report.html")
	mustRun(t, "report", "--results", root, "--systems", "run:base,run:tweak", "--out", page)
	html := readFileString(t, page)
	tests := html[strings.Index(html, `id="pair-tests"`):]
	tests = tests[:strings.Index(tests, "</table>")]
	if z := signedZero.FindAllString(tests, -1); len(z) > 0 || !small.MatchString(tests) {
		t.Errorf("the report's tests print signed zeros %q, or not the difference of about -8e-06:\n%s", z, tests)
	}
	if m := regexp.MustCompile(`mean run:tweak − run:base (\S+),`).FindStringSubmatch(html); m == nil || !small.MatchString(m[1]) {
		t.Errorf("the scatter's description gives the mean difference as %q", m)
	}

	body := viewerPage(t, root, "diff/nfcorpus?a="+url.QueryEscape("ours/run:base")+"&b="+url.QueryEscape("ours/run:tweak")+"&metric=map@100")
	cells := regexp.MustCompile(`delta-neg" data-v="[^"]*">([^<]*)<`).FindAllStringSubmatch(body, -1)
	if len(cells) != 2 {
		t.Fatalf("%d queries lost MAP@100 on the diff page, want 2 (%s and %s)", len(cells), shallow, deep)
	}
	for _, c := range cells {
		if signedZero.MatchString(c[1]) {
			t.Errorf("the viewer prints a per-query change as %q", c[1])
		}
	}
	if !small.MatchString(cells[0][1]) { // sorted by change, the smaller loss first
		t.Errorf("the smaller change is %q, want it with two significant digits", cells[0][1])
	}
	// The query's heading gives the change its values (0.0651 → 0.0651) hide.
	body = viewerPage(t, root, "diff/nfcorpus?a="+url.QueryEscape("ours/run:base")+"&b="+url.QueryEscape("ours/run:tweak")+"&metric=map@100&q="+deep)
	if h := regexp.MustCompile(`<h2>Query [^<]*</h2>`).FindString(body); !regexp.MustCompile(`(\d\.\d{4}) → (\d\.\d{4}) \(Δ -\d\.\de-0[5-6]\)`).MatchString(h) {
		t.Errorf("the diff page's heading for %s is %q, want the change beside its values", deep, h)
	}
}

// TestTaskBoardTiesAsPrinted: the viewer's task page ranks "ties share a
// rank"; two runs that print 31.97 on NFCorpus (unrounded 1e-05 apart)
// were ranked 1 and 2. Values that print alike now share a rank.
func TestTaskBoardTiesAsPrinted(t *testing.T) {
	root, _, _ := writeNearRuns(t)
	body := viewerPage(t, root, "task/nfcorpus")
	ranks := regexp.MustCompile(`<tr class="ours"><td class="num" data-v="\d+">(\d+)</td><td class="sys sysname" title="run:(base|tweak)`).FindAllStringSubmatch(body, -1)
	if len(ranks) != 2 || ranks[0][1] != "1" || ranks[1][1] != "1" || strings.Count(body, ">31.97<") != 2 {
		t.Errorf("two runs that print 31.97 ranked %q, want both 1:\n%s", ranks, body)
	}
}

// viewerPage starts r2med serve on root and returns the page at path
// (below its base URL), failing the test unless it is 200 OK.
func viewerPage(t *testing.T, root, path string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _ := startServe(t, ctx, root)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /%s: %d\n%s", path, resp.StatusCode, body)
	}
	return string(body)
}

// TestReportPValuesAsCompare: the report's paired tests printed p-values
// with four decimals, so a t-test p of 6e-06 read "0.0000", a p of zero,
// and a randomization p of 1/10001 "0.0001" where compare prints the same
// test's "1.0e-04". The report writes them as compare does (numtext.P).
func TestReportPValuesAsCompare(t *testing.T) {
	needShared(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "out")
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(readFileString(t, filepath.Join(shared, "eval-reference", "nfcorpus.partial.run"))), "\n") {
		if !strings.HasPrefix(l, "UNJUDGED") {
			kept = append(kept, l)
		}
	}
	partial := filepath.Join(dir, "partial.run")
	if err := os.WriteFile(partial, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(shared, "nfcorpus")
	mustRun(t, "run", "--data", data, "--split", "test", "--quiet", "--retriever", "run:"+filepath.Join(shared, "eval-reference", "nfcorpus.bm25.run"), "--out", filepath.Join(root, "full"))
	mustRun(t, "run", "--data", data, "--split", "test", "--quiet", "--retriever", "run:"+partial, "--out", filepath.Join(root, "partial"))
	text := mustRun(t, "compare", filepath.Join(root, "full"), filepath.Join(root, "partial"))
	line := regexp.MustCompile(`(?m)^\s+run:\S+\s+0\.\d{4}\s+0\.\d{4}.*$`).FindString(text)
	ps := regexp.MustCompile(`\d\.\d{4} \(exact\)|\d\.\d{4}|\d\.\de-\d\d`).FindAllString(line, -1)
	if len(ps) < 8 {
		t.Fatalf("no compare row to read the p-values from:\n%s", text)
	}
	randP, tP := ps[5], ps[6] // baseline, system, diff, CI low, CI high, rand p, t p
	page := filepath.Join(dir, "report.html")
	mustRun(t, "report", "--results", root, "--out", page)
	html := readFileString(t, page)
	tests := html[strings.Index(html, `id="pair-tests"`):]
	tests = tests[:strings.Index(tests, "</table>")]
	if !strings.Contains(tests, ">"+randP+"</td><td class=\"num\">"+tP+"</td>") {
		t.Errorf("compare's rand p %s and t p %s are not the report's:\n%s", randP, tP, tests)
	}
	if strings.Contains(tests, ">0.0000<") {
		t.Errorf("the report prints a p-value of 0.0000:\n%s", tests)
	}
}

// TestPerQueryDecimalsAsCompare: a per-query value reads alike wherever it
// is printed: compare's per-query changes give four decimals, as do now
// the viewer's task page, per-query page and diff page and the report's
// scatter (they gave three).
func TestPerQueryDecimalsAsCompare(t *testing.T) {
	root, shallow, _ := writeNearRuns(t)
	three := regexp.MustCompile(`^\d\.\d{3}$`)
	four := `\d\.\d{4}`

	out := mustRun(t, "compare", filepath.Join(root, "base"), filepath.Join(root, "tweak"), "--metric", "ndcg@10")
	if !regexp.MustCompile(shallow + ` ` + four + `→` + four).MatchString(out) {
		t.Fatalf("compare does not print %s's change with four decimals:\n%s", shallow, out)
	}

	page := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "report", "--results", root, "--systems", "run:base,run:tweak", "--out", page)
	if html := readFileString(t, page); !regexp.MustCompile(`· ` + shallow + `: ` + four + ` vs ` + four).MatchString(html) {
		t.Errorf("the report's scatter does not label %s's point with four decimals", shallow)
	}

	pair := "a=" + url.QueryEscape("ours/run:base") + "&b=" + url.QueryEscape("ours/run:tweak")
	for _, c := range []struct{ path, cell string }{
		{"task/nfcorpus", `class="qtext"[^>]*>[^<]*</td><td class="num" data-v="[^"]*">([^<]*)</td>`},
		{"diff/nfcorpus?" + pair, `class="qtext"[^>]*>[^<]*</td><td class="num">([^<]*)</td>`},
		{"diff/nfcorpus?" + pair, `<td class="num " data-v="0">([^<]*)</td>`}, // no change: 0.0000
		{"diff/nfcorpus?" + pair + "&q=" + shallow, `<h2>Query [^:]*: (\S+) →`},
		{"query/nfcorpus/" + shallow, `</b>: nDCG@10 ([^ ]*) ·`},
	} {
		body := viewerPage(t, root, c.path)
		cells := regexp.MustCompile(c.cell).FindAllStringSubmatch(body, -1)
		if len(cells) == 0 {
			t.Errorf("/%s: no per-query value found by %s", c.path, c.cell)
		}
		for _, m := range cells {
			if three.MatchString(m[1]) || !regexp.MustCompile(`^`+four+`$`).MatchString(m[1]) {
				t.Errorf("/%s prints a per-query value as %q, want four decimals as compare prints it", c.path, m[1])
				break
			}
		}
	}
}
