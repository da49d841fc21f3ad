package audit

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
)

// clauseEnd splits prose into clauses: sentences, and their parts between
// commas, semicolons, colons and parentheses.
var clauseEnd = regexp.MustCompile(`[.?!;:,]\s+|\s+\(|\)\s*`)

// shortTexts are the texts (split at split, unless nil) of 6–12
// normalised words, each once, keyed as ID#n.
func shortTexts(docs []ir.Doc, split *regexp.Regexp, seen map[string]bool) (out []ir.Doc) {
	for _, d := range docs {
		parts := []string{d.Text}
		if split != nil {
			parts = split.Split(d.Text, -1)
		}
		for i, s := range parts {
			n := minhash.Normalize(s)
			if w := len(strings.Fields(n)); w < 6 || w > 12 || seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, ir.Doc{ID: fmt.Sprintf("%s#%d", d.ID, i), Text: strings.TrimSpace(s)})
		}
	}
	return out
}

func words(s string) []string { return strings.Fields(minhash.Normalize(s)) }

// wordDistance is the word edit distance of two word sequences.
func wordDistance(x, y []string) int {
	prev, cur := make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			c := prev[j-1]
			if x[i-1] != y[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// TestPlantedShortClaims is issue 21's plant: a training file with
// benchmark texts planted as issue 14's plant has them (queries and
// positive documents verbatim, case and punctuation changed, words
// swapped) and with short claims of 6–12 words (NFCorpus's test queries of
// that length, and clauses of the demo task's documents and queries made
// a benchmark of claims) planted with one word replaced (by a word of
// another claim) or dropped, among clean negatives: NFCorpus's queries of
// the other splits and the other demo clauses, none exact and none at
// Jaccard 0.8 with a benchmark text (those are real overlaps, listed by
// TestNFCorpusSplitsOverlap), the hard ones sharing many words with a
// claim ("Are dates good for you?" / "Are avocados good for you?", five
// words one content word apart), and made ones: halves of two claims
// joined, a third of a claim's words replaced.
//
// Without word edits the audit finds the plant at recall 0.84 (short
// claims 0.70: every miss a claim of 6–9 words with a word replaced); with
// them, recall 1 (short claims 1) and not one negative flagged, the three
// five-word texts one content word from a benchmark text included ("Are
// dates good for you?"). Texts one word from a benchmark text of six words
// or more are near-copies by the rule (minhash.Edits), not negatives, as
// those at Jaccard 0.8 are.
func TestPlantedShortClaims(t *testing.T) {
	test := loadNFCorpus(t, "test")
	dm, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(21, 6))

	var testQ, otherQ []ir.Doc
	for _, q := range loadAllQueries(t) {
		if _, ok := test.Qrels[q.ID]; ok {
			testQ = append(testQ, ir.Doc{ID: q.ID, Text: q.Text})
		} else {
			otherQ = append(otherQ, ir.Doc{ID: q.ID, Text: q.Text})
		}
	}
	demoTexts := slices.Clone(dm.Corpus)
	for _, q := range dm.Queries {
		demoTexts = append(demoTexts, ir.Doc{ID: q.ID, Text: q.Text})
	}
	clauses := shortTexts(demoTexts, clauseEnd, map[string]bool{})
	r.Shuffle(len(clauses), func(i, j int) { clauses[i], clauses[j] = clauses[j], clauses[i] })
	claimTask := &ir.Task{Name: "demo-claims"}
	for _, c := range clauses[:len(clauses)/2] {
		claimTask.Queries = append(claimTask.Queries, ir.Query{ID: c.ID, Text: c.Text})
	}
	otherClauses := clauses[len(clauses)/2:]
	bench := []*ir.Task{test, claimTask}

	// Every benchmark text, for the negatives' checks.
	pos := positives(test)
	var benchTexts []string
	for _, q := range test.Queries {
		benchTexts = append(benchTexts, q.Text)
	}
	var posDocs []ir.Doc
	for _, d := range test.Corpus {
		if pos[d.ID] {
			posDocs = append(posDocs, d)
			benchTexts = append(benchTexts, d.Text)
		}
	}
	for _, q := range claimTask.Queries {
		benchTexts = append(benchTexts, q.Text)
	}
	benchSets := make([][]uint64, len(benchTexts))
	benchWords := make([][]string, len(benchTexts))
	benchJoined := map[string]bool{}
	for i, s := range benchTexts {
		benchSets[i] = wordSet(s)
		benchWords[i] = words(s)
		benchJoined[joined(s)] = true
	}

	type line struct {
		text, source, variant string
		claim                 bool // a short claim with a word replaced or dropped
		kind                  Kind
	}
	var train []line
	// Issue 14's variants of queries and positive documents.
	qs := slices.Clone(test.Queries)
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	for i, q := range qs[:160] {
		p := line{source: q.ID, kind: QueryKind}
		switch i % 3 {
		case 0:
			p.text, p.variant = q.Text, "verbatim"
		case 1:
			p.text, p.variant = changeCaseAndPunctuation(r, q.Text), "case/punctuation"
		default:
			p.text, p.variant = changeCaseAndPunctuation(r, swapWords(r, q.Text, 1)), "swapped + case/punctuation"
		}
		train = append(train, p)
	}
	r.Shuffle(len(posDocs), func(i, j int) { posDocs[i], posDocs[j] = posDocs[j], posDocs[i] })
	for i, d := range posDocs[:120] {
		p := line{source: d.ID, kind: DocumentKind}
		if i%2 == 0 {
			p.text, p.variant = d.Text, "verbatim"
		} else {
			p.text, p.variant = swapWords(r, changeCaseAndPunctuation(r, d.Text), 3), "swapped + case/punctuation"
		}
		train = append(train, p)
	}
	// Short claims, one word replaced or dropped.
	claims := shortTexts(testQ, nil, map[string]bool{})
	for i := range claims {
		claims[i].ID = strings.TrimSuffix(claims[i].ID, "#0")
	}
	claims = append(claims, clauses[:len(clauses)/2]...)
	nClaims := 0
	for i, c := range claims {
		w := words(c.Text)
		at := r.IntN(len(w))
		p := line{source: c.ID, kind: QueryKind, claim: true}
		if i%2 == 0 {
			other := words(claims[r.IntN(len(claims))].Text)
			repl := other[r.IntN(len(other))]
			for repl == w[at] {
				repl = other[r.IntN(len(other))]
			}
			p.variant = fmt.Sprintf("%d words, one replaced", len(w))
			w[at] = repl
		} else {
			p.variant = fmt.Sprintf("%d words, one dropped", len(w))
			w = slices.Delete(w, at, at+1)
		}
		p.text = changeCaseAndPunctuation(r, strings.Join(w, " "))
		train = append(train, p)
		nClaims++
	}
	nPlanted := len(train)

	// Negatives.
	closest := func(s string) float64 {
		ws := wordSet(s)
		best := 0.0
		for _, b := range benchSets {
			if lo, hi := min(len(ws), len(b)), max(len(ws), len(b)); 10*lo < 3*hi {
				continue // Jaccard ≤ lo/hi < 0.3
			}
			best = max(best, minhash.Jaccard(ws, b))
		}
		return best
	}
	nNeg, hard, oneEdit := 0, 0, 0
	negative := func(text, source string, made bool) {
		if benchJoined[joined(text)] {
			return
		}
		j := closest(text)
		if j >= minhash.DefaultThreshold || made && j < 0.3 {
			return
		}
		// Within one word edit of a benchmark text of five words or more.
		near, nearWords := false, 0
		w := words(text)
		for _, b := range benchWords {
			if max(len(w), len(b)) >= 5 && len(w)-len(b) <= 1 && len(b)-len(w) <= 1 && wordDistance(w, b) <= 1 {
				near, nearWords = true, max(nearWords, len(w), len(b))
			}
		}
		if made && near {
			return // a made text that happens to copy a claim
		}
		if near && nearWords >= minhash.DefaultEditContentMinWords {
			// One word from a benchmark text of six words or more is a
			// near-copy by the rule (minhash.Edits), as Jaccard 0.8 is:
			// NFCorpus's own "Phytates for the Prevention/Treatment of
			// Cancer" (TestNFCorpusSplitsOverlap lists them). Not a
			// negative.
			return
		}
		if near {
			oneEdit++
		}
		if j >= 0.5 {
			hard++
		}
		train = append(train, line{text: text, source: "negative " + source})
		nNeg++
	}
	for _, q := range otherQ {
		negative(q.Text, q.ID, false)
	}
	for _, c := range otherClauses {
		negative(c.Text, c.ID, false)
	}
	for i := range 300 {
		a := words(claims[r.IntN(len(claims))].Text)
		b := words(claims[r.IntN(len(claims))].Text)
		var w []string
		if i%2 == 0 {
			w = append(slices.Clone(a[:(len(a)+1)/2]), b[len(b)/2:]...)
		} else {
			w = slices.Clone(a)
			for _, at := range r.Perm(len(w))[:max(2, len(w)/3)] {
				w[at] = b[r.IntN(len(b))]
			}
		}
		negative(changeCaseAndPunctuation(r, strings.Join(w, " ")), fmt.Sprintf("made-%d", i), true)
	}
	t.Logf("%d planted (%d short claims), %d negatives (%d at Jaccard ≥ 0.5, %d one word edit from a benchmark text of 5 words or more)", nPlanted, nClaims, nNeg, hard, oneEdit)
	if nNeg < 2000 || hard < 100 || oneEdit < 3 {
		t.Fatalf("the negatives would not test precision")
	}
	r.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
	var buf bytes.Buffer
	for _, p := range train {
		buf.WriteString(strings.ReplaceAll(p.text, "\n", " ") + "\n")
	}
	path := filepath.Join(t.TempDir(), "train.txt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		precision, recall, claimRecall float64
		found                          map[int][]Match
		byVariant                      map[string][2]int // found, planted
		flagged                        []string
	}
	audit := func(edits minhash.Edits) outcome {
		t.Helper()
		res, err := Leakage(context.Background(), bench, []string{path}, LeakageOptions{Edits: edits, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		o := outcome{found: map[int][]Match{}, byVariant: map[string][2]int{}}
		if err := res.Matches(func(m Match) error { o.found[m.TrainLine] = append(o.found[m.TrainLine], m); return nil }); err != nil {
			t.Fatal(err)
		}
		tp, fp, claimsFound := 0, 0, 0
		for i, p := range train {
			ms := o.found[i+1]
			if p.kind == "" {
				if len(ms) > 0 {
					fp++
					o.flagged = append(o.flagged, fmt.Sprintf("%s %q: %s %s %.3f %s", p.source, p.text, ms[0].Match, ms[0].Measure, ms[0].Similarity, ms[0].BenchmarkID))
				}
				continue
			}
			hit := slices.ContainsFunc(ms, func(m Match) bool { return m.BenchmarkID == p.source && m.BenchmarkKind == p.kind })
			v := o.byVariant[p.variant]
			v[1]++
			if hit {
				tp++
				v[0]++
				if p.claim {
					claimsFound++
				}
			}
			o.byVariant[p.variant] = v
		}
		o.precision, o.recall, o.claimRecall = float64(tp)/float64(tp+fp), float64(tp)/float64(nPlanted), float64(claimsFound)/float64(nClaims)
		t.Logf("word edits %+v: precision %.4f recall %.4f (short claims %.4f); found/planted by variant %v", edits, o.precision, o.recall, o.claimRecall, o.byVariant)
		return o
	}
	before := audit(minhash.Edits{Off: true})
	if before.recall >= 0.95 {
		t.Errorf("without word edits recall is %.4f: the plant does not test short claims", before.recall)
	}
	o := audit(minhash.Edits{})
	if o.precision < 0.95 || o.recall < 0.95 || o.claimRecall < 0.95 {
		t.Errorf("with word edits: precision %.4f recall %.4f (short claims %.4f); want all ≥ 0.95", o.precision, o.recall, o.claimRecall)
	}
	for _, f := range o.flagged {
		t.Errorf("negative flagged: %s", f)
	}
	for v, n := range o.byVariant {
		if n[0] != n[1] {
			t.Errorf("%s: found %d of %d", v, n[0], n[1])
		}
	}
	// What is found is reported with its measure and value.
	measures := map[string]int{}
	for i, p := range train {
		for _, m := range o.found[i+1] {
			if m.BenchmarkID != p.source {
				continue
			}
			measures[m.Measure]++
			if m.Measure != MeasureWordEdits {
				continue
			}
			n := max(len(words(p.text)), len(words(textOfQuery(bench, p.source))))
			if want := 1 - 1/float64(n); m.Match != MatchNear || m.Similarity != want {
				t.Errorf("%s: %s %s %v, want near word_edits %v (one edit in %d words)", p.source, m.Match, m.Measure, m.Similarity, want, n)
			}
		}
	}
	if measures[MeasureWordEdits] < 50 || measures[MeasureJaccard] < 50 || measures[MeasureExact] < 100 {
		t.Errorf("measures of the planted matches: %v", measures)
	}
}

func textOfQuery(tasks []*ir.Task, id string) string {
	for _, t := range tasks {
		for _, q := range t.Queries {
			if q.ID == id {
				return q.Text
			}
		}
	}
	return ""
}

// A checkpoint left by a run with other word-edit settings is not resumed:
// the settings are in the run's fingerprint, so the run starts afresh and
// finds what a run with its settings finds.
func TestLeakageCheckpointKeysWordEdits(t *testing.T) {
	task := &ir.Task{Name: "t", Queries: []ir.Query{{ID: "q1", Text: "Does green tea lower blood pressure quickly"}}}
	var buf bytes.Buffer
	for i := range 60 {
		if i%10 == 9 {
			buf.WriteString("does black tea lower blood pressure quickly\n") // Jaccard 0.75, one word replaced
		} else {
			fmt.Fprintf(&buf, "unrelated training line %d\n", i)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "train.txt")
	os.WriteFile(path, buf.Bytes(), 0o644)
	state := filepath.Join(dir, "state")

	// A run without word edits, its state kept (as if it had stopped
	// before Close): finished, with no matches.
	opts := LeakageOptions{Edits: minhash.Edits{Off: true}, State: state, ChunkRows: 5}
	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Report.Train[0].Matches; n != 0 {
		t.Fatalf("without word edits: %d matches", n)
	}
	// The same data with word edits on: a new run, all six copies found.
	opts.Edits = minhash.Edits{}
	res, err = Leakage(context.Background(), []*ir.Task{task}, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var got []string
	res.Matches(func(m Match) error {
		got = append(got, fmt.Sprintf("%d %s %s %.3f", m.TrainLine, m.Match, m.Measure, m.Similarity))
		return nil
	})
	var want []string
	for line := 10; line <= 60; line += 10 {
		want = append(want, fmt.Sprintf("%d near word_edits 0.857", line))
	}
	if !slices.Equal(got, want) {
		t.Errorf("matches %q, want %q", got, want)
	}
	if ck, _ := filepath.Glob(filepath.Join(state, "*", checkpointFile)); len(ck) != 2 {
		t.Errorf("checkpoints %q, want the old run's and the new one's", ck)
	}
	if s := res.Report.Settings.WordEdits; s != (minhash.Edits{MinWords: 5, ContentMinWords: 6, MaxWords: 32}) {
		t.Errorf("report settings: %+v", s)
	}
}
