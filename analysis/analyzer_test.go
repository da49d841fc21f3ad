package analysis

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func TestGetAndNames(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"lucene-english", "whitespace"}) {
		t.Errorf("Names() = %q", got)
	}
	for _, name := range []string{"", "lucene-english"} {
		a, err := Get(name)
		if err != nil {
			t.Fatalf("Get(%q): %v", name, err)
		}
		got := a.Analyze(nil, "The patients' HbA1c levels were rising")
		if want := []string{"patient", "hba1c", "level", "were", "rise"}; !slices.Equal(got, want) {
			t.Errorf("Get(%q) analyzes to %q, want %q", name, got, want)
		}
	}
	ws, err := Get("whitespace")
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.Analyze(nil, "The  Patients'\tHbA1c"); !slices.Equal(got, []string{"The", "Patients'", "HbA1c"}) {
		t.Errorf("whitespace analyzes to %q", got)
	}
	for _, name := range []string{"", "lucene-english", "whitespace"} {
		if err := Check(name); err != nil {
			t.Errorf("Check(%q): %v", name, err)
		}
	}
	if err := Check("english-porter"); err == nil {
		t.Error("Check of an unknown name succeeded")
	}
	_, err = Get("english-porter")
	if err == nil {
		t.Fatal("Get of an unknown name succeeded")
	} else if cerr := Check("english-porter"); cerr == nil || cerr.Error() != err.Error() {
		t.Errorf("Check's error %v, Get's %v", cerr, err)
	}
	for _, want := range []string{`"english-porter"`, "lucene-english", "whitespace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestAnalyzeAppends(t *testing.T) {
	for _, name := range Names() {
		a, _ := Get(name)
		dst := a.Analyze([]string{"kept"}, "stones")
		if len(dst) != 2 || dst[0] != "kept" {
			t.Errorf("%s: Analyze did not append: %q", name, dst)
		}
	}
}

func TestChainDropsAndRewrites(t *testing.T) {
	c := &Chain{Tokenizer: WhitespaceTokenizer{}, Filters: []Filter{LowerCaseFilter{}, NewStopFilter([]string{"x", "y"})}}
	got := c.Analyze([]string{"pre"}, "A X b Y c")
	if !slices.Equal(got, []string{"pre", "a", "b", "c"}) {
		t.Errorf("got %q", got)
	}
	// Dropped slots beyond the result are cleared so the caller's reused
	// slice does not keep old texts alive.
	if full := got[:cap(got)]; slices.ContainsFunc(full[len(got):], func(s string) bool { return s != "" }) {
		t.Errorf("stale tokens beyond len: %q", full[len(got):])
	}
}

// TestMemoMatchesPlainChain runs the English chain with a tiny memo (so it
// fills up, and publishes many snapshots) and without one, on the same
// texts twice over, and wants identical output.
func TestMemoMatchesPlainChain(t *testing.T) {
	cases := loadReference(t)
	filters := LuceneEnglish().(*Chain).Filters
	plain := &Chain{Tokenizer: StandardTokenizer{}, Filters: filters}
	memo := &Chain{Tokenizer: StandardTokenizer{}, Filters: filters, MemoSize: 700}
	var got, want []string
	for round := range 2 {
		for _, c := range cases {
			want = plain.Analyze(want[:0], c.Text)
			got = memo.Analyze(got[:0], c.Text)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %s: memo gives %q, plain %q", round, c.ID, got, want)
			}
		}
	}
	// The reference has far more than 700 distinct tokens: the memo must
	// have filled up to its bound, published everything, and hold what the
	// filters say.
	m := memo.memo
	snap := *m.snap.Load()
	if m.size != memo.MemoSize || len(snap) != m.size {
		t.Errorf("memo holds %d entries, %d published; want %d", m.size, len(snap), memo.MemoSize)
	}
	for tok, e := range snap {
		if term, keep := plain.apply(tok); term != e.term || keep != e.keep {
			t.Errorf("memo has %q -> %q,%v; filters give %q,%v", tok, e.term, e.keep, term, keep)
		}
	}
}

// TestMemoOwnsItsStrings: memo entries must not point into the analyzed
// text, or the memo would keep whole documents alive.
func TestMemoOwnsItsStrings(t *testing.T) {
	c := LuceneEnglish().(*Chain)
	text := strings.Repeat("Patients presented with fevers and Coughs; ", 400)
	for range 3 {
		c.Analyze(nil, text)
	}
	lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	hi := lo + uintptr(len(text))
	inside := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return len(s) > 0 && p >= lo && p < hi
	}
	snap := c.memo.snap.Load()
	if snap == nil || len(*snap) == 0 {
		t.Fatal("nothing memoized")
	}
	for k, v := range *snap {
		if inside(k) || inside(v.term) {
			t.Errorf("memo entry %q -> %q points into the input text", k, v.term)
		}
	}
}

func TestConcurrentAnalyze(t *testing.T) {
	cases := loadReference(t)
	a := LuceneEnglish()
	want := make([][]string, len(cases))
	for i, c := range cases {
		want[i] = (&Chain{Tokenizer: StandardTokenizer{}, Filters: a.(*Chain).Filters}).Analyze(nil, c.Text)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			var got []string
			for k := range cases {
				i := (k + g*len(cases)/8) % len(cases)
				got = a.Analyze(got[:0], cases[i].Text)
				if !slices.Equal(got, want[i]) && !(len(got) == 0 && len(want[i]) == 0) {
					errs <- cases[i].ID
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for id := range errs {
		t.Errorf("%s: concurrent result differs", id)
	}
}
