package index_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/ir"
)

// An index file holds the documents and their BM25 postings (and, when
// given, dense vectors); Open maps it in milliseconds and a Searcher
// analyzes queries with the analyzer the index was built with, scoring
// exactly as building in memory would (R2MED's scheme fills the top k
// with score-0 documents, as gensim does).
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "index-example")
	defer os.RemoveAll(dir)
	docs := []ir.Doc{
		{ID: "preeclampsia", Text: "Hypertension in pregnancy: preeclampsia and its management."},
		{ID: "pheo", Text: "Pheochromocytoma causes episodic hypertension and headaches."},
		{ID: "asthma", Text: "Asthma in children responds to inhaled steroids."},
	}
	ix, err := index.BuildBM25(docs, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	path := filepath.Join(dir, "demo.r2idx")
	if err := index.Write(path, index.Contents{Docs: docs, BM25: ix, Analyzer: "lucene-english"}); err != nil {
		fmt.Println(err)
		return
	}
	f, err := index.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	s, err := f.NewSearcher()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range s.Search("episodic hypertension with headache", 10) {
		fmt.Printf("%s %.4f\n", h.DocID, h.Score)
	}
	// Output:
	// pheo 0.6429
	// preeclampsia 0.0662
	// asthma 0.0000
}
