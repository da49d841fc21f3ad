package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/sysname"
)

// TestLegendNamesDistinct: no two keys of a legend read the same. A long
// name is cut in its middle by sysname's one rule, so the end that tells
// similar systems apart (a depth, a hash suffix) stays (TestShort has the
// rule's cases); one of ours named as a published system is told apart by
// its origin, its name cut to leave room for it.
func TestLegendNamesDistinct(t *testing.T) {
	long := "rrf(bm25,run:bm25→insertrank:deepseek-r1-distill-qwen-32b) → reasonrank:deepseek-r1"
	for _, pair := range [][2]string{
		{long + "@10", long + "@20"},
		{long + " #3f2a", long + " #9c01"},
		{"bm25 → insertrank:deepseek-r1-distill-qwen-32b@20", "bm25 → reasonrank:deepseek-r1-distill-qwen-32b@20"},
	} {
		a, b := sysname.Short(pair[0], MaxLabel), sysname.Short(pair[1], MaxLabel)
		if a == b || len([]rune(a)) > MaxLabel || len([]rune(b)) > MaxLabel {
			t.Errorf("%q and %q are cut to %q and %q", pair[0], pair[1], a, b)
		}
	}
	if s := sysname.Short(long+" #3f2a", MaxLabel); !strings.HasSuffix(s, " #3f2a") {
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

// TestBrowserLongNames opens a report of runs with long fused and
// reranked names (two that a middle cut would show alike) beside R2MED's
// published systems at 1400×900 and at 390×844: the table and every
// chart legend show each name cut by the one rule (at most
// sysname.Width characters, no two alike, a system read the same in the
// table and the legends) and whole on hover; nothing sticks out of its
// box.
func TestBrowserLongNames(t *testing.T) {
	reporttest.Chromium(t)
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	names := append(slices.Clone(longNames), "rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@40 [window=20 step=10]")
	root := t.TempDir()
	for i, name := range names {
		for _, tn := range []string{"Biology", "demo"} {
			r := reporttest.Run{Dir: filepath.Join(root, strconv.Itoa(i), tn), Task: tn, System: "sys" + strconv.Itoa(i),
				Config: map[string]any{"retriever": "sys" + strconv.Itoa(i), "name": name}, Ranked: reporttest.Shifted(task, func(string) int { return i })}
			if err := reporttest.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, r := build(t, root, true, Options{})
	path := filepath.Join(t.TempDir(), "report.html")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, s := range sysname.ShortAll(names, sysname.Width) {
		want[names[i]] = s
	}
	for _, size := range [][2]int{{1400, 900}, {390, 844}} {
		p := reporttest.Open(t, "file://"+path, size[0], size[1], false)
		p.CheckLayout(fmt.Sprintf("report at %d×%d", size[0], size[1]))
		var rows [][2]string
		p.Eval(`Array.from(document.querySelectorAll("#leaderboard tr.ours td.sys")).map(td => [td.querySelector(".name").innerText, td.title])`, &rows)
		var keys [][2]string
		p.Eval(`Array.from(document.querySelectorAll("svg .legend text")).map(e => [e.firstChild.textContent, e.querySelector("title").textContent])`, &keys)
		if len(rows) != len(names) || len(keys) < 2*len(names) {
			t.Fatalf("%d rows of ours, %d legend keys", len(rows), len(keys))
		}
		for _, k := range keys {
			if _, ours := want[k[1]]; !ours {
				continue // a published system's key
			}
			if want[k[1]] != k[0] {
				t.Errorf("%d px: legend key %q (hover %q), want %q", size[0], k[0], k[1], want[k[1]])
			}
		}
		// Cut once, by the rule: no name is clipped again by the page.
		var clipped []string
		p.Eval(`Array.from(document.querySelectorAll("#leaderboard td.sys, #leaderboard td.sys .name")).filter(e => {
		  const s = getComputedStyle(e);
		  return s.textOverflow === "ellipsis" || e.scrollWidth > e.clientWidth + 1 && s.overflowX !== "visible";
		}).map(e => e.innerText)`, &clipped)
		if len(clipped) > 0 {
			t.Errorf("%d px: names clipped by the page: %q", size[0], clipped)
		}
		seen := map[string]bool{}
		for _, row := range rows {
			full, _, _ := strings.Cut(row[1], " — ")
			if want[full] != row[0] || seen[row[0]] || utf8.RuneCountInString(row[0]) > sysname.Width {
				t.Errorf("%d px: %q shown for %q (hover %q)", size[0], row[0], full, row[1])
			}
			seen[row[0]] = true
		}
	}
}
