package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEvalCLI1000x1000 times `r2med eval` end to end, as a user runs
// it: read a 1,000-query × 1,000-document run (1M lines) and its qrels,
// compute the measures of eval-reference/measures.txt, print the summary.
// This is the figure to set beside `trec_eval` on the same files.
func BenchmarkEvalCLI1000x1000(b *testing.B) {
	dir := b.TempDir()
	qrels, run := filepath.Join(dir, "qrels.txt"), filepath.Join(dir, "run.trec")
	writeSyntheticEval(b, qrels, run, 1000, 1000)
	args := append([]string{"eval"}, strings.Fields("-m num_ret -m num_rel -m num_rel_ret -m map -m Rprec -m bpref -m recip_rank -m ndcg -m P.1,3,5,10,25,50,100,1000 -m recall.1,3,5,10,25,50,100,1000 -m ndcg_cut.1,3,5,10,25,50,100,1000 -m map_cut.1,3,5,10,25,50,100,1000 -m success.1,3,5,10,25,50,100,1000")...)
	args = append(args, qrels, run)
	st, _ := os.Stat(run)
	b.SetBytes(st.Size())
	for b.Loop() {
		if code := execute(context.Background(), args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

func writeSyntheticEval(b *testing.B, qrelsPath, runPath string, queries, docs int) {
	rng := rand.New(rand.NewPCG(7, 7))
	qf, _ := os.Create(qrelsPath)
	rf, _ := os.Create(runPath)
	qw, rw := bufio.NewWriter(qf), bufio.NewWriter(rf)
	for q := range queries {
		for d := range 2 * docs {
			if rng.IntN(40) == 0 {
				fmt.Fprintf(qw, "q%d 0 doc%d %d\n", q, d, 1+rng.IntN(2))
			}
		}
		for r, d := range rng.Perm(2 * docs)[:docs] {
			fmt.Fprintf(rw, "q%d Q0 doc%d %d %.6f run\n", q, d, r+1, 100-float64(r)*0.01)
		}
	}
	for _, c := range []func() error{qw.Flush, rw.Flush, qf.Close, rf.Close} {
		if err := c(); err != nil {
			b.Fatal(err)
		}
	}
}
