package measure

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// synthetic builds nq queries of depth retrieved documents each, scores
// rounded so that ties occur, about 5% of the retrieved documents judged
// relevant (grades 1-2), as many judged non-relevant, and a few relevant
// documents left unretrieved.
func synthetic(nq, depth int, seed uint64) (ir.Qrels, ir.Run) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	qrels, run := make(ir.Qrels, nq), make(ir.Run, nq)
	for q := range nq {
		qid := fmt.Sprintf("q%d", q)
		hits := make([]ir.Hit, depth)
		seen := make(map[string]bool, depth)
		for i := range hits {
			doc := fmt.Sprintf("doc%d", rng.IntN(100*depth))
			for seen[doc] {
				doc = fmt.Sprintf("doc%d", rng.IntN(100*depth))
			}
			seen[doc] = true
			hits[i] = ir.Hit{DocID: doc, Score: float64(rng.IntN(4*depth)) / 7}
		}
		judged := make(map[string]int)
		for _, h := range hits {
			switch r := rng.IntN(100); {
			case r < 5:
				judged[h.DocID] = 1 + rng.IntN(2)
			case r < 10:
				judged[h.DocID] = 0
			}
		}
		for i := range 1 + rng.IntN(5) {
			judged[fmt.Sprintf("unretrieved%d", i)] = 1
		}
		qrels[qid], run[qid] = judged, hits
	}
	return qrels, run
}

func BenchmarkEvaluate1000x1000(b *testing.B) {
	qrels, run := synthetic(1000, 1000, 1)
	ms := MustParse(refMeasureList)
	pynum.Log2Table(1002) // a process builds the discount table once
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Evaluate(qrels, run, ms, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateHakari1000x1000(b *testing.B) {
	qrels, run := synthetic(1000, 1000, 1)
	ms := MustParse("hit@1 hit@10 hit@100 precision@10 recall@10 recall@100 mrr@10 ndcg@10 ndcg@100 map@100")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Evaluate(qrels, run, ms, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNFCorpusReference times what "trec_eval -q" does on the NFCorpus
// BM25 run: read both files, evaluate, print.
func BenchmarkNFCorpusReference(b *testing.B) {
	qrelsPath, runPath := refPath(b, "nfcorpus.qrels"), refPath(b, "nfcorpus.bm25.run")
	ms := refMeasures(b)
	b.ReportAllocs()
	for b.Loop() {
		qrels, err := trec.ReadQrelsFile(qrelsPath)
		if err != nil {
			b.Fatal(err)
		}
		run, err := trec.ReadRunFile(runPath)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Evaluate(qrels, run, ms, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteTrecEval(io.Discard, res, true); err != nil {
			b.Fatal(err)
		}
	}
}

// refMeasureList is measures.txt without its -m flags, so the synthetic
// benchmark runs without the shared data (TestRefMeasureList keeps the two
// equal).
const refMeasureList = "num_ret num_rel num_rel_ret map Rprec bpref recip_rank ndcg " +
	"P.1,3,5,10,25,50,100,1000 recall.1,3,5,10,25,50,100,1000 " +
	"ndcg_cut.1,3,5,10,25,50,100,1000 map_cut.1,3,5,10,25,50,100,1000 success.1,3,5,10,25,50,100,1000"
