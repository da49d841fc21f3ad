package rerank

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/measure"
)

// e2eDepth keeps the demo's reranking small and still slides two windows
// per query (positions 10–30, then 0–20).
const e2eDepth = 30

// overlapRun is a first stage for the demo task: each document scored by
// the distinct query words (longer than three letters) it contains,
// damped by its length, so scores have many digits and few ties.
func overlapRun(task *ir.Task) ir.Run {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
	}
	run := ir.Run{}
	for _, q := range task.Queries {
		qw := map[string]bool{}
		for _, w := range words(q.Text) {
			if len(w) > 3 {
				qw[w] = true
			}
		}
		var hits []ir.Hit
		for _, d := range task.Corpus {
			dw := words(d.Text)
			seen := map[string]bool{}
			for _, w := range dw {
				if qw[w] {
					seen[w] = true
				}
			}
			hits = append(hits, ir.Hit{DocID: d.ID, Score: float64(len(seen)) * 1.37 / (1 + float64(len(dw))/100)})
		}
		slices.SortStableFunc(hits, func(a, b ir.Hit) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return strings.Compare(a.DocID, b.DocID)
		})
		run[q.ID] = hits[:e2eDepth]
	}
	return run
}

var listedPassage = regexp.MustCompile(`(?m)^\[(\d+)\] (?:\(retriever score: ([^)]*)\) )?(.*)$`)

// oracle is a scripted reasoning LLM that knows the demo's judgments: it
// finds the query and the passages in a prompt, reasons in a few words
// and ranks (or judges) by the qrels' grades.
type oracle struct {
	task  *ir.Task
	byDoc map[string]string // passage as a prompt shows it → doc id
	// shown records, for insertrank, the score each prompt showed per
	// query and document.
	mu    sync.Mutex
	shown map[[2]string][]string
	fail  string // a query id the oracle refuses (HTTP 400)
}

func (o *oracle) refuse(qid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fail = qid
}

func newOracle(task *ir.Task) *oracle {
	o := &oracle{task: task, byDoc: map[string]string{}, shown: map[[2]string][]string{}}
	for _, d := range task.Corpus {
		o.byDoc[oneLine(d.Text, 0)] = d.ID
		o.byDoc[truncateWords(d.Text, 0)] = d.ID
	}
	return o
}

func (o *oracle) query(prompt string) string {
	for _, q := range o.task.Queries {
		if strings.Contains(prompt, "Query: "+q.Text+"\n") {
			return q.ID
		}
	}
	return ""
}

