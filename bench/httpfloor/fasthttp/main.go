// Command fasthttp is bench/httpfloor/floor.go's twin on
// github.com/valyala/fasthttp instead of net/http: the same JSON decoding,
// the same search (one index.Searcher per core) and the same fixed answer
// with the same headers. Its CPU per request beside floor.go's measures
// what a leaner HTTP layer than net/http would leave for the service's own
// work (issue 23 item 4; docs/BENCHMARKS.md, "A leaner HTTP layer").
//
// It is a module of its own, so that the r2med module does not depend on
// fasthttp. fasthttp reads the whole request before the handler runs and
// does not watch the connection while it runs, so a handler cannot see a
// client hang up (valyala/fasthttp#468, #965): the search service needs
// that to stop a search nobody waits for and to count it on /metrics, which
// is why it stays on net/http.
//
//	cd bench/httpfloor/fasthttp && go build -o ../../../fastfloor . && cd -
//	./fastfloor -index $R2MED_BENCH_DIR/20k-r2med-v1.idx -addr 127.0.0.1:18183
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"log"
	"runtime"

	"github.com/r2med/r2med/index"
	"github.com/valyala/fasthttp"
)

func main() {
	path := flag.String("index", "", "index file (r2med index build)")
	addr := flag.String("addr", "127.0.0.1:18183", "address to listen on")
	size := flag.Int("answer", 5887, "bytes of the fixed answer (as floor.go's)")
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
	server := &fasthttp.Server{
		MaxRequestBodySize: 1 << 20,
		Handler: func(ctx *fasthttp.RequestCtx) {
			var req struct {
				Query string `json:"query"`
				K     int    `json:"k"`
			}
			if err := json.Unmarshal(ctx.PostBody(), &req); err != nil || req.K <= 0 {
				ctx.Error("bad request", fasthttp.StatusBadRequest)
				return
			}
			s := <-searchers
			hits := s.Search(req.Query, req.K)
			searchers <- s
			if len(hits) == 0 {
				ctx.Error("no hits", fasthttp.StatusInternalServerError)
				return
			}
			h := &ctx.Response.Header
			h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
			h.SetContentType("application/json; charset=utf-8")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("X-Frame-Options", "DENY")
			ctx.SetBody(answer)
		},
	}
	log.Fatal(server.ListenAndServe(*addr))
}
