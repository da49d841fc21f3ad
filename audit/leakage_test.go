package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/ir"
)

const shared = "../../shared/data"

// needShared skips without the shared reference data, except under
// R2MED_CI=1, where the data must be there.
func needShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared reference data not found at %s but R2MED_CI=1: %v", shared, err)
		}
		t.Skipf("shared reference data not found at %s: %v", shared, err)
	}
}

func loadNFCorpus(t testing.TB, split string) *ir.Task {
	t.Helper()
	needShared(t)
	task, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: split})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// wordSet is the set of normalised words of a text (hashed), for
// brute-force Jaccard in tests.
func wordSet(s string) []uint64 {
	h, _ := minhash.New(minhash.Spec{})
	return h.Shingles(nil, minhash.Normalize(s))
}

// Perturbations the planted overlaps go through.
func changeCaseAndPunctuation(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case unicode.IsPunct(c) && r.IntN(2) == 0:
			continue // dropped
		case unicode.IsLetter(c) && r.IntN(3) == 0:
			if unicode.IsUpper(c) {
				c = unicode.ToLower(c)
			} else {
				c = unicode.ToUpper(c)
			}
		case c == ' ' && r.IntN(4) == 0:
			b.WriteString(" ,")
		}
		b.WriteRune(c)
	}
	return b.String() + []string{"", "?", "!", " ...", "."}[r.IntN(5)]
}

// swapWords exchanges n pairs of adjacent words.
func swapWords(r *rand.Rand, s string, n int) string {
	w := strings.Fields(s)
	for range n {
		if len(w) < 2 {
			break
		}
		i := r.IntN(len(w) - 1)
		w[i], w[i+1] = w[i+1], w[i]
	}
	return strings.Join(w, " ")
}

// replaceWords replaces n words with words from another text.
func replaceWords(r *rand.Rand, s, from string, n int) string {
	w, f := strings.Fields(s), strings.Fields(from)
	for range n {
		w[r.IntN(len(w))] = f[r.IntN(len(f))]
	}
	return strings.Join(w, " ")
}

