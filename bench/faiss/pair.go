//go:build ignore

// Pair times r2med's exact float32 batch search and FAISS IndexFlatIP in
// alternation, search by search, each in its own warm process: FAISS runs
// as a child (flat_ip.py --serve) that searches when told to. On a machine
// whose speed drifts from minute to minute, back-to-back pairs see the same
// machine, so the median of the pairs' ratios is steadier than two tables
// timed minutes apart; who goes first alternates between rounds.
//
//	go run bench/faiss/pair.go [--threads 1] [--queries 100,1000] [--rounds 15]
//
// Data as in flat_ip.py and vector.BenchmarkFlatBatch: n unit-normalized
// rows of uniform random components, top 100 (speed does not depend on
// the values). Prints, per query count, the best and median time of each
// and the median and spread of r2med's speed over FAISS's across pairs.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/r2med/r2med/vector"
)

func main() {
	n := flag.Int("n", 100_000, "rows")
	dim := flag.Int("dim", 768, "dimension")
	k := flag.Int("k", 100, "top k")
	threads := flag.Int("threads", 1, "r2med workers and FAISS's OpenBLAS threads (OpenMP 1)")
	queries := flag.String("queries", "100,1000", "query counts, comma-separated")
	rounds := flag.Int("rounds", 15, "pairs per query count")
	python := flag.String("python", "/usr/bin/python3", "the Python with faiss")
	flag.Parse()
	var counts []int
	for _, s := range strings.Split(*queries, ",") {
		c, err := strconv.Atoi(s)
		if err != nil || c < 1 {
			log.Fatalf("pair: --queries: %q is not a positive count", s)
		}
		counts = append(counts, c)
	}

	cmd := exec.Command(*python, "bench/faiss/flat_ip.py", "--serve", "--n", strconv.Itoa(*n),
		"--dim", strconv.Itoa(*dim), "--k", strconv.Itoa(*k), "--queries", strconv.Itoa(slices.Max(counts)))
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS="+strconv.Itoa(*threads))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatalf("pair: starting FAISS: %v", err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewScanner(outPipe)
	if !out.Scan() {
		log.Fatalf("pair: FAISS did not start: %v", out.Err())
	}
	fmt.Println(out.Text())
	faiss := func(nq int) time.Duration {
		fmt.Fprintln(in, nq)
		if !out.Scan() {
			log.Fatalf("pair: FAISS stopped: %v", out.Err())
		}
		s, err := strconv.ParseFloat(out.Text(), 64)
		if err != nil {
			log.Fatalf("pair: FAISS answered %q", out.Text())
		}
		return time.Duration(s * float64(time.Second))
	}

	r := rand.New(rand.NewPCG(11, 99))
	vec := func() []float32 {
		v := make([]float32, *dim)
		for j := range v {
			v[j] = float32(r.Uint32()>>8)/(1<<24) - 0.5
		}
		return v
	}
	f := vector.NewFlat(*dim, vector.Cosine)
	f.Grow(*n)
	for i := range *n {
		if err := f.Add(fmt.Sprintf("doc%07d", i), vec()); err != nil {
			log.Fatal(err)
		}
	}
	qs := make([][]float32, slices.Max(counts))
	for i := range qs {
		qs[i] = vec()
	}
	r2med := func(nq int) time.Duration {
		t0 := time.Now()
		if _, err := f.Search(qs[:nq], *k, vector.SearchOptions{Workers: *threads}); err != nil {
			log.Fatal(err)
		}
		return time.Since(t0)
	}
	fmt.Printf("r2med: %d x %d, k=%d, %d thread(s); %d pairs per count\n", *n, *dim, *k, *threads, *rounds)
	for _, nq := range counts {
		r2med(nq) // warm-up
		faiss(nq)
		var rt, ft, ratio []float64
		for i := range *rounds {
			var a, b time.Duration
			if i%2 == 0 {
				a = r2med(nq)
				b = faiss(nq)
			} else {
				b = faiss(nq)
				a = r2med(nq)
			}
			rt = append(rt, a.Seconds())
			ft = append(ft, b.Seconds())
			ratio = append(ratio, b.Seconds()/a.Seconds()) // r2med speed / FAISS speed
		}
		slices.Sort(rt)
		slices.Sort(ft)
		slices.Sort(ratio)
		q := func(s []float64, p float64) float64 { return s[int(math.Round(p*float64(len(s)-1)))] }
		fmt.Printf("queries=%d: r2med best %.0f median %.0f q/s; FAISS best %.0f median %.0f q/s; "+
			"r2med/FAISS per pair: median %.3f (quartiles %.3f–%.3f), best/best %.3f\n",
			nq, float64(nq)/rt[0], float64(nq)/q(rt, 0.5), float64(nq)/ft[0], float64(nq)/q(ft, 0.5),
			q(ratio, 0.5), q(ratio, 0.25), q(ratio, 0.75), ft[0]/rt[0])
	}
}
