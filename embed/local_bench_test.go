//go:build cgo && linux

package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/onnx/onnxtest"
	"github.com/r2med/r2med/tokenizer"
)

// The benchmark model is bge-small/e5-small shaped (vocabulary 30522, 512
// positions, hidden 384, 12 heads, 12 layers, FF 1536; 133 MB), made with
// random weights by the fixture script: too big to commit, so it is
// generated once into the temp directory, keyed by the script's hash.
const benchDims = "30522,512,384,12,12,1536"

var (
	benchModelOnce sync.Once
	benchModelDir  string
	benchModelErr  error
)

func benchModel(b *testing.B) string {
	b.Helper()
	onnxtest.Require(b)
	if err := exec.Command("/usr/bin/python3", "-c", "import onnx, numpy, scipy").Run(); err != nil {
		b.Skip("needs Debian's python3-onnx, python3-numpy, python3-scipy to generate the model: ", err)
	}
	benchModelOnce.Do(func() {
		script, err := os.ReadFile(onnxtest.Script())
		if err != nil {
			benchModelErr = err
			return
		}
		sum := sha256.Sum256(append(script, benchDims...))
		dir := filepath.Join(os.TempDir(), "r2med-bench-bge-small-"+hex.EncodeToString(sum[:6]))
		if fileExists(filepath.Join(dir, "model.onnx")) && fileExists(filepath.Join(dir, "config.json")) {
			benchModelDir = dir
			return
		}
		tmp, err := os.MkdirTemp(os.TempDir(), "r2med-bench-gen-")
		if err != nil {
			benchModelErr = err
			return
		}
		cmd := exec.Command("/usr/bin/python3", onnxtest.Script(), "--kind", "encoder", "--no-reference", tmp)
		cmd.Env = append(os.Environ(), "DIMS="+benchDims)
		if out, err := cmd.CombinedOutput(); err != nil {
			benchModelErr = fmt.Errorf("generating the benchmark model: %v\n%s", err, out)
			return
		}
		os.RemoveAll(dir)
		benchModelErr = os.Rename(tmp, dir)
		benchModelDir = dir
	})
	if benchModelErr != nil {
		b.Fatal(benchModelErr)
	}
	return benchModelDir
}

// benchTexts makes n passages of 20–110 vocabulary words with a period
// every 12 words: about 25–130 tokens, so some are cut at 128.
func benchTexts(b *testing.B, dir string, n int) []string {
	raw, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	var tj struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(raw, &tj); err != nil {
		b.Fatal(err)
	}
	words := make([]string, len(tj.Model.Vocab))
	k := 0
	for w, id := range tj.Model.Vocab {
		if len(w) >= 3 && !strings.HasPrefix(w, "##") && !strings.HasPrefix(w, "[") {
			words[id] = w
		}
	}
	for _, w := range words {
		if w != "" {
			words[k] = w
			k++
		}
	}
	words = words[:k]
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, n)
	for i := range texts {
		var sb strings.Builder
		for j := range 20 + rng.IntN(91) {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
			if j%12 == 11 {
				sb.WriteByte('.')
			}
		}
		texts[i] = sb.String()
	}
	return texts
}