// TestPlantedOverlapNFCorpus is the measured test of issue 14: a training
// file of NFCorpus queries and documents with planted overlaps (verbatim,
// case and punctuation changed, words swapped; documents also with words
// replaced) among non-overlapping controls must be found with precision
// and recall ≥ 0.95 at the default threshold.
//
// Controls are the NFCorpus queries of the other splits and the corpus
// documents outside the test positives whose word-set Jaccard with every
// audited text is below the threshold (brute force) — including the hard
// ones between 0.5 and 0.8, which must not be flagged — and never an
// exact match: NFCorpus repeats some test queries in its other
// splits verbatim, and those are real overlaps, not controls.
func TestPlantedOverlapNFCorpus(t *testing.T) {
	task := loadNFCorpus(t, "test")
	all := loadAllQueries(t)
	r := rand.New(rand.NewPCG(14, 1))

	pos := positives(task)
	var posDocs []ir.Doc
	for _, d := range task.Corpus {
		if pos[d.ID] {
			posDocs = append(posDocs, d)
		}
	}
	// Brute-force similarity of a text to every audited text.
	var auditedSets [][]uint64
	var auditedNorm = map[string]bool{}
	for _, q := range task.Queries {
		auditedSets = append(auditedSets, wordSet(q.Text))
		auditedNorm[joined(q.Text)] = true
	}
	for _, d := range posDocs {
		auditedSets = append(auditedSets, wordSet(d.Text))
		auditedNorm[joined(d.Text)] = true
	}
	maxJ := func(s string) float64 {
		ws := wordSet(s)
		m := 0.0
		for _, a := range auditedSets {
			// Jaccard is at most the ratio of the set sizes: sets
			// too different in size cannot reach 0.5.
			if lo, hi := min(len(ws), len(a)), max(len(ws), len(a)); 2*lo < hi {
				continue
			}
			m = max(m, minhash.Jaccard(ws, a))
		}
		return m
	}

	type planted struct {
		text, source, variant string
		kind                  Kind
	}
	var train []planted
	qs := slices.Clone(task.Queries)
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	for i, q := range qs[:240] {
		p := planted{source: q.ID, kind: QueryKind}
		switch i % 4 {
		case 0:
			p.text, p.variant = q.Text, "verbatim"
		case 1:
			p.text, p.variant = changeCaseAndPunctuation(r, q.Text), "case/punctuation"
		case 2:
			p.text, p.variant = swapWords(r, q.Text, 2), "words swapped"
		case 3:
			p.text, p.variant = changeCaseAndPunctuation(r, swapWords(r, q.Text, 1)), "swapped + case/punctuation"
		}
		train = append(train, p)
	}
	ds := slices.Clone(posDocs)
	r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	for i, d := range ds[:150] {
		p := planted{source: d.ID, kind: DocumentKind}
		switch i % 3 {
		case 0:
			p.text, p.variant = d.Text, "verbatim"
		case 1:
			p.text, p.variant = swapWords(r, changeCaseAndPunctuation(r, d.Text), 3), "swapped + case/punctuation"
		case 2:
			p.text, p.variant = replaceWords(r, swapWords(r, d.Text, 2), ds[(i+1)%len(ds)].Text, 2), "2 words replaced, swapped"
		}
		train = append(train, p)
	}
	nPlanted := len(train)
	hard := 0
	controls := 0
	for _, q := range all {
		if _, ok := task.Qrels[q.ID]; ok || auditedNorm[joined(q.Text)] {
			continue
		}
		j := maxJ(q.Text)
		if j >= minhash.DefaultThreshold {
			continue
		}
		if j >= 0.5 {
			hard++
		}
		train = append(train, planted{text: q.Text, source: "control " + q.ID})
		controls++
		if controls == 1200 {
			break
		}
	}
	docControls := 0
	for _, d := range task.Corpus {
		if pos[d.ID] || auditedNorm[joined(d.Text)] || maxJ(d.Text) >= minhash.DefaultThreshold {
			continue
		}
		train = append(train, planted{text: d.Text, source: "control " + d.ID})
		if docControls++; docControls == 300 {
			break
		}
	}
	if hard < 50 || controls < 1000 {
		t.Fatalf("only %d controls, %d of them hard (Jaccard 0.5–0.8): the test would not test precision", controls, hard)
	}
	r.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })

	// One plain-text line per training text.
	var buf bytes.Buffer
	for _, p := range train {
		buf.WriteString(strings.ReplaceAll(p.text, "\n", " ") + "\n")
	}
	path := filepath.Join(t.TempDir(), "train.txt")
	os.WriteFile(path, buf.Bytes(), 0o644)

	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	found := map[int][]Match{}
	if err := res.Matches(func(m Match) error { found[m.TrainLine] = append(found[m.TrainLine], m); return nil }); err != nil {
		t.Fatal(err)
	}
	tp, fp, fn := 0, 0, 0
	byVariant := map[string][2]int{}
	for i, p := range train {
		ms := found[i+1]
		isPlanted := p.kind != ""
		hit := slices.ContainsFunc(ms, func(m Match) bool { return m.BenchmarkID == p.source && m.BenchmarkKind == p.kind })
		switch {
		case isPlanted && hit:
			tp++
		case isPlanted:
			fn++
			t.Logf("missed %s %s (%s): %q", p.kind, p.source, p.variant, snippet(p.text, 100))
		case len(ms) > 0:
			fp++
			t.Logf("control %s flagged: %+v", p.source, ms[0])
		}
		if isPlanted {
			v := byVariant[string(p.kind)+" "+p.variant]
			v[1]++
			if hit {
				v[0]++
			}
			byVariant[string(p.kind)+" "+p.variant] = v
		}
	}
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(nPlanted)
	t.Logf("%d planted, %d controls (%d hard): precision %.4f recall %.4f; by variant %v", nPlanted, len(train)-nPlanted, hard, precision, recall, byVariant)
	if precision < 0.95 || recall < 0.95 {
		t.Errorf("precision %.4f recall %.4f; want both ≥ 0.95", precision, recall)
	}
	if tp+fn != nPlanted {
		t.Fatalf("counted %d planted, planted %d", tp+fn, nPlanted)
	}
	// Verbatim and case/punctuation copies are exact matches; swapped
	// words near ones, unless the swap changed nothing (two equal words).
	for i, p := range train {
		for _, m := range found[i+1] {
			if m.BenchmarkID != p.source {
				continue
			}
			want := MatchNear
			if joined(p.text) == joined(textOf(task, m)) {
				want = MatchExact
			} else if p.variant == "verbatim" || p.variant == "case/punctuation" {
				t.Errorf("%s %s (%s) differs from its source after normalisation", p.kind, p.source, p.variant)
			}
			if m.Match != want {
				t.Errorf("%s %s (%s) matched as %s, want %s", p.kind, p.source, p.variant, m.Match, want)
			}
		}
	}
	rep := res.Report.Tasks[0]
	if rep.Queries.Total != len(task.Queries) || rep.Queries.Contaminated < 228 || rep.Documents.Contaminated < 143 {
		t.Errorf("report: %+v %+v", rep.Queries, rep.Documents)
	}
}

