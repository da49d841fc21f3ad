package sysname_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/sysname"
)

// TestShort: a name over the width is cut in its middle to the width,
// its start and end kept, the end starting at a word where one is near;
// a hash suffix and a reranker's depth stay whatever their length; a
// name that fits is left as it is.
func TestShort(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"bm25", "bm25"},
		{"hyde/gpt4 → rrf(bm25,bge) → tei@10", "hyde/gpt4 → rrf(bm25,bge) → tei@10"},
		{"hyde/gpt4 → rrf(bm25,bge) → insertrank:deepseek-r1@20 #3f2a", "hyde/gpt4 → rrf(bm2…deepseek-r1@20 #3f2a"},
		{"rrf(bm25,run:bm25→insertrank:deepseek-r1-distill-qwen-32b) → reasonrank:deepseek-r1@10", "rrf(bm25,run:bm25→insert…:deepseek-r1@10"},
		{"InsertRank (DeepSeek-R1 listwise, reranker given BM25 scores)", "InsertRank (DeepSeek-…given BM25 scores)"},
		// A hash grown past four digits and a depth stay whole.
		{"rrf(bm25,bge,nv,e5-mistral-7b-instruct) → rank1:rank1-32b@1000 #3f2a9c01e5", "rrf(bm25,bge,nv,e5-mis…@1000 #3f2a9c01e5"},
	} {
		got := sysname.Short(c.name, sysname.Width)
		if got != c.want {
			t.Errorf("Short(%q) = %q, want %q", c.name, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > sysname.Width {
			t.Errorf("Short(%q) = %q: %d characters", c.name, got, n)
		}
	}
	// Narrower than the end it would keep: cut all the same.
	if got := sysname.Short("bm25 → insertrank:deepseek-r1@20 #3f2a", 10); utf8.RuneCountInString(got) != 10 || !strings.HasPrefix(got, "b…") {
		t.Errorf("Short to 10 = %q", got)
	}
}

// TestShortAll: a view's names are never cut to one text unless they
// are one name: pairs that Short cuts alike are cut elsewhere, in the
// width where some cut tells them apart, wider only where none does.
func TestShortAll(t *testing.T) {
	long := "rrf(bm25,run:bm25→insertrank:deepseek-r1-distill-qwen-32b) → reasonrank:deepseek-r1"
	for _, names := range [][]string{
		{"hyde/gpt4 → rrf(bm25,bge) → insertrank:deepseek-r1@20", "hyde/gpt4 → rrf(bm25,bge) → reasonrank:deepseek-r1@20", "bm25"},
		{long + "@10", long + "@20", long + " #3f2a", long + " #9c01"},
		{"bm25 → insertrank:deepseek-r1-distill-qwen-32b@20", "bm25 → reasonrank:deepseek-r1-distill-qwen-32b@20"},
		{"rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@20 [window=20 step=10]",
			"rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@20 [window=40 step=10]"},
		// Cut alike, and the cut of one is another's whole name.
		{"hyde/gpt4 → rrf(bm2…deepseek-r1@20 #3f2a", "hyde/gpt4 → rrf(bm25,bge) → insertrank:deepseek-r1@20 #3f2a"},
	} {
		got := sysname.ShortAll(names, sysname.Width)
		for i := range got {
			if utf8.RuneCountInString(got[i]) > sysname.Width {
				t.Errorf("%q cut to %q: wider than %d", names[i], got[i], sysname.Width)
			}
			for j := range i {
				if got[i] == got[j] {
					t.Errorf("%q and %q both cut to %q", names[i], names[j], got[i])
				}
			}
		}
	}
	// Names that differ in a word in their middle show that word.
	got := sysname.ShortAll([]string{
		"rrf(bm25,run:bm25-robertson) → insertrank:deepseek-r1-distill-qwen-32b@20",
		"rrf(bm25,run:bm25-robertson) → reasonrank:deepseek-r1-distill-qwen-32b@20",
	}, sysname.Width)
	if got[0] != "rrf(bm25,run:b…insertrank…ll-qwen-32b@20" || got[1] != "rrf(bm25,run:b…reasonrank…ll-qwen-32b@20" {
		t.Errorf("ShortAll = %q", got)
	}
	// Equal names stay equal; names that differ only in a middle no cut
	// in the width shows are given more.
	a := strings.Repeat("x", 30) + "A" + strings.Repeat("y", 30)
	b := strings.Repeat("x", 30) + "B" + strings.Repeat("y", 30)
	got = sysname.ShortAll([]string{a, b, a}, 20)
	if got[0] == got[1] || got[0] != got[2] || !strings.Contains(got[0], "A") {
		t.Errorf("ShortAll = %q", got)
	}
}

// depth is a reranked name's depth, at the end of its base.
var depth = regexp.MustCompile(`@\d+$`)

// TestShortAllRandom: names made of the stages r2med's systems have,
// many alike, are cut to distinct texts no longer than the width (or
// given more where they must), each keeping its hash and depth.
func TestShortAllRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	for round := range 200 {
		seen := map[string]bool{}
		var names []string
		for range 12 {
			st := sysname.Stages{Expansion: pick("", "hyde/gpt4", "query2doc/qwen2.5-72b-instruct", "lamer/o3-mini")}
			for range 1 + rng.IntN(3) {
				st.Retrievers = append(st.Retrievers, pick("bm25", "bge", "nv", "e5-mistral-7b-instruct", "run:bm25→insertrank:deepseek-r1@20"))
			}
			if rng.IntN(2) == 0 {
				st.Reranker, st.Depth = sysname.Reranker(pick("insertrank", "reasonrank", "rank1"), pick("deepseek-r1-distill-qwen-32b", "qwq-32b", "r1")), []int{10, 20, 100}[rng.IntN(3)]
			}
			n := st.Name()
			if rng.IntN(3) == 0 {
				n += " #" + fmt.Sprintf("%04x", rng.IntN(1<<16))
			}
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		got := sysname.ShortAll(names, sysname.Width)
		byCut := map[string]string{}
		for i, c := range got {
			if o, ok := byCut[c]; ok {
				t.Fatalf("round %d: %q and %q both cut to %q", round, o, names[i], c)
			}
			byCut[c] = names[i]
			base, suffix := sysname.Base(names[i])
			if !strings.HasSuffix(c, suffix) {
				t.Errorf("%q cut to %q: the hash is lost", names[i], c)
			}
			if d := depth.FindString(base); !strings.HasSuffix(strings.TrimSuffix(c, suffix), d) {
				t.Errorf("%q cut to %q: the depth is lost", names[i], c)
			}
			if utf8.RuneCountInString(c) > sysname.Width && c != names[i] {
				if a, b := sysname.Short(names[i], sysname.Width), c; a == b {
					t.Errorf("%q cut to %q: wider than the width", names[i], c)
				}
			}
		}
	}
}
