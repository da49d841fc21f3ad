package sysname_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/r2med/r2med/sysname"
)

func TestName(t *testing.T) {
	for _, c := range []struct {
		st   sysname.Stages
		want string
	}{
		{sysname.Stages{Retrievers: []string{"bm25"}}, "bm25"},
		{sysname.Stages{Retrievers: []string{"bm25", "bge"}}, "rrf(bm25,bge)"},
		{sysname.Stages{Retrievers: []string{"bm25-lucene", "nv"}, Fusion: "CombSUM"}, "combsum(bm25-lucene,nv)"},
		{sysname.Stages{Expansion: sysname.Expansion("hyde", "gpt4"), Retrievers: []string{"bm25"}}, "hyde/gpt4 → bm25"},
		{sysname.Stages{Retrievers: []string{"bm25"}, Reranker: sysname.Reranker("insertrank", "deepseek-r1"), Depth: 20}, "bm25 → insertrank:deepseek-r1@20"},
		{sysname.Stages{Retrievers: []string{"nv"}, Reranker: "rankllama", Depth: 10}, "nv → rankllama@10"},
		{sysname.Stages{Retrievers: []string{"bm25", sysname.RunFile("bm25", "out/x/run.trec")}}, "rrf(bm25,run:bm25)"},
		{sysname.Stages{Retrievers: []string{sysname.RunFile("", "runs/bge.trec.gz")}, Reranker: sysname.Reranker("tei", ""), Depth: 100}, "run:bge → tei@100"},
		{sysname.Stages{Expansion: "lamer/gpt4", Retrievers: []string{"bm25", "bge"}, Reranker: "reasonrank:qwq", Depth: 20}, "lamer/gpt4 → rrf(bm25,bge) → reasonrank:qwq@20"},
	} {
		if got := c.st.Name(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
	// The reranker's kind is in the name: InsertRank and ReasonRank with
	// one model are two systems.
	a := sysname.Stages{Retrievers: []string{"bm25"}, Reranker: sysname.Reranker("insertrank", "r1"), Depth: 20}
	b := a
	b.Reranker = sysname.Reranker("ReasonRank", "r1")
	if a.Name() == b.Name() {
		t.Errorf("InsertRank and ReasonRank with one model share the name %q", a.Name())
	}
}

func TestTag(t *testing.T) {
	for name, want := range map[string]string{
		"bm25":                             "bm25",
		"hyde/gpt4 → bm25":                 "hyde/gpt4→bm25",
		"bm25 → insertrank:deepseek-r1@20": "bm25→insertrank:deepseek-r1@20",
		"my  baseline\tv2":                 "my_baseline_v2",
	} {
		if got := sysname.Tag(name); got != want || strings.ContainsAny(got, " \t") {
			t.Errorf("Tag(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDisambiguate(t *testing.T) {
	names := []string{"bm25", "bm25", "bge", "bm25", "rrf(bm25,bge)"}
	keys := []string{"k1=0.9", "k1=1.2", "x", "k1=0.9", "y"}
	got := sysname.Disambiguate(names, keys)
	if got[0] == got[1] || got[0] != got[3] || got[2] != "bge" || got[4] != "rrf(bm25,bge)" {
		t.Fatalf("Disambiguate = %q", got)
	}
	for _, n := range got[:2] {
		base, suffix := sysname.Base(n)
		if base != "bm25" || len(suffix) != len(" #3f2a") || strings.Contains(n, "map[") {
			t.Errorf("%q: base %q suffix %q", n, base, suffix)
		}
	}
	// Stable: the suffix depends on the key only, not on the order or on
	// the other systems in view.
	again := sysname.Disambiguate([]string{"bm25", "bm25", "bm25"}, []string{"k1=1.2", "k1=2", "k1=0.9"})
	if again[0] != got[1] || again[2] != got[0] {
		t.Errorf("suffixes moved: %q then %q", got, again)
	}
	// A name another system already has is not given to a second one.
	clash := sysname.Disambiguate([]string{"bm25", "bm25", got[0]}, []string{"k1=0.9", "k1=1.2", "z"})
	if clash[0] == clash[2] || clash[1] == clash[2] {
		t.Errorf("Disambiguate gave a taken name: %q", clash)
	}
	if b, s := sysname.Base("rrf(bm25,bge) #notahash"); b != "rrf(bm25,bge) #notahash" || s != "" {
		t.Errorf("Base of a name without a suffix: %q %q", b, s)
	}
}

func ExampleStages_Name() {
	for _, st := range []sysname.Stages{
		{Retrievers: []string{"bm25"}},
		{Retrievers: []string{"bm25", "bge"}, Fusion: "rrf"},
		{Expansion: sysname.Expansion("hyde", "gpt4"), Retrievers: []string{"bm25"}},
		{Retrievers: []string{"bm25"}, Reranker: sysname.Reranker("insertrank", "deepseek-r1"), Depth: 20},
		{Retrievers: []string{"bm25", sysname.RunFile("bm25", "out/bm25/demo/run.trec")}},
	} {
		fmt.Printf("%-34s tag %s\n", st.Name(), sysname.Tag(st.Name()))
	}
	// Output:
	// bm25                               tag bm25
	// rrf(bm25,bge)                      tag rrf(bm25,bge)
	// hyde/gpt4 → bm25                   tag hyde/gpt4→bm25
	// bm25 → insertrank:deepseek-r1@20   tag bm25→insertrank:deepseek-r1@20
	// rrf(bm25,run:bm25)                 tag rrf(bm25,run:bm25)
}
