// Package synth generates synthetic retrieval tasks shaped like R2MED's eight
// tasks — same document and query counts, text lengths and positives per
// query — for benchmarking indexing and retrieval at full scale without the
// real data. The text is English-like noise over a Zipfian vocabulary with a
// planted relevance structure that makes lexical retrieval work only in part,
// so metrics land in the range real systems score on R2MED.
package synth

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/r2med/r2med/ir"
)

// TaskSpec describes the shape of one task. QueryChars and DocChars are mean
// lengths in characters.
type TaskSpec struct {
	Name              string
	Docs, Queries     int
	QueryChars        int
	DocChars          int
	PositivesPerQuery float64
}

// R2MEDSpecs returns the eight R2MED tasks in R2MED's order. Counts are the
// full corpora (R2MED README); lengths and positives per query come from the
// NanoR2MED task cards (text_stats_chars, positives_per_query.average), the
// only published per-task length statistics.
func R2MEDSpecs() []TaskSpec {
	return []TaskSpec{
		{"Biology", 57359, 103, 523, 474, 3.631068},
		{"Bioinformatics", 47473, 77, 890, 667, 2.935065},
		{"Medical-Sciences", 34810, 88, 478, 679, 2.772727},
		{"MedXpertQA-Exam", 61379, 97, 928, 724, 3.010309},
		{"MedQA-Diag", 56250, 118, 707, 791, 4.423729},
		{"PMC-Treatment", 28954, 150, 1756, 727, 2.1},
		{"PMC-Clinical", 60406, 114, 828, 2103, 2.175439},
		{"IIYi-Clinical", 10449, 129, 2584, 5042, 3.542636},
	}
}

// Scale shrinks (or grows) the document and query counts by f, keeping at
// least one of each; lengths and positives per query are unchanged so a
// scaled task still exercises the same text shapes.
func (s TaskSpec) Scale(f float64) TaskSpec {
	s.Docs = scaleCount(s.Docs, f)
	s.Queries = scaleCount(s.Queries, f)
	return s
}

func scaleCount(n int, f float64) int {
	m := int(math.Round(float64(n) * f))
	if m < 1 {
		m = 1
	}
	return m
}

// Relevance model. Each query owns a topic of four small word sets A–D:
// the query draws its topical words from A∪B, its relevant documents from
// B∪C, and its hard negatives from A∪D. Relevant documents therefore share
// only part of the query's vocabulary (some barely any, as when relevance
// rests on an implied diagnosis), while hard negatives match the query about
// as well — which is what keeps BM25 in R2MED's nDCG@10 range instead of
// near 1.
const (
	topicSetSize = 8
	// Fractions of tokens drawn from the topic rather than the background,
	// for a text of topicRefChars; longer texts get proportionally fewer
	// (∝ 1/√length) so that topical evidence grows with length only as
	// √length, as in real text, where a 5,000-character case report does
	// not repeat its key terms ten times more often than an abstract does.
	queryTopic    = 0.10
	docTopic      = 0.15
	topicRefChars = 600
	// A positive takes between posBMin and posBMax of its topical tokens
	// from B (shared with the query), the rest from C.
	posBMin, posBMax = 0.3, 0.8
	// Share of a hard negative's topical tokens drawn from A.
	negA = 0.5
	// Hard negatives per positive.
	hardPerPos = 2
	// Topic words are drawn log-uniformly from these ranks: frequent enough
	// to recur, rare enough to carry IDF.
	topicMinRank = 300
	// Spread of log length: σ of the log-normal around the mean.
	docSigma   = 0.5
	querySigma = 0.4
	minChars   = 24
	// Documents per generation chunk; each chunk has its own random stream,
	// so output does not depend on how chunks are spread over goroutines.
	chunkDocs = 256
)

// Stream identifiers for derive.
const (
	streamTopics = iota + 1
	streamRoles
	streamQueries
	streamDocs
)

// role of a document: background (-1) or q<<1 | kind for query q.
const (
	rolePositive = 0
	roleHardNeg  = 1
	roleNone     = -1
)

type topic struct {
	a, b, c, d []int32
	positives  int
}

