package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/sysname"
)

// rankingStub is a loopback chat server for the listwise reasoning
// rerankers: every window is answered "[2] > [1]" in ReasonRank's
// <answer> tags, which InsertRank reads too.
func rankingStub(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message":       map[string]any{"role": "assistant", "content": "<answer>[2] > [1]</answer>"},
			"finish_reason": "stop",
		}}, "usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 10}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// legendLabel is a legend key of the report's charts: its printed text,
// then the whole name on hover.
var legendLabel = regexp.MustCompile(`<text x="[^"]*" y="[^"]*">([^<]*)<title>([^<]*)</title></text>`)

// checkLegends checks the legends of a report's charts: no two keys of a
// chart read alike unless they are one system, none is longer than
// sysname.Width.
func checkLegends(t *testing.T, html string) {
	t.Helper()
	for _, svg := range regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(html, -1) {
		seen := map[string]string{}
		for _, m := range legendLabel.FindAllStringSubmatch(svg, -1) {
			if full, dup := seen[m[1]]; dup && full != m[2] {
				t.Errorf("two legend keys read %q: %q and %q", m[1], full, m[2])
			}
			if utf8.RuneCountInString(m[1]) > sysname.Width {
				t.Errorf("legend key %q is longer than %d", m[1], sysname.Width)
			}
			seen[m[1]] = m[2]
		}
	}
}

