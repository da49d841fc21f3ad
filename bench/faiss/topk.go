//go:build ignore

// Topk writes a seeded dense store and query set as raw float32, with
// r2med's exact top-k for them (vector.Flat, the batch kernel), so that
// flat_ip.py --compare can search the same bits with FAISS IndexFlatIP and
// compare the rankings:
//
//	go run bench/faiss/topk.go --out /tmp/topk [--n 100000] [--dim 768] [--queries 1000] [--k 100]
//	/usr/bin/python3 bench/faiss/flat_ip.py --compare /tmp/topk
//
// Rows and queries are uniform random components, unit-normalized here
// (so both engines read identical inputs and only their summation orders
// differ), searched by inner product. Files: rows.f32 (n × dim),
// queries.f32 (queries × dim), r2med.i32 and r2med.f32 (queries × k row
// indices and scores, best first), meta.json.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/r2med/r2med/vector"
)

func main() {
	n := flag.Int("n", 100_000, "rows")
	dim := flag.Int("dim", 768, "dimension")
	nq := flag.Int("queries", 1000, "queries")
	k := flag.Int("k", 100, "top k")
	workers := flag.Int("workers", 0, "search workers (0: GOMAXPROCS)")
	out := flag.String("out", "", "output folder (required)")
	flag.Parse()
	if *out == "" {
		log.Fatal("topk: --out DIR is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 99))
	vec := func() []float32 {
		v := make([]float32, *dim)
		var s float64
		for j := range v {
			v[j] = float32(r.Uint32()>>8)/(1<<24) - 0.5
			s += float64(v[j]) * float64(v[j])
		}
		inv := float32(1 / math.Sqrt(s))
		for j := range v {
			v[j] *= inv
		}
		return v
	}
	f := vector.NewFlat(*dim, vector.Dot)
	f.Grow(*n)
	rows := make([][]float32, *n)
	for i := range rows {
		rows[i] = vec()
		if err := f.Add(fmt.Sprintf("doc%07d", i), rows[i]); err != nil {
			log.Fatal(err)
		}
	}
	qs := make([][]float32, *nq)
	for i := range qs {
		qs[i] = vec()
	}
	t0 := time.Now()
	hits, err := f.Search(qs, *k, vector.SearchOptions{Workers: *workers})
	if err != nil {
		log.Fatal(err)
	}
	took := time.Since(t0)
	write := func(name string, data any) {
		fh, err := os.Create(filepath.Join(*out, name))
		if err != nil {
			log.Fatal(err)
		}
		if err := binary.Write(fh, binary.LittleEndian, data); err != nil {
			log.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			log.Fatal(err)
		}
	}
	flat := func(vs [][]float32) []float32 {
		o := make([]float32, 0, len(vs)*(*dim))
		for _, v := range vs {
			o = append(o, v...)
		}
		return o
	}
	write("rows.f32", flat(rows))
	write("queries.f32", flat(qs))
	idx := make([]int32, 0, *nq**k)
	sc := make([]float32, 0, *nq**k)
	for _, hs := range hits {
		if len(hs) != *k {
			log.Fatalf("topk: %d hits, want %d", len(hs), *k)
		}
		for _, h := range hs {
			idx = append(idx, int32(h.Index))
			sc = append(sc, h.Score)
		}
	}
	write("r2med.i32", idx)
	write("r2med.f32", sc)
	meta, _ := json.Marshal(map[string]int{"n": *n, "dim": *dim, "queries": *nq, "k": *k})
	if err := os.WriteFile(filepath.Join(*out, "meta.json"), meta, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("r2med: %d queries over %d x %d, k=%d, searched in %v\n", *nq, *n, *dim, *k, took.Round(time.Millisecond))
}
