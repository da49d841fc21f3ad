package bm25

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// tiny is a pre-analyzed corpus whose expected scores were computed outside
// Go, in Python, with the reference formulas and struct-packed float32
// rounding at the points where gensim, Lucene and bm25s round.
var tiny = [][]string{{"a", "b", "a"}, {"b", "c"}, {}, {"c", "c", "c", "d"}}

func build(t testing.TB, docs [][]string, p Params, ids []string) *Index {
	t.Helper()
	ix, err := Build(len(docs), func(i int, dst []string) []string { return append(dst, docs[i]...) }, p, BuildOptions{IDs: ids, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestR2MEDScoresMatchGensimFormula(t *testing.T) {
	ix := build(t, tiny, DefaultParams(R2MED), nil)
	// "zzz" is unknown: gensim drops it before the transform, so |q| = 3.
	got := ix.NewSearcher().Search([]string{"c", "b", "zzz", "c"}, 10)
	want := []Hit{{1, 0.2989402413368225}, {3, 0.2283594310283661}, {0, 0.11774655431509018}, {2, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestLuceneScoresMatchBM25Similarity(t *testing.T) {
	ix := build(t, tiny, DefaultParams(Lucene), nil)
	got := ix.NewSearcher().Search([]string{"c", "b", "c"}, 10)
	// The empty document neither matches nor counts in docCount/avgdl.
	want := []Hit{{1, 0.7921409606933594}, {3, 0.7014979124069214}, {0, 0.24737033247947693}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestRobertsonScoresMatchBM25S(t *testing.T) {
	ix := build(t, tiny, DefaultParams(Robertson), nil)
	// "a" occurs twice in the query and is added twice, as bm25s does.
	got := ix.NewSearcher().Search([]string{"a", "d", "a"}, 3)
	want := []Hit{{0, 0.8746300339698792}, {3, 0.2510512173175812}, {1, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestGensimTermOrder(t *testing.T) {
	// Terms are numbered by first document, then string order within it.
	docs := [][]string{{"z", "m", "z"}, {"b", "m", "a"}, {"y"}}
	ix := build(t, docs, DefaultParams(R2MED), nil)
	want := map[string]int32{"m": 0, "z": 1, "a": 2, "b": 3, "y": 4}
	for term, id := range want {
		if ix.vocab[term] != id {
			t.Errorf("id(%q) = %d, want %d", term, ix.vocab[term], id)
		}
	}
}

func TestTiesKeepCorpusOrderAndZeroFill(t *testing.T) {
	docs := [][]string{{"x"}, {"q"}, {"y"}, {"q"}, {"z"}}
	ix := build(t, docs, DefaultParams(R2MED), nil)
	got := ix.NewSearcher().Search([]string{"q"}, 4)
	var order []int32
	for _, h := range got {
		order = append(order, h.Doc)
	}
	// Docs 1 and 3 tie; then zero scores in corpus order: 0, 2.
	if want := []int32{1, 3, 0, 2}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if got[0].Score != got[1].Score || got[2].Score != 0 {
		t.Fatalf("scores %v", got)
	}
}

func TestLuceneBreaksTiesByDocID(t *testing.T) {
	docs := [][]string{{"q"}, {"q"}, {"q"}}
	ix := build(t, docs, DefaultParams(Lucene), []string{"doc-b", "doc-c", "doc-a"})
	got := ix.NewSearcher().Search([]string{"q"}, 3)
	var order []int32
	for _, h := range got {
		order = append(order, h.Doc)
	}
	if want := []int32{2, 0, 1}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v (doc-a, doc-b, doc-c)", order, want)
	}
}

func TestSearchTruncatesAndHandlesEmptyQueries(t *testing.T) {
	ix := build(t, tiny, DefaultParams(R2MED), nil)
	s := ix.NewSearcher()
	if got := s.Search([]string{"c"}, 1); len(got) != 1 || got[0].Doc != 3 {
		t.Fatalf("top-1 = %v, want doc 3 (tf 3 beats tf 1 for the same idf)", got)
	}
	// No known term: all documents tie at zero, corpus order.
	got := s.Search([]string{"nothing"}, 10)
	if len(got) != 4 || got[0] != (Hit{0, 0}) || got[3] != (Hit{3, 0}) {
		t.Fatalf("empty query = %v", got)
	}
	if got := s.Search([]string{"c"}, 0); got != nil {
		t.Fatalf("k=0 returned %v", got)
	}
	lx := build(t, tiny, DefaultParams(Lucene), nil)
	if got := lx.NewSearcher().Search([]string{"nothing"}, 10); len(got) != 0 {
		t.Fatalf("lucene returned non-matching docs: %v", got)
	}
}

func TestParamsValidation(t *testing.T) {
	for _, p := range []Params{{Scheme: "okapi", K1: 1, B: 0.5}, {Scheme: R2MED, K1: -1, B: 0.5}, {Scheme: R2MED, K1: 1, B: 1.5}} {
		if _, err := Build(0, nil, p, BuildOptions{}); err == nil {
			t.Errorf("Build accepted %+v", p)
		}
	}
	if _, err := Build(2, nil, DefaultParams(Lucene), BuildOptions{IDs: []string{"x"}}); err == nil {
		t.Error("Build accepted 1 id for 2 docs")
	}
	if s, err := ParseScheme("Lucene"); err != nil || s != Lucene {
		t.Errorf("ParseScheme(Lucene) = %v, %v", s, err)
	}
}

// TestMatchesExhaustiveScoring checks the windowed accumulator search, its
// reuse across queries and the heap against scoring every document
// directly, with windows narrower than the corpus (one not a multiple of
// 64, so the bitset's last word is partly used) and wider than it, and
// with Lucene's doc-id tie order.
func TestMatchesExhaustiveScoring(t *testing.T) {
	defer func(w int) { windowDocs = w }(windowDocs)
	for _, w := range []int{64, 100, 1000, 4096} {
		windowDocs = w
		t.Run(fmt.Sprint("window=", w), testMatchesExhaustiveScoring)
	}
}

func testMatchesExhaustiveScoring(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%d", i)
	}
	zipf := func() string { return vocab[min(len(vocab)-1, int(rng.ExpFloat64()*40))] }
	docs := make([][]string, 2000)
	for i := range docs {
		for range rng.IntN(60) {
			docs[i] = append(docs[i], zipf())
		}
	}
	ids := make([]string, len(docs))
	for i := range ids {
		ids[i] = fmt.Sprintf("doc%d", (i*7919)%len(docs)) // id order differs from corpus order
	}
	for _, sc := range Schemes() {
		var idl []string
		if sc == Lucene {
			idl = ids
		}
		ix := build(t, docs, DefaultParams(sc), idl)
		s := ix.NewSearcher()
		for q := range 50 {
			var query []string
			for range 1 + rng.IntN(12) {
				query = append(query, zipf())
			}
			got := s.Search(query, 100)
			want := exhaustive(ix, query, 100)
			if !slices.Equal(got, want) {
				t.Fatalf("%s query %d %v:\n got %v\nwant %v", sc, q, query, got[:min(5, len(got))], want[:min(5, len(want))])
			}
		}
	}
}

// exhaustive scores document by document straight from the postings (no
// accumulators, no heap, no zero fill) and sorts with the scheme's tie order.
func exhaustive(ix *Index, query []string, k int) []Hit {
	weight := func(t int32, d int32) (float32, bool) {
		for j := ix.off[t]; j < ix.off[t+1]; j++ {
			if ix.postDoc[j] == d {
				return ix.postVal[j], true
			}
		}
		return 0, false
	}
	counts := map[int32]int{}
	var ids []int32
	n := 0
	for _, q := range query {
		if id, ok := ix.vocab[q]; ok {
			n++
			if counts[id] == 0 {
				ids = append(ids, id)
			}
			counts[id]++
		}
	}
	var all []Hit
	for d := int32(0); int(d) < ix.numDocs; d++ {
		var score float32
		matched := false
		switch ix.params.Scheme {
		case R2MED:
			sorted := slices.Clone(ids)
			slices.Sort(sorted)
			for _, t := range sorted {
				if w, ok := weight(t, d); ok {
					wq := float32(r2medWeight(ix.idf[t], float64(counts[t]), float64(n), ix.params.K1, ix.params.B, ix.AvgDocLen()))
					score += float32(wq * w)
					matched = true
				}
			}
		case Robertson:
			for _, q := range query {
				if t, ok := ix.vocab[q]; ok {
					if w, ok := weight(t, d); ok {
						score += w
						matched = true
					}
				}
			}
		case Lucene:
			var sum float64
			for _, t := range ids {
				if tf, ok := weight(t, d); ok {
					w := float32(counts[t]) * float32(ix.idf[t])
					sum += float64(w - w/(1+tf*ix.normInv[d]))
					matched = true
				}
			}
			score = float32(sum)
		}
		if ix.params.Scheme == Lucene && !matched {
			continue
		}
		all = append(all, Hit{Doc: d, Score: score})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		if ix.tieRank == nil {
			return all[i].Doc < all[j].Doc
		}
		return ix.tieRank[all[i].Doc] < ix.tieRank[all[j].Doc]
	})
	return all[:min(k, len(all))]
}

func TestBuildIsIndependentOfWorkerCount(t *testing.T) {
	docs := make([][]string, 5000)
	for i := range docs {
		docs[i] = strings.Fields(fmt.Sprintf("w%d w%d w%d common", i%97, i%13, (i*7)%1000))
	}
	one, err := Build(len(docs), func(i int, dst []string) []string { return append(dst, docs[i]...) }, DefaultParams(R2MED), BuildOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	many := build(t, docs, DefaultParams(R2MED), nil)
	if !maps(one.vocab, many.vocab) || !slices.Equal(one.postDoc, many.postDoc) || !slices.Equal(one.postVal, many.postVal) {
		t.Fatal("index differs between 1 and 2 workers")
	}
}

func maps(a, b map[string]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTermsHookBuildsTheSameIndex: raw tokens plus a Terms mapping (here
// lower-casing and dropping "the") must give exactly the index that the
// already-mapped tokens give, document lengths included.
func TestTermsHookBuildsTheSameIndex(t *testing.T) {
	raw := make([][]string, 3000)
	for i := range raw {
		raw[i] = strings.Fields(fmt.Sprintf("The W%d w%d THE x%d w%d", i%31, i%31, i%7, i%500))
	}
	terms := func(tok string) (string, bool) {
		l := strings.ToLower(tok)
		return l, l != "the"
	}
	mapped := make([][]string, len(raw))
	for i, doc := range raw {
		for _, tok := range doc {
			if term, ok := terms(tok); ok {
				mapped[i] = append(mapped[i], term)
			}
		}
	}
	for _, sc := range Schemes() {
		want := build(t, mapped, DefaultParams(sc), nil)
		got, err := Build(len(raw), func(i int, dst []string) []string { return append(dst, raw[i]...) }, DefaultParams(sc), BuildOptions{Workers: 2, Terms: terms})
		if err != nil {
			t.Fatal(err)
		}
		if !maps(got.vocab, want.vocab) || !slices.Equal(got.docLen, want.docLen) || !slices.Equal(got.postDoc, want.postDoc) || !slices.Equal(got.postVal, want.postVal) {
			t.Fatalf("%s: index built through Terms differs", sc)
		}
	}
}

// TestHolds: Holds agrees with the postings built from the texts.
func TestHolds(t *testing.T) {
	docs := [][]string{{"fever", "rash"}, {"rash"}, {"cough", "fever"}}
	ix, err := Build(len(docs), func(i int, dst []string) []string { return append(dst, docs[i]...) }, DefaultParams(R2MED), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range []string{"fever", "rash", "cough"} {
		id, ok := ix.TermID(term)
		if !ok {
			t.Fatalf("no id for %q", term)
		}
		for d, toks := range docs {
			if got, want := ix.Holds(id, int32(d)), slices.Contains(toks, term); got != want {
				t.Errorf("Holds(%q, %d) = %v, want %v", term, d, got, want)
			}
		}
	}
	if _, ok := ix.TermID("absent"); ok {
		t.Error("an absent term has an id")
	}
	// Long lists, evenly spread and skewed: every document asked.
	rng := rand.New(rand.NewPCG(1, 2))
	var many [][]string
	for d := range 5000 {
		var toks []string
		if rng.IntN(3) == 0 {
			toks = append(toks, "even")
		}
		if d < 50 || d%997 == 0 || d > 4990 {
			toks = append(toks, "skewed")
		}
		many = append(many, append(toks, "all"))
	}
	ix, err = Build(len(many), func(i int, dst []string) []string { return append(dst, many[i]...) }, DefaultParams(R2MED), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range []string{"even", "skewed", "all"} {
		id, _ := ix.TermID(term)
		for d, toks := range many {
			if got, want := ix.Holds(id, int32(d)), slices.Contains(toks, term); got != want {
				t.Fatalf("Holds(%q, %d) = %v, want %v", term, d, got, want)
			}
		}
		if ix.Holds(id, -1) || ix.Holds(id, 5000) {
			t.Errorf("%q: a document outside the corpus", term)
		}
	}
}

// TestBuildProgressIsFine: Progress counts every document once, in steps
// of at most ProgressStep documents, not one call per chunk: with one
// worker a chunk is a third of the corpus, and a bar fed per chunk stood
// at 0% for a third of the build, then jumped.
func TestBuildProgressIsFine(t *testing.T) {
	const n = 5000
	var mu sync.Mutex
	var calls, total, most int
	tokenize := func(i int, dst []string) []string { return append(dst, fmt.Sprint("t", i%97)) }
	_, err := Build(n, tokenize, DefaultParams(R2MED), BuildOptions{Workers: 1, Progress: func(docs int) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		total += docs
		most = max(most, docs)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if total != n || most > ProgressStep || calls < n/ProgressStep {
		t.Errorf("%d calls counted %d documents of %d, at most %d at once (want at most %d)", calls, total, n, most, ProgressStep)
	}
}