// BenchmarkLocalEncoder compares, for the same 64 passages in batches of
// 32 at max length 128:
//
//	end-to-end   Local.Embed: tokenize, pad, run, mean-pool, normalize
//	session      onnx.Session.Run on the pre-tokenized batches
//	go-side      tokenize, pad, pool, normalize alone (no model)
//	raw-ort      onnxruntime_go's session.Run on pre-built tensors
//	interleaved  raw-ort, session and end-to-end alternating per batch,
//	             with overhead-%
//	cpu-time     raw-ort and end-to-end with one thread, in CPU seconds of
//	             the calling thread, with overhead-%
//
// all reporting sequences per second.
func BenchmarkLocalEncoder(b *testing.B) {
	dir := benchModel(b)
	const n, batch, maxLen = 64, 32, 128
	texts := benchTexts(b, dir, n)
	l, err := NewLocal(dir, LocalOptions{Pooling: PoolMean, Normalize: true, MaxLength: maxLen, BatchSize: batch})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()

	// The batches Local.Embed makes, pre-tokenized.
	var batches []tokenizer.Batch
	order := longestFirst(texts)
	tokens := 0
	for s := 0; s < n; s += batch {
		bt, _ := l.doc.encode(texts, order[s:min(s+batch, n)], false, nil)
		batches = append(batches, bt)
		tokens += bt.Rows * bt.Len
	}
	b.Logf("%d texts in %d batches, %d padded tokens (mean %.1f per text)", n, len(batches), tokens, float64(tokens)/n)
	perSecond := func(b *testing.B) {
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "seq/s")
	}

	b.Run("end-to-end", func(b *testing.B) {
		for b.Loop() {
			if _, err := l.Embed(context.Background(), Document, texts); err != nil {
				b.Fatal(err)
			}
		}
		perSecond(b)
	})

	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			for _, bt := range batches {
				if _, err := l.doc.sess.Run(onnx.Batch{IDs: bt.IDs, TypeIDs: bt.TypeIDs, AttentionMask: bt.AttentionMask, Rows: bt.Rows, Len: bt.Len}); err != nil {
					b.Fatal(err)
				}
			}
		}
		perSecond(b)
	})

	// The work Local adds around the model, alone: tokenize, pad, pool and
	// normalize the same batches (pooling a dummy output of the right shape).
	b.Run("go-side", func(b *testing.B) {
		hidden := make([]float32, batch*maxLen*384)
		for b.Loop() {
			var encs []tokenizer.Encoding
			for s := 0; s < n; s += batch {
				var bt tokenizer.Batch
				bt, encs = l.doc.encode(texts, order[s:min(s+batch, n)], false, encs)
				vecs, err := PoolMean.Pool(hidden[:bt.Rows*bt.Len*384], bt.AttentionMask, bt.Rows, bt.Len, 384)
				if err != nil {
					b.Fatal(err)
				}
				for _, v := range vecs {
					Normalize(v)
				}
			}
		}
		perSecond(b)
	})

	// Each batch's texts, for Local.Embed to make exactly that batch.
	var groups [][]string
	for s := 0; s < n; s += batch {
		var g []string
		for _, i := range order[s:min(s+batch, n)] {
			g = append(g, texts[i])
		}
		groups = append(groups, g)
	}

	raw := newRawORT(b, dir, batches, 0)
	defer raw.close()
	b.Run("raw-ort", func(b *testing.B) {
		for b.Loop() {
			raw.run(b)
		}
		perSecond(b)
	})

	// Three-way alternation batch by batch: raw ONNX Runtime, our
	// onnx.Session, and Local.Embed of that batch's texts, in rotating
	// order. On a shared machine whose load drifts, each batch's three
	// timings see the same conditions. overhead-% is Local.Embed's time over raw ONNX Runtime's,
	// minus one; session-overhead-% the same over onnx.Session.Run's (the
	// same ONNX Runtime session Local uses, so it isolates tokenization,
	// padding, pooling and normalization).
	b.Run("interleaved", func(b *testing.B) {
		var spent [3]time.Duration // raw, session, end-to-end
		step := func(k, i int) {
			t0 := time.Now()
			switch k {
			case 0:
				raw.runBatch(b, i)
			case 1:
				bt := batches[i]
				if _, err := l.doc.sess.Run(onnx.Batch{IDs: bt.IDs, TypeIDs: bt.TypeIDs, AttentionMask: bt.AttentionMask, Rows: bt.Rows, Len: bt.Len}); err != nil {
					b.Fatal(err)
				}
			case 2:
				if _, err := l.Embed(context.Background(), Document, groups[i]); err != nil {
					b.Fatal(err)
				}
			}
			spent[k] += time.Since(t0)
		}
		turn := 0
		for b.Loop() {
			for i := range batches {
				// Rotate who goes first, so no one always follows the same.
				for j := range 3 {
					step((turn+j)%3, i)
				}
				turn++
			}
		}
		rawT, sesT, e2eT := spent[0], spent[1], spent[2]
		b.ReportMetric(float64(n*b.N)/rawT.Seconds(), "raw-seq/s")
		b.ReportMetric(float64(n*b.N)/sesT.Seconds(), "session-seq/s")
		b.ReportMetric(float64(n*b.N)/e2eT.Seconds(), "e2e-seq/s")
		b.ReportMetric(100*(e2eT.Seconds()/rawT.Seconds()-1), "overhead-%")
		b.ReportMetric(100*(e2eT.Seconds()/sesT.Seconds()-1), "session-overhead-%")
	})

	// CPU time instead of wall time: with one intra-op thread ONNX Runtime
	// computes on the calling thread, so the thread's own CPU time, taken
	// with the goroutine locked to it, counts the work of each path and not
	// the waits that other processes on a shared machine cause.
	b.Run("cpu-time", func(b *testing.B) {
		l1, err := NewLocal(dir, LocalOptions{Pooling: PoolMean, Normalize: true, MaxLength: maxLen, BatchSize: batch, Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer l1.Close()
		raw1 := newRawORT(b, dir, batches, 1)
		defer raw1.close()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var rawT, e2eT time.Duration
		turn := 0
		for b.Loop() {
			for i := range batches {
				for j := range 2 {
					t0 := threadCPU(b)
					if (turn+j)%2 == 0 {
						raw1.runBatch(b, i)
						rawT += threadCPU(b) - t0
					} else {
						if _, err := l1.Embed(context.Background(), Document, groups[i]); err != nil {
							b.Fatal(err)
						}
						e2eT += threadCPU(b) - t0
					}
				}
				turn++
			}
		}
		b.ReportMetric(float64(n*b.N)/rawT.Seconds(), "raw-seq/cpu-s")
		b.ReportMetric(float64(n*b.N)/e2eT.Seconds(), "e2e-seq/cpu-s")
		b.ReportMetric(100*(e2eT.Seconds()/rawT.Seconds()-1), "overhead-%")
	})
}

// rawORT runs the pre-tokenized batches through onnxruntime_go directly,
// on tensors built once: the floor Local's overhead is measured against.
type rawORT struct {
	sess *ort.DynamicAdvancedSession
	ios  [][2][]ort.Value
}

func newRawORT(b *testing.B, dir string, batches []tokenizer.Batch, threads int) *rawORT {
	so, err := ort.NewSessionOptions()
	if err != nil {
		b.Fatal(err)
	}
	defer so.Destroy()
	if threads > 0 {
		if err := so.SetIntraOpNumThreads(threads); err != nil {
			b.Fatal(err)
		}
	}
	sess, err := ort.NewDynamicAdvancedSession(filepath.Join(dir, "model.onnx"),
		[]string{"input_ids", "attention_mask", "token_type_ids"}, []string{"last_hidden_state"}, so)
	if err != nil {
		b.Fatal(err)
	}
	r := &rawORT{sess: sess}
	for _, bt := range batches {
		shape := ort.NewShape(int64(bt.Rows), int64(bt.Len))
		var x [2][]ort.Value
		for _, d := range [][]int64{bt.IDs, bt.AttentionMask, bt.TypeIDs} {
			t, err := ort.NewTensor(shape, d)
			if err != nil {
				b.Fatal(err)
			}
			x[0] = append(x[0], t)
		}
		out, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(bt.Rows), int64(bt.Len), 384))
		if err != nil {
			b.Fatal(err)
		}
		x[1] = []ort.Value{out}
		r.ios = append(r.ios, x)
	}
	return r
}

func (r *rawORT) run(b *testing.B) {
	for i := range r.ios {
		r.runBatch(b, i)
	}
}

func (r *rawORT) runBatch(b *testing.B, i int) {
	if err := r.sess.Run(r.ios[i][0], r.ios[i][1]); err != nil {
		b.Fatal(err)
	}
}

func (r *rawORT) close() {
	for _, x := range r.ios {
		for _, v := range append(x[0], x[1]...) {
			v.Destroy()
		}
	}
	r.sess.Destroy()
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD (Linux)
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