// Generate builds a task from spec. The same spec and seed always give the
// same task, byte for byte, regardless of GOMAXPROCS. Each query has at
// least one relevant document as long as Docs ≥ Queries.
func Generate(spec TaskSpec, seed int64) *ir.Task {
	v := getVocab()
	nd, nq := max(spec.Docs, 0), max(spec.Queries, 0)
	base := uint64(seed) ^ hashString(spec.Name)

	tr := derive(base, streamTopics)
	topics := make([]topic, nq)
	for i := range topics {
		t := &topics[i]
		t.a = topicWords(&tr, v)
		t.b = topicWords(&tr, v)
		t.c = topicWords(&tr, v)
		t.d = topicWords(&tr, v)
		t.positives = 1 + tr.poisson(spec.PositivesPerQuery-1)
	}

	// Roles go to documents in a random order: first one positive per query
	// (so every query is answerable), then the remaining positives, then
	// hard negatives, each only while documents last.
	rr := derive(base, streamRoles)
	perm := make([]int32, nd)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := nd - 1; i > 0; i-- {
		j := rr.intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	roles := make([]int32, nd)
	for i := range roles {
		roles[i] = roleNone
	}
	next := 0
	// assign gives the next free document the role, or reports -1 when the
	// corpus is used up.
	assign := func(q, kind int) int32 {
		if next >= nd {
			return -1
		}
		d := perm[next]
		roles[d] = int32(q<<1 | kind)
		next++
		return d
	}
	posDocs := make([][]int32, nq)
	for q := range topics {
		if d := assign(q, rolePositive); d >= 0 {
			posDocs[q] = append(posDocs[q], d)
		}
	}
	for q := range topics {
		for k := 1; k < topics[q].positives; k++ {
			if d := assign(q, rolePositive); d >= 0 {
				posDocs[q] = append(posDocs[q], d)
			}
		}
	}
	for q := range topics {
		for k := 0; k < hardPerPos*topics[q].positives; k++ {
			assign(q, roleHardNeg)
		}
	}

	task := &ir.Task{
		Name:    spec.Name,
		Layout:  ir.LayoutR2MED,
		Corpus:  make([]ir.Doc, nd),
		Queries: make([]ir.Query, nq),
		Qrels:   make(ir.Qrels, nq),
	}
	for q, docs := range posDocs {
		qid := queryID(q)
		for _, d := range docs {
			task.Qrels.Add(qid, docID(d), 1)
		}
	}

	qr := derive(base, streamQueries)
	var buf []byte
	for q := range task.Queries {
		t := &topics[q]
		n := lengthOf(&qr, spec.QueryChars, querySigma)
		m := mixture{topic: topicShare(queryTopic, n), first: prob(0.5), a: t.a, b: t.b}
		buf = appendText(buf[:0], &qr, v, &m, n)
		task.Queries[q] = ir.Query{ID: queryID(q), Text: string(buf)}
	}

	generateDocs(task.Corpus, roles, topics, spec.DocChars, base, v)
	return task
}

func generateDocs(out []ir.Doc, roles []int32, topics []topic, meanChars int, base uint64, v *vocab) {
	chunks := (len(out) + chunkDocs - 1) / chunkDocs
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var nextChunk atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			var ends []int
			for {
				c := int(nextChunk.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo, hi := c*chunkDocs, min((c+1)*chunkDocs, len(out))
				r := derive(base, streamDocs, uint64(c))
				buf, ends = buf[:0], ends[:0]
				// Ids and texts of a chunk share one allocation: half a
				// million small strings would otherwise dominate GC work.
				for i := lo; i < hi; i++ {
					buf = appendDocID(buf, i)
					ends = append(ends, len(buf))
					n := lengthOf(&r, meanChars, docSigma)
					m := docMixture(&r, roles[i], topics, n)
					buf = appendText(buf, &r, v, &m, n)
					ends = append(ends, len(buf))
				}
				s := string(buf)
				start := 0
				for i := lo; i < hi; i++ {
					k := 2 * (i - lo)
					out[i] = ir.Doc{ID: s[start:ends[k]], Text: s[ends[k]:ends[k+1]]}
					start = ends[k+1]
				}
			}
		}()
	}
	wg.Wait()
}

func docMixture(r *rng, role int32, topics []topic, chars int) mixture {
	if role == roleNone {
		return mixture{}
	}
	t := &topics[role>>1]
	p := topicShare(docTopic, chars)
	if role&1 == roleHardNeg {
		return mixture{topic: p, first: prob(negA), a: t.a, b: t.d}
	}
	pb := posBMin + (posBMax-posBMin)*r.float()
	return mixture{topic: p, first: prob(pb), a: t.b, b: t.c}
}

// topicShare scales a topical fraction for a text of the given length.
func topicShare(base float64, chars int) uint16 {
	if chars > topicRefChars {
		base *= math.Sqrt(topicRefChars / float64(chars))
	}
	return max(prob16(base), 1)
}

// topicWords draws a set of distinct ranks log-uniformly over
// [topicMinRank, vocab size).
func topicWords(r *rng, v *vocab) []int32 {
	lo, hi := math.Log(topicMinRank), math.Log(float64(v.size()))
	out := make([]int32, 0, topicSetSize)
	for len(out) < topicSetSize {
		w := int32(math.Exp(lo + (hi-lo)*r.float()))
		if int(w) >= v.size() || containsWord(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func containsWord(s []int32, w int32) bool {
	for _, x := range s {
		if x == w {
			return true
		}
	}
	return false
}

func lengthOf(r *rng, mean int, sigma float64) int {
	if mean < minChars {
		return max(mean, 1)
	}
	return max(int(r.logNormal(float64(mean), sigma)+0.5), minChars)
}

func queryID(q int) string { return "q" + string(appendUint(nil, uint64(q+1))) }

func docID(d int32) string { return string(appendDocID(nil, int(d))) }

func appendDocID(b []byte, d int) []byte { return appendUint(append(b, 'd'), uint64(d)) }

// hashString is FNV-1a, so tasks generated with the same seed differ.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