func (o *oracle) answer(kind string, req chatReq) reply {
	u := lastUser(req)
	if kind == KindDiver { // its two rerankers, rank1 and reasonrank by default
		kind = KindReasonRank
		if strings.Contains(u, "\nPassage: ") {
			kind = KindRank1
		}
	}
	qid := o.query(u)
	if qid == "" {
		return reply{Status: 500}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if qid == o.fail {
		return reply{Status: 400}
	}
	grade := o.task.Qrels[qid]
	if kind == KindRank1 {
		doc := o.byDoc[u[strings.Index(u, "\nPassage: ")+len("\nPassage: "):]]
		pt := []float64{0.1, 0.7, 0.9}[grade[doc]]
		word, lp := "true", math.Log(pt)
		if pt < 0.5 {
			word, lp = "false", math.Log(1-pt)
		}
		return reply{
			Reasoning: fmt.Sprintf("The query asks about %s; the passage %s.", qid, []string{"does not bear on it", "touches on it", "answers it"}[grade[doc]]),
			Content:   word,
			Logprobs: []llm.TokenLogprob{{Token: word, Logprob: lp, Top: []llm.TopLogprob{
				{Token: "true", Logprob: math.Log(pt)}, {Token: "false", Logprob: math.Log(1 - pt)}}}},
		}
	}
	var docs []string
	for _, m := range listedPassage.FindAllStringSubmatch(u, -1) {
		doc := o.byDoc[m[3]]
		docs = append(docs, doc)
		if kind == KindInsertRank {
			k := [2]string{qid, doc}
			o.shown[k] = append(o.shown[k], m[2])
		}
	}
	if kind == KindGroupRank {
		// Scores on the absolute scale, by grade: the same wherever the
		// passage is shown.
		parts := make([]string, len(docs))
		for i, d := range docs {
			parts[i] = fmt.Sprintf(`"[%d]": %d`, i+1, []int{1, 6, 9}[grade[d]])
		}
		return reply{Reasoning: fmt.Sprintf("For %s, the passages that answer it score high.", qid),
			Content: "<answer>\n```json\n{" + strings.Join(parts, ", ") + "}\n```\n</answer>"}
	}
	idx := make([]int, len(docs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return grade[docs[b]] - grade[docs[a]] })
	parts := make([]string, len(idx))
	for i, j := range idx {
		parts[i] = fmt.Sprintf("[%d]", j+1)
	}
	ranking := strings.Join(parts, " > ")
	reasoning := fmt.Sprintf("Passage [%d] fits %s best.", idx[0]+1, qid)
	if kind == KindReasonRank {
		return reply{Reasoning: reasoning, Content: "<answer>" + ranking + "</answer>"}
	}
	return reply{Reasoning: reasoning, Content: ranking}
}

// costExample is what the recipes' README cost examples are computed from.
type costExample struct {
	Queries          int   `json:"queries"`
	Depth            int   `json:"depth"`
	Calls            int64 `json:"calls"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// TestJobReasoningRerankersDemo reranks the demo task's first-stage run
// with each reasoning reranker (and a diver merge of rank1 and
// reasonrank) through Job — the path of r2med rerank and the pipeline —
// against a scripted loopback server that knows the judgments: the
// rerank lifts nDCG@10, every InsertRank prompt shows each passage with
// exactly its first-stage score, the reasoning lands in the trace file
// beside the checkpoint (a merge's part by part, with its own account),
// and a second run with the same cache makes zero requests and gives the
// same run. The token counts feed the README's cost examples
// (testdata/cost_example.json, -update rewrites).
func TestJobReasoningRerankersDemo(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	first := overlapRun(task)
	before, err := measure.EvaluateR2MED(task.Qrels, first)
	if err != nil {
		t.Fatal(err)
	}
	costs := map[string]costExample{}
	for _, kind := range append(slices.Clone(templated), KindDiver) {
		t.Run(kind, func(t *testing.T) {
			o := newOracle(task)
			srv := newScripted(t, func(req chatReq) reply { return o.answer(kind, req) })
			dir := t.TempDir()
			store, err := cache.Open(filepath.Join(dir, "cache"), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			job := func(checkpoint string) (ir.Run, Stats) {
				s, err := New(Spec{Kind: kind, Model: "scripted-r1", BaseURL: srv.URL + "/v1", LLMCache: store, HTTP: fastClient()})
				if err != nil {
					t.Fatal(err)
				}
				j := Job{Task: task, Run: first, Scorer: s, Options: Options{Depth: e2eDepth, Workers: 3}, Checkpoint: checkpoint, Key: kind}
				out, _, err := j.Do(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return out, s.(interface{ Stats() Stats }).Stats()
			}
			os.MkdirAll(filepath.Join(dir, "a"), 0o755)
			os.MkdirAll(filepath.Join(dir, "b"), 0o755)
			cp := filepath.Join(dir, "a", "run.trec.partial")
			out, st := job(cp)
			asked := srv.calls.Load()
			if asked == 0 || st.Calls != int64(asked) || st.Cached != 0 {
				t.Fatalf("%d requests, stats %+v", asked, st)
			}
			after, err := measure.EvaluateR2MED(task.Qrels, out)
			if err != nil {
				t.Fatal(err)
			}
			if b, a := before.Scores["ndcg_at_10"], after.Scores["ndcg_at_10"]; a <= b {
				t.Errorf("nDCG@10 %v after the rerank, %v before", a, b)
			}
			// The reasoning of every query is in the trace file.
			traced := readTraces(t, TraceFile(cp))
			for _, q := range task.Queries {
				want := 2 // windows
				switch kind {
				case KindRank1:
					want = e2eDepth
				case KindGroupRank:
					want = DefaultRepeats * e2eDepth / DefaultGroupSize
				case KindDiver: // rank1's, reasonrank's, the merge's
					want = e2eDepth + 2 + 1
				}
				if n := len(traced[q.ID]); n != want {
					t.Errorf("%s: %d traces, want %d", q.ID, n, want)
				}
				if kind == KindDiver && !slices.IsSortedFunc(traced[q.ID], func(a, b Trace) int { return partOrder(a.Part) - partOrder(b.Part) }) {
					t.Errorf("%s: a merge's traces not written part by part", q.ID)
				}
				for _, tr := range traced[q.ID] {
					if tr.Part == MergeTrace {
						if len(tr.Merged) != e2eDepth {
							t.Errorf("%s: the merge's trace %+v", q.ID, tr)
						}
						continue
					}
					if !strings.Contains(tr.Reasoning, q.ID) {
						t.Errorf("%s: trace without the reasoning: %+v", q.ID, tr)
						break
					}
				}
			}
			if kind == KindInsertRank {
				checkShownScores(t, o, first)
			}
			costs[kind] = costExample{Queries: len(task.Queries), Depth: e2eDepth, Calls: st.Calls, PromptTokens: st.PromptTokens, CompletionTokens: st.CompletionTokens}

			// Again, afresh (another checkpoint), with the same cache: no
			// request, the same run, every answer counted from the cache.
			again, st2 := job(filepath.Join(dir, "b", "run.trec.partial"))
			if n := srv.calls.Load() - asked; n != 0 {
				t.Errorf("the second run made %d requests", n)
			}
			if !reflect.DeepEqual(again, out) {
				t.Error("the second run differs from the first")
			}
			if st2.Cached != st.Calls || st2.PromptTokens != st.PromptTokens {
				t.Errorf("second run stats %+v, first %+v", st2, st)
			}
			if b1, b2 := readFile(t, TraceFile(cp)), readFile(t, filepath.Join(dir, "b", "run.trec.trace.jsonl")); len(b1) == 0 || !sameLines(b1, b2) {
				t.Error("the second run's traces differ from the first's")
			}
		})
	}
	golden := filepath.Join("testdata", "cost_example.json")
	got, _ := json.MarshalIndent(costs, "", "  ")
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := readFile(t, golden); !bytes.Equal(got, want) {
		t.Errorf("%s (quoted in README's cost examples) differs from this run:\n%s", golden, got)
	}
}

// checkShownScores: each (query, document) of the reranked head was shown
// in InsertRank's prompts with exactly its first-stage score, in every
// window it appeared in, printed with the digits its query's scores share:
// two decimals, or more where two would show different first-stage scores
// of the query alike (the demo's BM25 has 7.1728 and 7.1686).
func checkShownScores(t *testing.T, o *oracle, first ir.Run) {
	t.Helper()
	n := 0
	for qid, hits := range first {
		digits := -1
		byShown := map[string]float64{}
		for _, h := range hits {
			shown := o.shown[[2]string{qid, h.DocID}]
			if len(shown) == 0 {
				t.Errorf("%s %s was never shown", qid, h.DocID)
			}
			for _, s := range shown {
				_, frac, _ := strings.Cut(s, ".")
				if digits < 0 {
					digits = len(frac)
				}
				if want := strconv.FormatFloat(h.Score, 'f', digits, 64); s != want || digits < 2 {
					t.Errorf("%s %s shown with score %s, its first-stage score is %v (%s with the query's %d digits)", qid, h.DocID, s, h.Score, want, digits)
				}
				if other, ok := byShown[s]; ok && other != h.Score {
					t.Errorf("%s: first-stage scores %v and %v both shown as %s", qid, other, h.Score, s)
				}
				byShown[s] = h.Score
			}
			n += len(shown)
		}
	}
	if n != 40*len(first) { // two windows of 20
		t.Errorf("%d passages shown for %d queries", n, len(first))
	}
}

func readTraces(t *testing.T, path string) map[string][]Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]Trace{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var tr Trace
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[tr.QueryID] = append(out[tr.QueryID], tr)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameLines compares two JSON-lines files as sets of lines (queries finish
// in any order with several workers).
func sameLines(a, b []byte) bool {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	slices.Sort(la)
	slices.Sort(lb)
	return slices.Equal(la, lb)
}

// TestJobReasoningResume interrupts a reasonrank job (the server refuses
// one query), then resumes it: only the unfinished queries are asked
// again, each query's traces are in the file once, and the result is that
// of an uninterrupted run.
func TestJobReasoningResume(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	first := overlapRun(task)
	qids := make([]string, 0, len(first))
	for q := range first {
		qids = append(qids, q)
	}
	slices.Sort(qids)
	o := newOracle(task)
	o.refuse(qids[5]) // queries run in id order with one worker
	srv := newScripted(t, func(req chatReq) reply { return o.answer(KindReasonRank, req) })
	dir := t.TempDir()
	store := &llm.MemoryStore{}
	cp := filepath.Join(dir, "out.partial")
	do := func() (ir.Run, Resume, error) {
		s, err := New(Spec{Kind: KindReasonRank, Model: "m", BaseURL: srv.URL + "/v1", LLMCache: store, HTTP: fastClient()})
		if err != nil {
			t.Fatal(err)
		}
		return Job{Task: task, Run: first, Scorer: s, Options: Options{Depth: e2eDepth}, Checkpoint: cp, Key: "k"}.Do(context.Background())
	}
	if _, _, err := do(); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("interrupted job: %v", err)
	}
	if got := len(readTraces(t, TraceFile(cp))); got != 5 {
		t.Errorf("traces of %d queries after the interruption, want the 5 finished", got)
	}
	o.refuse("")
	before := srv.calls.Load()
	out, res, err := do()
	if err != nil {
		t.Fatal(err)
	}
	// The refused query and the nine after it, two windows each.
	if res.Done != 5 || srv.calls.Load()-before != 2*10 {
		t.Errorf("resumed %d queries with %d requests", res.Done, srv.calls.Load()-before)
	}
	traced := readTraces(t, TraceFile(cp))
	for _, q := range qids {
		if len(traced[q]) != 2 {
			t.Errorf("%s: %d traces, want 2", q, len(traced[q]))
		}
	}
	whole, _, err := Job{Task: task, Run: first, Scorer: mustNew(t, Spec{Kind: KindReasonRank, Model: "m", BaseURL: srv.URL + "/v1", LLMCache: store}), Options: Options{Depth: e2eDepth}}.Do(context.Background())
	if err != nil || !reflect.DeepEqual(whole, out) {
		t.Errorf("resumed run differs from an uninterrupted one (%v)", err)
	}
}

func mustNew(t *testing.T, spec Spec) Scorer {
	s, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
