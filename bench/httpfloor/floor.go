//go:build ignore

// floor serves POST /v1/search with the least a net/http service can do
// around r2med's BM25 search: it reads the JSON body, decodes its "query"
// and "k" with encoding/json, searches the stored index (one
// index.Searcher per core, as the search service's retriever and the
// in-process peer hold them), and answers a fixed body the size of the
// service's default answer (-answer bytes) with the service's headers. No
// snippets, no checks, no metrics, no plan: its CPU per request under the
// same load generator bounds from below what the service itself can cost,
// and so bounds from above the service's share of the in-process rate.
//
//	go run bench/httpfloor/floor.go -index $R2MED_BENCH_DIR/20k-r2med-v1.idx -addr 127.0.0.1:18182
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"runtime"
	"strconv"

	"github.com/r2med/r2med/index"
)

func main() {
	path := flag.String("index", "", "index file (r2med index build)")
	addr := flag.String("addr", "127.0.0.1:18182", "address to listen on")
	size := flag.Int("answer", 5887, "bytes of the fixed answer (the service's default answer to one synthetic query is about this size)")
	flag.Parse()
	ix, err := index.Open(*path)
	if err != nil {
		log.Fatal(err)
	}
	searchers := make(chan *index.Searcher, runtime.GOMAXPROCS(0))
	for range cap(searchers) {
		s, err := ix.NewSearcher()
		if err != nil {
			log.Fatal(err)
		}
		searchers <- s
	}
	answer := bytes.Repeat([]byte(" "), *size)
	copy(answer, `{"hits":[]}`)
	length := strconv.Itoa(len(answer))
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var req struct {
			Query string `json:"query"`
			K     int    `json:"k"`
		}
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil || req.K <= 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s := <-searchers
		hits := s.Search(req.Query, req.K)
		searchers <- s
		if len(hits) == 0 {
			http.Error(w, "no hits", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Length", length)
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		w.Write(answer)
	})))
}
