package searchapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/searchapi"
)

// Build an index of the demo task, open a service on it and search it in
// process, then over HTTP with the client.
func Example() {
	dir, _ := os.MkdirTemp("", "searchapi-example")
	defer os.RemoveAll(dir)
	task, _ := demo.Load()
	ix, _ := index.BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	path := filepath.Join(dir, "demo.idx")
	if err := index.Write(path, index.Contents{Docs: task.Corpus, BM25: ix, Analyzer: "lucene-english", Source: map[string]any{"task": task.Name}}); err != nil {
		panic(err)
	}

	svc, err := searchapi.Open(context.Background(), []searchapi.IndexFile{{Name: "bm25", Path: path}}, searchapi.Options{})
	if err != nil {
		panic(err)
	}
	defer svc.Close()
	res, _ := svc.Search(context.Background(), searchapi.Request{Query: "crushing chest pain radiating to the jaw", K: 2})
	for _, h := range res.Hits {
		fmt.Printf("%d %s %.4f %v\n", h.Rank, h.ID, h.Score, h.Matched)
	}

	srv := httptest.NewServer(svc.Handler(searchapi.HandlerOptions{}))
	defer srv.Close()
	c := &searchapi.Client{BaseURL: srv.URL}
	q := "fever and rash"
	out, _ := c.Search(context.Background(), searchapi.SearchBody{Query: &q, K: 1})
	fmt.Println(out[0].System, out[0].Hits[0].ID)
	// Output:
	// 1 cv-mi-1 15.5061 [crush chest pain radiat jaw]
	// 2 gi-pancreatitis-1 4.8915 [pain radiat]
	// bm25 peds-measles-1
}