// TestSystemNamesReadableAndStable runs what issue 21 found unreadable —
// a BM25 run fused with a run file, a run file on its own, InsertRank and
// ReasonRank asking one model, two BM25 runs with other settings — and
// requires every view of them (run tags, the leaderboard in each format,
// the report's table and chart legends, the viewer's pages) to name them
// by sysname's rule: short, distinct, no dump of Go values, the full
// settings on hover; and the same names after the runs are redone.
func TestSystemNamesReadableAndStable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "results")
	t.Setenv("R2MED_RESULTS", root)
	llm := rankingStub(t)
	out := func(name string) string { return filepath.Join(root, name, "demo") }
	rerank := func(kind string) []string {
		return []string{"--rerank", kind, "--rerank-model", "r1", "--rerank-url", llm, "--rerank-depth", "10", "--no-cache"}
	}
	reranked := filepath.Join(dir, "files", "bm25-insertrank.trec")
	runs := [][]string{
		{"--out", out("bm25")},
		{"--k1", "1.2", "--out", out("bm25-k1")},
		{"--retriever", "bm25,run:" + filepath.Join(out("bm25"), pipeline.RunFile), "--out", out("fused")},
		append([]string{"--out", out("insertrank")}, rerank("insertrank")...),
		append([]string{"--out", out("reasonrank")}, rerank("reasonrank")...),
		{"--retriever", "run:" + reranked, "--out", out("runfile")},
	}
	all := func(extra ...string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(reranked), 0o755)
		mustRun(t, append([]string{"rerank", "--task", "demo", "--run", filepath.Join(out("bm25"), pipeline.RunFile), "--out", reranked, "--quiet"}, rerank("insertrank")...)...)
		for _, r := range runs {
			mustRun(t, append(append([]string{"run", "--task", "demo", "--quiet"}, r...), extra...)...)
		}
	}
	mustRun(t, "run", "--task", "demo", "--quiet", "--out", out("bm25"))
	all()

	// Run tags follow from the names, without white space; a file made by
	// `r2med rerank` is tagged with its system's name, which names it when
	// read back.
	for name, want := range map[string]string{
		filepath.Join(out("bm25"), pipeline.RunFile):       "bm25",
		filepath.Join(out("fused"), pipeline.RunFile):      "rrf(bm25,run:bm25)",
		filepath.Join(out("insertrank"), pipeline.RunFile): "bm25→insertrank:r1@10",
		filepath.Join(out("reasonrank"), pipeline.RunFile): "bm25→reasonrank:r1@10",
		reranked: "bm25→insertrank:r1@10",
		filepath.Join(out("runfile"), pipeline.RunFile): "run:bm25→insertrank:r1@10",
	} {
		first, _, _ := strings.Cut(readFileString(t, name), "\n")
		if f := strings.Fields(first); len(f) != 6 || f[5] != want {
			t.Errorf("%s: tag of %q, want %s", name, first, want)
		}
	}

	names := boardNames(t)
	bm25s := 0
	for _, n := range names {
		if strings.HasPrefix(n, "bm25 #") {
			bm25s++
		}
	}
	for _, want := range []string{"rrf(bm25,run:bm25)", "bm25 → insertrank:r1@10", "bm25 → reasonrank:r1@10", "run:bm25→insertrank:r1@10"} {
		if !slices.Contains(names, want) {
			t.Errorf("no system %q on the board: %q", want, names)
		}
	}
	if len(names) != 6 || bm25s != 2 {
		t.Errorf("board names %q: want 6, two BM25 runs told apart by a short hash", names)
	}

	// Every format: no Go value dumps, each of our systems on one row (the
	// terminal's wide enough that no name wraps onto a second line).
	t.Setenv("COLUMNS", "200")
	for _, f := range []string{"table", "markdown", "csv", "latex", "json"} {
		text := mustRun(t, "leaderboard", "--format", f, "--no-published", "--no-external")
		if strings.Contains(text, "map[") || strings.Contains(text, "[retrievers=") {
			t.Errorf("%s leaderboard dumps settings:\n%s", f, text)
		}
		for _, n := range names {
			shown := n
			if f == "latex" {
				shown = leaderboard.TeX(n)
			}
			if c := strings.Count(text, shown+" "); f != "json" && f != "csv" && c != 1 {
				t.Errorf("%s leaderboard: %q on %d rows", f, n, c)
			}
		}
	}
	csvText := mustRun(t, "leaderboard", "--format", "csv", "--no-published", "--no-external")
	if !strings.Contains(csvText, "retriever=bm25 analyzer=lucene-english b=0.4 bm25_scheme=r2med k1=1.2") ||
		!strings.Contains(csvText, "rerank.kind=reasonrank rerank.model=r1 rerank.depth=10") {
		t.Errorf("csv has no settings column:\n%s", csvText)
	}

	// The report: the table's hover gives the settings, no two legend keys
	// of a chart read the same.
	page := filepath.Join(dir, "report.html")
	mustRun(t, "report", "--published", "--external", "--out", page)
	html := readFileString(t, page)
	if strings.Contains(html, "map[") {
		t.Error("the report dumps settings")
	}
	if !strings.Contains(html, `title="bm25 → reasonrank:r1@10 — ours: retriever=bm25 analyzer=lucene-english`) {
		t.Error("the report's table gives no settings on hover")
	}
	checkLegends(t, html)

	// The viewer: its leaderboard, the task page and a query page.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _ := startServe(t, ctx, root, "--published", "--external")
	client := &http.Client{Timeout: 10 * time.Second}
	for _, p := range []string{"", "task/demo", "query/demo/q1"} {
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "map[") || !strings.Contains(string(body), "bm25 → insertrank:r1@10") {
			t.Errorf("/%s: %d, names:\n%s", p, resp.StatusCode, body)
		}
		if p != "" && !strings.Contains(string(body), "k1=1.2") {
			t.Errorf("/%s: no settings on hover", p)
		}
	}

	// Redone, the systems keep their names.
	all("--overwrite")
	if again := boardNames(t); !slices.Equal(again, names) {
		t.Errorf("names changed on a rerun: %q, then %q", names, again)
	}
}

// boardNames are our systems' names on the leaderboard.
func boardNames(t *testing.T) []string {
	t.Helper()
	var board struct{ Rows []struct{ Name string } }
	if err := json.Unmarshal([]byte(mustRun(t, "leaderboard", "--format", "json", "--no-published", "--no-external")), &board); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range board.Rows {
		if slices.Contains(names, r.Name) {
			t.Errorf("two systems named %q", r.Name)
		}
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return names
}
