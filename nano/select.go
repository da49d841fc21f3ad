package nano

import (
	"errors"
	"slices"
	"strings"
	"unicode"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// pyStrip is Python's str.strip(): Unicode white space, which is Go's plus
// the four ASCII separators U+001C–U+001F.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}

// judgment is one qrels row.
type judgment struct {
	qid, doc string
	grade    int
}

// qrelsRows lays the qrels out in the row order selection uses (see the
// package comment): queries in query-file order, then any other judged
// queries by id; documents of a query by id.
func qrelsRows(task *ir.Task) []judgment {
	var order []string
	seen := make(map[string]bool, len(task.Qrels))
	for _, q := range task.Queries {
		if _, judged := task.Qrels[q.ID]; judged && !seen[q.ID] {
			seen[q.ID] = true
			order = append(order, q.ID)
		}
	}
	for _, qid := range trec.QueryIDs(task.Qrels) {
		if !seen[qid] {
			order = append(order, qid)
		}
	}
	rows := make([]judgment, 0, task.Qrels.Len())
	for _, qid := range order {
		for _, doc := range trec.QueryIDs(task.Qrels[qid]) {
			rows = append(rows, judgment{qid, doc, task.Qrels[qid][doc]})
		}
	}
	return rows
}

// selectSet does the query, document and qrels selection.
func selectSet(task *ir.Task, o Options) (*Set, error) {
	s := &Set{Split: o.Split, Source: task.Name, opts: o}
	s.opts.Dense = nil // the dense subset keeps what is needed of it
	sel := &s.Selection

	var positives, negatives []judgment
	for _, j := range qrelsRows(task) {
		if j.grade > 0 {
			positives = append(positives, j)
		} else {
			negatives = append(negatives, j)
		}
	}
	sel.SourcePositiveQrels, sel.SourceNonPositiveQrels = len(positives), len(negatives)
	hasPositive := make(map[string]bool)
	for _, j := range positives {
		hasPositive[j.qid] = true
	}

	// Queries.
	sel.SourceQueries = len(task.Queries)
	kept := make(map[string]bool)
	texts := make(map[string]bool)
	for _, q := range task.Queries {
		text := pyStrip(q.Text)
		switch {
		case q.ID == "" || text == "":
			sel.SkippedEmptyQueries++
			continue
		case !hasPositive[q.ID]:
			sel.SkippedWithoutPositives++
			continue
		case kept[q.ID]:
			sel.SkippedDuplicateQueryIDs++
			continue
		case !o.KeepDuplicateTexts && texts[text]:
			sel.SkippedDuplicateQueries++
			continue
		}
		s.Queries = append(s.Queries, ir.Query{ID: q.ID, Text: text})
		kept[q.ID] = true
		texts[text] = true
		if len(s.Queries) >= o.QueryLimit {
			break
		}
	}
	var selected []judgment
	for _, j := range positives {
		if kept[j.qid] {
			selected = append(selected, j)
		}
	}

	s.selectCorpus(task.Corpus, selected, roundRobin(negatives, kept), o)

	// Qrels of kept documents, then queries that still have some.
	inCorpus := make(map[string]bool, len(s.Corpus))
	for _, d := range s.Corpus {
		inCorpus[d.ID] = true
	}
	selected = slices.DeleteFunc(selected, func(j judgment) bool { return !inCorpus[j.doc] })
	judged := make(map[string]bool)
	for _, j := range selected {
		judged[j.qid] = true
	}
	n := len(s.Queries)
	s.Queries = slices.DeleteFunc(s.Queries, func(q ir.Query) bool { return !judged[q.ID] })
	sel.RemovedQueriesNoQrels = n - len(s.Queries)
	if len(s.Queries) == 0 || len(s.Corpus) == 0 || len(selected) == 0 {
		return nil, errors.New("nano: the selection holds no query with a positive judgment on a kept document")
	}

	s.Qrels = make(ir.Qrels)
	perQuery := make(map[string]int)
	for _, j := range selected {
		if perQuery[j.qid] >= o.CandidateDepth {
			sel.RemovedQrelsOverCap++
			continue
		}
		perQuery[j.qid]++
		s.Qrels.Add(j.qid, j.doc, j.grade)
	}
	return s, nil
}

// roundRobin orders the non-positive judgments of kept queries: the first of
// each query (queries by id), then the second of each, and so on.
func roundRobin(negatives []judgment, kept map[string]bool) []string {
	byQuery := make(map[string][]string)
	for _, j := range negatives {
		if kept[j.qid] {
			byQuery[j.qid] = append(byQuery[j.qid], j.doc)
		}
	}
	qids := trec.QueryIDs(byQuery)
	var out []string
	for i := 0; ; i++ {
		added := false
		for _, qid := range qids {
			if docs := byQuery[qid]; i < len(docs) {
				out = append(out, docs[i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// selectCorpus keeps positives, then hard negatives, then the head of the
// source corpus, as _select_corpus does.
func (s *Set) selectCorpus(corpus []ir.Doc, positives []judgment, negatives []string, o Options) {
	sel := &s.Selection
	sel.SourceDocs = len(corpus)
	wanted := make(map[string]bool)
	for _, j := range positives {
		wanted[j.doc] = true
	}
	posDocs := len(wanted)
	negSet := make(map[string]bool)
	for _, d := range negatives {
		wanted[d] = true
		negSet[d] = true
	}
	sel.PositiveDocs, sel.HardNegativeCandidates = posDocs, len(negSet)
	sel.FillScanLimit = max(3*o.DocLimit, o.DocLimit+len(wanted))

	// One pass over the source: the first non-empty copy of each wanted
	// document, and the fill candidates.
	wantedDocs := make(map[string]ir.Doc)
	var fill []ir.Doc
	for _, d := range corpus {
		text := pyStrip(d.Text)
		if d.ID == "" || text == "" {
			sel.SkippedEmptyDocs++
			continue
		}
		doc := ir.Doc{ID: d.ID, Text: text}
		if wanted[d.ID] {
			if _, have := wantedDocs[d.ID]; !have {
				wantedDocs[d.ID] = doc
			}
		}
		if len(fill) < sel.FillScanLimit {
			fill = append(fill, doc)
		}
	}

	keptIDs := make(map[string]bool)
	texts := make(map[string]bool)
	keep := func(d ir.Doc) bool {
		if !o.KeepDuplicateTexts && texts[d.Text] {
			sel.DuplicateDocTexts++
			return false
		}
		s.Corpus = append(s.Corpus, d)
		keptIDs[d.ID] = true
		texts[d.Text] = true
		return true
	}
	add := func(id string, negative bool) {
		if len(s.Corpus) >= o.DocLimit || keptIDs[id] {
			return
		}
		d, ok := wantedDocs[id]
		switch {
		case !ok && negative:
			sel.MissingHardNegatives++
		case !ok:
			sel.MissingPositiveDocs++
		case keep(d) && negative:
			sel.KeptHardNegatives++
		}
	}
	for _, j := range positives {
		add(j.doc, false)
	}
	for _, id := range negatives {
		add(id, true)
	}
	for _, d := range fill {
		if len(s.Corpus) >= o.DocLimit {
			break
		}
		if !keptIDs[d.ID] {
			keep(d)
		}
	}
}