func textOf(t *ir.Task, m Match) string {
	if m.BenchmarkKind == QueryKind {
		for _, q := range t.Queries {
			if q.ID == m.BenchmarkID {
				return q.Text
			}
		}
	}
	for _, d := range t.Corpus {
		if d.ID == m.BenchmarkID {
			return d.Text
		}
	}
	return ""
}

// joined is a text's exact-match form: normalised, spaces dropped.
func joined(s string) string { return strings.ReplaceAll(minhash.Normalize(s), " ", "") }

// loadAllQueries reads every NFCorpus query, whatever its split.
func loadAllQueries(t testing.TB) []ir.Query {
	f, err := os.Open(filepath.Join(shared, "nfcorpus", "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := dataset.ReadQueries(f, "queries.jsonl", ir.LayoutBEIR)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// NFCorpus's other splits repeat some of its test queries: an audit of
// the dev and train queries against the test split finds them, exact
// ones as exact.
func TestNFCorpusSplitsOverlap(t *testing.T) {
	task := loadNFCorpus(t, "test")
	var buf bytes.Buffer
	for _, q := range loadAllQueries(t) {
		if _, ok := task.Qrels[q.ID]; ok {
			continue
		}
		b, _ := json.Marshal(map[string]string{"_id": q.ID, "text": q.Text})
		buf.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "other-queries.jsonl")
	os.WriteFile(path, buf.Bytes(), 0o644)
	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{Documents: NoDocs})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var got []string
	res.Matches(func(m Match) error {
		got = append(got, fmt.Sprintf("%s %s %.3f", m.BenchmarkID, m.Match, m.Similarity))
		return nil
	})
	// What a brute-force pass over all pairs finds, with Python's
	// unicodedata doing the normalisation (NFKC, casefold, NFKC; letters,
	// marks and numbers kept, apostrophes deleted, exact = equal without
	// spaces): six exact repeats and two near ones by Jaccard; and by word
	// edits four six-word titles one content word apart (similarity 5/6).
	want := []string{
		"PLAIN-2610 near 0.833",  // PLAIN-5 'Treating Asthma With Plants vs. Pills' / '… vs. Supplements?' (word edits)
		"PLAIN-2630 exact 1.000", // PLAIN-24 'Alkylphenol Endocrine Disruptors and Allergies'
		"PLAIN-2930 exact 1.000", // PLAIN-268 'Kiwi Fruit for Irritable Bowel Syndrome' / 'Kiwifruit …'
		"PLAIN-3053 exact 1.000", // PLAIN-1070 "Dragon's Blood"
		"PLAIN-3251 exact 1.000", // PLAIN-1126 'EPIC Study'
		"PLAIN-2620 near 0.833",  // PLAIN-2622 'Phytates for the Prevention of Cancer' / '… Treatment …' (word edits)
		"PLAIN-2770 near 0.833",  // PLAIN-2771 'Flaxseeds & Breast Cancer Survival: Epidemiological Evidence' / '… Clinical …' (word edits)
		"PLAIN-270 near 0.800",   // PLAIN-2935 'Is Caffeinated Tea Dehydrating?' / '… Really Dehydrating?'
		"PLAIN-3342 near 0.833",  // PLAIN-3343 'Is Coconut Oil Good For You?' / 'Is Coconut Milk …' (word edits)
		"PLAIN-2440 exact 1.000", // PLAIN-3470 'More Than an Apple a Day: Combating Common Diseases'
		"PLAIN-165 near 0.875",   // PLAIN-2759 'Breast Cancer and Alcohol: …' / 'Breast Cancer & Alcohol: …'
		"PLAIN-3131 exact 1.000", // PLAIN-3341 'Are Avocados Good for You?'
	}
	if !slices.Equal(got, want) {
		t.Errorf("matches\n%q\nwant\n%q", got, want)
	}
	if rep := res.Report.Tasks[0]; rep.Documents.Total != 0 || rep.Queries.Contaminated != len(got) {
		t.Errorf("report %+v", rep)
	}
}

// An interrupted run continues from its checkpoint and ends with exactly
// the matches of an uninterrupted one; changed settings start over.
func TestLeakageResumes(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n := 0
	for i := range 400 {
		var q, p string
		switch i % 5 {
		case 0:
			q = task.Queries[i%len(task.Queries)].Text
		case 1:
			p = strings.ToUpper(task.Corpus[i%len(task.Corpus)].Text)
		default:
			q = fmt.Sprintf("unrelated training question number %d about nothing", i)
		}
		if q == "" {
			q = "filler"
		}
		if p == "" {
			p = "filler passage"
		}
		b, _ := json.Marshal(map[string]any{"query": q, "pos": []string{p}})
		buf.Write(append(b, '\n'))
		n++
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "train.jsonl")
	os.WriteFile(path, buf.Bytes(), 0o644)
	opts := LeakageOptions{Documents: AllDocs, Workers: 3, ChunkRows: 7}
	ref, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, opts)
	// The dense threshold below is unreachable, so these are the matches
	// with or without it.
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	ref.WriteMatches(&want)
	ref.Close()
	if want.Len() == 0 {
		t.Fatal("no matches")
	}

	state := filepath.Join(dir, "state")
	opts.State = state
	opts.CheckpointEvery = 1 // every chunk
	// Interrupt mid-file: an embedder that cancels the run's context after
	// a number of calls (one per chunk, after one for the benchmark).
	var cancel context.CancelFunc
	var calls atomic.Int32
	const stopAt = 12
	emb := embed.Func(func(_ context.Context, _ embed.Input, texts []string) ([][]float32, error) {
		if calls.Add(1) == stopAt {
			cancel()
		}
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s) % 7), 1}
		}
		return out, nil
	})
	opts.Dense = &Dense{Embedder: emb, Model: "fake", Threshold: 2} // cosine never reaches 2: no dense matches
	runs := 0
	for {
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		calls.Store(0)
		res, err := Leakage(ctx, []*ir.Task{task}, []string{path}, opts)
		runs++
		cancel()
		if err == nil {
			var got bytes.Buffer
			res.WriteMatches(&got)
			if got.String() != want.String() {
				t.Fatalf("resumed run's matches differ from an uninterrupted run's")
			}
			if err := res.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := filepath.Glob(filepath.Join(state, "*")); len(left) > 0 {
				t.Errorf("state left after Close: %q", left)
			}
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		ckFiles, _ := filepath.Glob(filepath.Join(state, "*", checkpointFile))
		if len(ckFiles) != 1 {
			t.Fatalf("checkpoints %q, want one", ckFiles)
		}
		ck, rerr := os.ReadFile(ckFiles[0])
		if rerr != nil {
			t.Fatal(rerr)
		}
		var kept struct{ State checkpoint } // reuse.Checkpoint's file
		json.Unmarshal(ck, &kept)
		c := kept.State
		if c.Files[0].Done || c.Files[0].Rows >= int64(n) {
			t.Fatalf("an interrupted file is marked done (%+v)", c.Files[0])
		}
		// A crash can leave matches written after the last checkpoint,
		// even half a line: the next run must drop them.
		mf, err := os.OpenFile(filepath.Join(filepath.Dir(ckFiles[0]), matchesFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		mf.WriteString(`{"task":"demo","benchmark_kind":"query","benchmark_id":"q1","train_file":"x","tra`)
		mf.Close()
		if runs > 100 {
			t.Fatal("never finished")
		}
	}
	if runs < 3 {
		t.Errorf("the run was interrupted %d times, want several", runs-1)
	}
}

// Dense matching goes through the embedder: a fake one that maps texts
// about the same topic to the same vector finds a paraphrase MinHash
// cannot.
func TestLeakageDense(t *testing.T) {
	task := &ir.Task{Name: "t",
		Corpus:  []ir.Doc{{ID: "d1", Text: "Metformin is the first drug for type 2 diabetes."}, {ID: "d2", Text: "Unrelated text about bones."}},
		Queries: []ir.Query{{ID: "q1", Text: "Which drug first for new type 2 diabetes?"}},
		Qrels:   ir.Qrels{"q1": {"d1": 1, "d2": 0}},
	}
	emb := embed.Func(func(_ context.Context, _ embed.Input, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, s := range texts {
			s = strings.ToLower(s)
			switch {
			case strings.Contains(s, "metformin") || strings.Contains(s, "biguanide"):
				out[i] = []float32{1, 0, 0.1}
			case strings.Contains(s, "diabetes"):
				out[i] = []float32{0, 1, 0.1}
			default:
				out[i] = []float32{0, 0, 1}
			}
		}
		return out, nil
	})
	path := filepath.Join(t.TempDir(), "train.jsonl")
	os.WriteFile(path, []byte(`{"query":"A biguanide is the usual first medicine in adult-onset diabetes","positive":"Which drug first for new type 2 diabetes?"}`+"\n"), 0o644)
	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{Dense: &Dense{Embedder: emb, Model: "fake", Threshold: 0.99}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var got []string
	res.Matches(func(m Match) error {
		got = append(got, fmt.Sprintf("%s:%s %s/%s %s %.2f", m.BenchmarkKind, m.BenchmarkID, m.TrainRole, m.TrainField, m.Match, m.Similarity))
		return nil
	})
	want := []string{"document:d1 query/query dense 1.00", "query:q1 positive/positive exact 1.00"}
	if !slices.Equal(got, want) {
		t.Errorf("matches %q, want %q", got, want)
	}
	tl := res.Report.Tasks[0]
	if tl.Pairs != 1 || tl.Queries.Exact != 1 || tl.Documents.Dense != 1 || res.Report.Settings.DenseModel != "fake" {
		t.Errorf("report %+v", tl)
	}
	// Each training text is compared with its 10 nearest benchmark texts
	// only: the report says so, where it said nothing of the cap.
	var b bytes.Buffer
	res.Report.WriteTable(&b)
	page, _ := (&File{Leakage: res.Report}).Section("x")
	note := "among the 10 benchmark texts nearest each training text"
	if res.Report.Settings.DenseTopK != 10 || !strings.Contains(strings.Join(strings.Fields(b.String()), " "), note) || !strings.Contains(string(page), note) {
		t.Errorf("top k %d; want %q in the table and the page:\n%s", res.Report.Settings.DenseTopK, note, b.String())
	}
}

// demoAndTrain is the demo task and a one-line training file in a
// temporary directory.
func demoAndTrain(t *testing.T) (*ir.Task, string) {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "train.jsonl")
	if err := os.WriteFile(path, []byte(`{"query":"q","pos":["p"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return task, path
}

// TestLeakageFileGivenTwice: one training file named twice (the same path,
// or another path to it) is refused, where it was read twice, its matches
// written twice and its rows counted twice in the report.
func TestLeakageFileGivenTwice(t *testing.T) {
	task, path := demoAndTrain(t)
	dir := filepath.Dir(path)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, files := range [][]string{{path, path}, {path, filepath.Join(dir, ".", "train.jsonl")}, {path, link}} {
		_, err := Leakage(context.Background(), []*ir.Task{task}, files, LeakageOptions{State: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("%v: %v, want an error saying the file is given twice", files, err)
		}
	}
}

// TestLeakageTableShareOfNothing: with no documents audited (--documents
// none, or a task without positives) the share is not a number; the
// table said 0.0%, as if every document had been checked and found clean.
func TestLeakageTableShareOfNothing(t *testing.T) {
	r := &LeakageReport{Tasks: []TaskLeakage{{Task: "t", Queries: Contamination{Total: 4, Contaminated: 1, Share: 0.25}, Judgments: new(int)}}}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "t ") {
			row = l
		}
	}
	f := strings.Fields(row)
	if len(f) != 11 || f[3] != "25.0%" || f[5] != "0" || f[7] != "—" || f[9] != "—" {
		t.Errorf("row %q; want queries 25.0%% and the documents' share and pairs —", row)
	}
}

// TestJSONArrayRecordsOnOneLine: the records of a JSON array written on one
// line are distinct records. The report took every match on one line for
// one record, so a query in one record and its relevant document in
// another counted as a pair; and a resumed run skipped the rest of the
// line after a checkpoint.
func TestJSONArrayRecordsOnOneLine(t *testing.T) {
	task := &ir.Task{Name: "t",
		Corpus:  []ir.Doc{{ID: "d1", Text: "alpha beta gamma delta epsilon zeta eta theta iota kappa"}},
		Queries: []ir.Query{{ID: "q1", Text: "why do insects fly toward lamps at night"}},
		Qrels:   ir.Qrels{"q1": {"d1": 1}}}
	var recs []string
	for i := range 40 {
		recs = append(recs, fmt.Sprintf(`{"query":"filler %d","pos":["nothing %d"]}`, i, i))
	}
	recs = append(recs, `{"query":"Why do insects fly toward lamps at night?","pos":["zzz"]}`,
		`{"query":"unrelated","pos":["ALPHA beta gamma delta epsilon zeta eta theta iota kappa"]}`)
	path := filepath.Join(t.TempDir(), "train.json")
	if err := os.WriteFile(path, []byte("["+strings.Join(recs, ",")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{512, 7} {
		res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{State: t.TempDir(), ChunkRows: chunk})
		if err != nil {
			t.Fatal(err)
		}
		tl := res.Report.Tasks[0]
		if tl.Queries.Contaminated != 1 || tl.Documents.Contaminated != 1 || tl.Pairs != 0 {
			t.Errorf("chunks of %d: queries %d, documents %d, pairs %d; want 1, 1 and no pair (query and document are in two records)",
				chunk, tl.Queries.Contaminated, tl.Documents.Contaminated, tl.Pairs)
		}
		var elems []int
		res.Matches(func(m Match) error { elems = append(elems, m.TrainElement); return nil })
		if !slices.Equal(elems, []int{41, 42}) {
			t.Errorf("train_element %v, want [41 42]", elems)
		}
		res.Close()
	}
}

// TestLeakageSaysEmptyTexts: benchmark texts with no words after
// normalisation ("???") are in the totals the shares divide by but cannot
// match, and relevant documents the corpus lacks are not audited; the
// table and the page say how many, where they were only in the audit file.
func TestLeakageSaysEmptyTexts(t *testing.T) {
	task := &ir.Task{Name: "t",
		Corpus:  []ir.Doc{{ID: "d1", Text: "!!!"}, {ID: "d2", Text: "alpha beta gamma delta"}},
		Queries: []ir.Query{{ID: "q1", Text: "???"}, {ID: "q2", Text: "what causes scurvy in sailors"}},
		Qrels:   ir.Qrels{"q1": {"d1": 1}, "q2": {"d2": 1, "gone": 1}}} // gone: a relevant document the corpus lacks
	path := filepath.Join(t.TempDir(), "train.jsonl")
	os.WriteFile(path, []byte(`{"query":"What causes scurvy in sailors?","pos":["!!!"]}`+"\n"), 0o644)
	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{State: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	q, d := res.Report.Tasks[0].Queries, res.Report.Tasks[0].Documents
	if q.Total != 2 || q.Empty != 1 || q.Contaminated != 1 || d.Total != 2 || d.Empty != 1 || d.Contaminated != 0 {
		t.Fatalf("queries %+v, documents %+v; want 2 each, 1 empty each, query q2 leaked", q, d)
	}
	var b bytes.Buffer
	if err := res.Report.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	page, err := (&File{Leakage: res.Report}).Section("x")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"t: 1 query and 1 document have no words after normalisation and cannot be audited (counted in the totals and shares)",
		"t: 1 relevant document the corpus lacks was not audited (not in the totals)"} {
		if !strings.Contains(b.String(), want) || !strings.Contains(string(page), want) {
			t.Errorf("want %q in the table and the page:\n%s\n%s", want, b.String(), page)
		}
	}
}

// TestLeakageMissingFileNamed: a training file that is not there is named
// as one ("training file x.jsonl: no such file or directory"), where the
// message was the system call's, "stat x.jsonl: …".
func TestLeakageMissingFileNamed(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "x.jsonl")
	_, err = Leakage(context.Background(), []*ir.Task{task}, []string{missing}, LeakageOptions{State: t.TempDir()})
	if err == nil || err.Error() != "training file "+missing+": no such file or directory" {
		t.Errorf("%v; want the training file named and the cause", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%v does not wrap os.ErrNotExist", err)
	}
}

// TestLeakagePairsOutOfJudgments: pairs are counted out of the judgments
// whose query and relevant document were both audited, which the report
// gives; with no documents audited (--documents none) pairs read —, where
// they read 0 as if every judgment had been checked.
func TestLeakagePairsOutOfJudgments(t *testing.T) {
	task := &ir.Task{Name: "t",
		Corpus:  []ir.Doc{{ID: "d1", Text: "alpha beta gamma delta"}, {ID: "d2", Text: "one two three four"}, {ID: "d3", Text: "red green blue"}},
		Queries: []ir.Query{{ID: "q1", Text: "why do insects fly toward lamps"}, {ID: "q2", Text: "what causes scurvy"}},
		Qrels:   ir.Qrels{"q1": {"d1": 1, "d3": 0}, "q2": {"d2": 2, "d1": 1}}}
	path := filepath.Join(t.TempDir(), "train.jsonl")
	os.WriteFile(path, []byte(`{"query":"Why do insects fly toward lamps?","pos":["Alpha beta gamma delta"]}`+"\n"), 0o644)
	for _, c := range []struct {
		scope            Scope
		judgments, pairs int
		text             string
	}{{Positives, 3, 1, "1"}, {NoDocs, 0, 0, "—"}} {
		res, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{State: t.TempDir(), Documents: c.scope})
		if err != nil {
			t.Fatal(err)
		}
		tl := res.Report.Tasks[0]
		if tl.Judgments == nil || *tl.Judgments != c.judgments || tl.Pairs != c.pairs || tl.PairsText() != c.text {
			t.Errorf("documents %s: pairs %d (%s) of %s judgments; want %d (%s) of %d", c.scope, tl.Pairs, tl.PairsText(), tl.JudgmentsText(), c.pairs, c.text, c.judgments)
		}
		page, err := (&File{Leakage: res.Report}).Section("x")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`<td class="num">%s</td><td class="num">%d</td></tr>`, c.text, c.judgments); !strings.Contains(string(page), want) {
			t.Errorf("documents %s: the page lacks %s", c.scope, want)
		}
		res.Close()
	}
	// An audit file written before judgments were counted shows its pairs.
	old := TaskLeakage{Task: "t", Pairs: 4}
	if old.PairsText() != "4" || old.JudgmentsText() != "" {
		t.Errorf("an older file's pairs read %q of %q; want 4 of blank", old.PairsText(), old.JudgmentsText())
	}
}

// TestLeakageInterruptedSaysState: an interrupted audit's error names the
// state it keeps for a rerun (r2med says "kept for resuming: DIR"), where
// r2med said no partial files were left behind, as if the work was lost.
func TestLeakageInterruptedSaysState(t *testing.T) {
	task, path := demoAndTrain(t)
	state := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Leakage(ctx, []*ir.Task{task}, []string{path}, LeakageOptions{State: state})
	var ie *InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want an InterruptedError wrapping context.Canceled", err)
	}
	if _, serr := os.Stat(filepath.Join(ie.State, checkpointFile)); serr != nil || filepath.Dir(ie.State) != state {
		t.Errorf("state %s under %s: %v; want the run's checkpoint there", ie.State, state, serr)
	}
	// Without a state directory nothing is kept: no InterruptedError, and
	// the temporary state is gone.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if _, err := Leakage(ctx, []*ir.Task{task}, []string{path}, LeakageOptions{}); errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
		t.Errorf("%v; want context.Canceled and nothing said kept", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("%s holds %v after the run failed; want its temporary state removed", tmp, left)
	}
}
