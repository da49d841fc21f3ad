package ir

import (
	"maps"
	"sort"
)

// Exclusions maps a query id to the documents that must not be retrieved
// for it: BRIGHT's per-query excluded_ids (a LeetCode problem's own
// solution, an AoPS or TheoremQA question's own source), or an exclusions
// file for other layouts.
//
// What an exclusion means, for every retriever and every evaluation (the
// rule of BRIGHT's run.py, which pops the excluded ids from each query's
// scores before sorting and cutting, and asserts that no excluded id is
// a gold id):
//
//   - Retrieval: an excluded document is removed from the query's ranking
//     before the cut to k, so the query still gets k hits when the corpus
//     has k other documents; the documents after it move up, in their order.
//   - Evaluation: an excluded (query, document) pair is neither retrieved
//     nor relevant. It is removed from the run (FilterRun) and from the
//     judgments (FilterQrels) before any measure is computed, and the
//     measures are trec_eval's on what is left: ranks are recomputed from
//     the remaining hits, the query's number of relevant documents counts
//     the remaining judgments. Readers refuse a judgment of an excluded
//     pair (BRIGHT asserts the same), so for a task as loaded only the run
//     ever changes.
type Exclusions map[string]map[string]bool

// Add records that docid is excluded for qid; it reports false when it
// already was.
func (e Exclusions) Add(qid, docid string) bool {
	m := e[qid]
	if m == nil {
		m = make(map[string]bool)
		e[qid] = m
	}
	if m[docid] {
		return false
	}
	m[docid] = true
	return true
}

// Excluded reports whether docid is excluded for qid.
func (e Exclusions) Excluded(qid, docid string) bool { return e[qid][docid] }

// Len is the number of excluded (query, document) pairs.
func (e Exclusions) Len() int {
	n := 0
	for _, m := range e {
		n += len(m)
	}
	return n
}

// Max is the largest number of documents excluded for one query: how many
// more hits than k a retriever must rank so that k are left after the
// excluded ones are removed.
func (e Exclusions) Max() int {
	n := 0
	for _, m := range e {
		n = max(n, len(m))
	}
	return n
}

// Filter returns hits without the documents excluded for qid, in their
// order, and how many it removed; hits itself is returned when none is.
func (e Exclusions) Filter(qid string, hits []Hit) ([]Hit, int) {
	ex := e[qid]
	if len(ex) == 0 {
		return hits, 0
	}
	n := 0
	for _, h := range hits {
		if ex[h.DocID] {
			n++
		}
	}
	if n == 0 {
		return hits, 0
	}
	kept := make([]Hit, 0, len(hits)-n)
	for _, h := range hits {
		if !ex[h.DocID] {
			kept = append(kept, h)
		}
	}
	return kept, n
}

// FilterRun returns run without its excluded hits, and how many it removed.
// A query left with no hit is left out, as a run file without its lines
// leaves it out (trec_eval then does not count it, unless -c). run is not
// modified; lists without an excluded hit are shared.
func (e Exclusions) FilterRun(run Run) (Run, int) {
	if len(e) == 0 {
		return run, 0
	}
	out := make(Run, len(run))
	total := 0
	for qid, hits := range run {
		kept, n := e.Filter(qid, hits)
		total += n
		if len(kept) > 0 || n == 0 {
			out[qid] = kept
		}
	}
	return out, total
}

// FilterQrels returns q without the judgments of excluded pairs, and how
// many it removed. q is not modified; a query left with no judgment is left
// out, as trec_eval leaves out a query the qrels do not name. A query that
// had none to begin with (judged, nothing relevant: BRIGHT's empty gold
// lists) stays, as it was.
func (e Exclusions) FilterQrels(q Qrels) (Qrels, int) {
	if len(e) == 0 {
		return q, 0
	}
	out := make(Qrels, len(q))
	total := 0
	for qid, m := range q {
		ex := e[qid]
		kept := m
		for did := range m {
			if !ex[did] {
				continue
			}
			if total++; len(kept) == len(m) { // first removal: copy
				kept = maps.Clone(m)
			}
			delete(kept, did)
		}
		if len(kept) > 0 || len(m) == 0 {
			out[qid] = kept
		}
	}
	return out, total
}

// Sorted lists the documents excluded for qid in byte order.
func (e Exclusions) Sorted(qid string) []string {
	out := make([]string, 0, len(e[qid]))
	for d := range e[qid] {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
