package bm25_test

import (
	"fmt"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
)

// Build indexes documents through a tokenize callback (bm25 knows nothing
// of text); a Searcher, one per goroutine, scores analyzed queries. Scores
// are float32 sums in gensim's term order, as R2MED's BM25 computes them;
// like gensim's score vector, R2MED's scheme fills the top k with
// documents that share no term (score 0) in corpus order.
func ExampleBuild() {
	docs := []string{
		"Hypertension in pregnancy: preeclampsia and its management.",
		"Pheochromocytoma causes episodic hypertension and headaches.",
		"Asthma in children responds to inhaled steroids.",
	}
	en := analysis.LuceneEnglish()
	ix, err := bm25.Build(len(docs), func(i int, dst []string) []string {
		return en.Analyze(dst, docs[i])
	}, bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := ix.NewSearcher()
	for _, h := range s.Search(en.Analyze(nil, "episodic hypertension with headache"), 10) {
		fmt.Printf("doc %d  %.4f\n", h.Doc, h.Score)
	}
	// Output:
	// doc 1  0.6429
	// doc 0  0.0662
	// doc 2  0.0000
}
