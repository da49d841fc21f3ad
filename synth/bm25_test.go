package synth

import (
	"math"
	"sort"

	"github.com/r2med/r2med/ir"
)

// luceneStop is Lucene's default English stop set, which R2MED's BM25 uses.
var luceneStop = map[string]bool{}

func init() {
	for _, w := range []string{"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"} {
		luceneStop[w] = true
	}
}

// tokens is a crude stand-in for an analyzer: lower-cased alphanumeric runs
// minus stop words. Good enough to tell whether the planted relevance is
// visible to lexical retrieval, which is all these tests ask.
func tokens(s string, f func(string)) {
	var w []byte
	flush := func() {
		if len(w) > 0 && !luceneStop[string(w)] {
			f(string(w))
		}
		w = w[:0]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			w = append(w, c)
		case 'A' <= c && c <= 'Z':
			w = append(w, c-'A'+'a')
		default:
			flush()
		}
	}
	flush()
}

// bm25NDCG10 ranks the corpus with BM25 (k1=0.9, b=0.4, R2MED's settings)
// for every query and returns mean nDCG@10 with binary gains.
func bm25NDCG10(t *ir.Task) float64 {
	type posting struct {
		doc int32
		tf  int32
	}
	ids := map[string]int{}
	var post [][]posting
	dl := make([]float64, len(t.Corpus))
	var total float64
	tf := map[int]int32{}
	for d, doc := range t.Corpus {
		clear(tf)
		n := 0
		tokens(doc.Text, func(w string) {
			id, ok := ids[w]
			if !ok {
				id = len(post)
				ids[w] = id
				post = append(post, nil)
			}
			tf[id]++
			n++
		})
		for id, c := range tf {
			post[id] = append(post[id], posting{int32(d), c})
		}
		dl[d] = float64(n)
		total += float64(n)
	}
	avgdl := total / float64(len(t.Corpus))
	N := float64(len(t.Corpus))
	const k1, b = 0.9, 0.4
	score := make([]float64, len(t.Corpus))
	var sum float64
	for _, q := range t.Queries {
		clear(score)
		qtf := map[int]int{}
		tokens(q.Text, func(w string) {
			if id, ok := ids[w]; ok {
				qtf[id]++
			}
		})
		for id, c := range qtf {
			df := float64(len(post[id]))
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			for _, p := range post[id] {
				f := float64(p.tf)
				score[p.doc] += float64(c) * idf * f * (k1 + 1) / (f + k1*(1-b+b*dl[p.doc]/avgdl))
			}
		}
		order := make([]int, len(score))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return score[order[i]] > score[order[j]] })
		rel := t.Qrels[q.ID]
		var dcg, idcg float64
		for i := 0; i < 10 && i < len(order); i++ {
			if rel[t.Corpus[order[i]].ID] > 0 {
				dcg += 1 / math.Log2(float64(i+2))
			}
		}
		for i := 0; i < 10 && i < len(rel); i++ {
			idcg += 1 / math.Log2(float64(i+2))
		}
		if idcg > 0 {
			sum += dcg / idcg
		}
	}
	return sum / float64(len(t.Queries))
}
