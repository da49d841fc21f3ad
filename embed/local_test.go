package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/onnx/onnxtest"
)

const localTol = 1e-5

func newTinyLocal(t *testing.T, opts LocalOptions) *Local {
	t.Helper()
	onnxtest.Require(t)
	l, err := NewLocal(onnxtest.Model("tiny-bert"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func localEmbed(t *testing.T, l *Local, in Input, ts ...string) [][]float32 {
	t.Helper()
	v, err := l.Embed(context.Background(), in, ts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func localDiff(a []float32, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-b[i]))
	}
	return d
}

func localDiff32(a, b []float32) float64 {
	return localDiff(a, func() []float64 {
		f := make([]float64, len(b))
		for i, x := range b {
			f[i] = float64(x)
		}
		return f
	}())
}

// Tokenizer → ONNX Runtime → pooling → normalization reproduces the numpy
// reference for every pooling, with all texts in one padded batch.
func TestLocalMatchesReference(t *testing.T) {
	ref := onnxtest.LoadReference(t, "tiny-bert")
	var texts []string
	for _, c := range ref.Cases {
		texts = append(texts, c.Text)
	}
	for _, p := range []Pooling{PoolCLS, PoolMean, PoolLast} {
		for _, norm := range []bool{false, true} {
			l := newTinyLocal(t, LocalOptions{Pooling: p, Normalize: norm})
			if l.Dim() != 32 || l.MaxLength(Document) != 64 {
				t.Fatalf("dim %d, max length %d", l.Dim(), l.MaxLength(Document))
			}
			got := localEmbed(t, l, Document, texts...)
			for i, c := range ref.Cases {
				want := c.Pooled[p.String()]
				if norm {
					want = c.Normalized[p.String()]
				}
				if d := localDiff(got[i], want); d > localTol {
					t.Errorf("%s normalize=%v %q: max diff %g", p, norm, c.Text, d)
				}
			}
		}
	}
}

// A text's vector does not depend on its batch: alone, in any order, with
// longer texts (more padding) or in batches of any size.
func TestLocalBatchIndependence(t *testing.T) {
	ref := onnxtest.LoadReference(t, "tiny-bert")
	var texts []string
	for _, c := range ref.Cases {
		texts = append(texts, c.Text)
	}
	texts = append(texts, "", strings.Repeat("fever ", 40)) // empty; truncated at 64 tokens
	alone := newTinyLocal(t, LocalOptions{Pooling: PoolMean, Normalize: true, BatchSize: 1})
	want := localEmbed(t, alone, Document, texts...)
	for _, bs := range []int{2, 3, 32} {
		l := newTinyLocal(t, LocalOptions{Pooling: PoolMean, Normalize: true, BatchSize: bs})
		rev := slices.Clone(texts)
		slices.Reverse(rev)
		got, gotRev := localEmbed(t, l, Document, texts...), localEmbed(t, l, Document, rev...)
		for i := range texts {
			if d := localDiff32(got[i], want[i]); d > localTol {
				t.Errorf("batch %d, %q: differs by %g from alone", bs, texts[i], d)
			}
			if d := localDiff32(gotRev[len(texts)-1-i], want[i]); d > localTol {
				t.Errorf("batch %d reversed, %q: differs by %g", bs, texts[i], d)
			}
		}
	}
}

func TestLocalTruncation(t *testing.T) {
	// [CLS] insulin therapy [SEP] is 4 tokens, so with MaxLength 4 the
	// extra words are cut and both texts give the same vector.
	l := newTinyLocal(t, LocalOptions{Pooling: PoolMean, MaxLength: 4, QueryMaxLength: 6})
	v := localEmbed(t, l, Document, "Insulin therapy", "Insulin therapy for fever and pain")
	if d := localDiff32(v[0], v[1]); d > localTol {
		t.Errorf("truncated text differs by %g", d)
	}
	q := localEmbed(t, l, Query, "Insulin therapy", "Insulin therapy for fever and pain")
	if d := localDiff32(q[0], q[1]); d < 1e-3 {
		t.Errorf("queries were cut at the document length (diff %g)", d)
	}
	if _, err := NewLocal(onnxtest.Model("tiny-bert"), LocalOptions{Pooling: PoolCLS, MaxLength: 65}); err == nil ||
		!strings.Contains(err.Error(), "max length 65 exceeds the model's 64 positions") {
		t.Errorf("too long: %v", err)
	}
}

// TestLocalDefaultLength: without a MaxLength, a model directory's length
// is the one sentence-transformers and transformers truncate at, not
// tokenizer.json's own truncation setting (which transformers replaces on
// every call): sentence_bert_config.json's max_seq_length, else
// min(max_position_embeddings, tokenizer_config.json's model_max_length)
// (sentence_transformers/models/Transformer.py@005039ffb10d, tokenize and
// __init__). all-MiniLM-L6-v2 ships tokenizer.json truncating at 128 and
// max_seq_length 256; sentence-transformers embeds 256 tokens.
func TestLocalDefaultLength(t *testing.T) {
	onnxtest.Require(t)
	baked := func(f string, b []byte) []byte { // tokenizer.json truncating at 4, as MiniLM's does at 128
		if f != "tokenizer.json" {
			return b
		}
		return []byte(strings.Replace(string(b), `"truncation": null`, `"truncation": {"direction": "Right", "max_length": 4, "strategy": "LongestFirst", "stride": 0}`, 1))
	}
	for _, c := range []struct {
		name  string
		extra map[string]string
		want  int
	}{
		{"sentence_bert_config", map[string]string{"sentence_bert_config.json": `{"max_seq_length": 6, "do_lower_case": false}`,
			"tokenizer_config.json": `{"model_max_length": 8}`}, 6},
		{"tokenizer_config", map[string]string{"tokenizer_config.json": `{"model_max_length": 8}`}, 8},
		{"unbounded tokenizer_config", map[string]string{"tokenizer_config.json": `{"model_max_length": 1000000000000000019884624838656}`}, 64},
		{"tokenizer.json alone", nil, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyModel(t, "tiny-bert", t.TempDir(), baked)
			if raw, _ := os.ReadFile(filepath.Join(dir, "tokenizer.json")); !strings.Contains(string(raw), `"max_length": 4`) {
				t.Fatal("the fixture's tokenizer.json has no truncation to replace")
			}
			for f, b := range c.extra {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := NewLocal(dir, LocalOptions{Pooling: PoolMean})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if d, q := l.MaxLength(Document), l.MaxLength(Query); d != c.want || q != c.want {
				t.Errorf("max length %d (documents) and %d (queries), want %d", d, q, c.want)
			}
		})
	}
	// A length given wins over every file.
	dir := copyModel(t, "tiny-bert", t.TempDir(), baked)
	os.WriteFile(filepath.Join(dir, "sentence_bert_config.json"), []byte(`{"max_seq_length": 6}`), 0o644)
	l, err := NewLocal(dir, LocalOptions{Pooling: PoolMean, MaxLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n := l.MaxLength(Document); n != 10 {
		t.Errorf("max length %d, want the 10 given", n)
	}
}

// copyModel copies a fixture model directory into a temporary one, edited
// by edit (file name → contents) before writing.
func copyModel(t *testing.T, name, dst string, edit func(file string, b []byte) []byte) string {
	t.Helper()
	src := onnxtest.Model(name)
	for _, f := range []string{"model.onnx", "tokenizer.json", "config.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(f, b)
		}
		p := filepath.Join(dst, f)
		if f == "model.onnx" && strings.HasSuffix(dst, "hf") {
			p = filepath.Join(dst, "onnx", f) // the Hugging Face layout
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// Queries go through QueryDir's tokenizer and model, documents through
// the main one. The query copy has a case-sensitive tokenizer, so the same
// capitalized text embeds differently on the two sides.
func TestLocalQueryEncoder(t *testing.T) {
	onnxtest.Require(t)
	qdir := copyModel(t, "tiny-bert", filepath.Join(t.TempDir(), "hf"), func(f string, b []byte) []byte {
		if f == "tokenizer.json" {
			return []byte(strings.Replace(string(b), `"lowercase": true`, `"lowercase": false`, 1))
		}
		return b
	})
	l, err := NewLocal(onnxtest.Model("tiny-bert"), LocalOptions{Pooling: PoolCLS, QueryDir: qdir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	text := []string{"Insulin Therapy"}
	d, q := localEmbed(t, l, Document, text...), localEmbed(t, l, Query, text...)
	if localDiff32(d[0], q[0]) < 1e-3 {
		t.Error("query side did not use the query encoder's tokenizer")
	}
	lower := localEmbed(t, l, Query, "insulin therapy")
	if dd := localDiff32(lower[0], d[0]); dd > localTol {
		t.Errorf("query encoder (same weights) on lower-case text differs from the document side by %g", dd)
	}
}

// PairDocuments lays a document out as [CLS] [SEP] text [SEP] with type
// ids 0 0 1…1, checked against ONNX Runtime fed that layout by hand.
func TestLocalPairDocuments(t *testing.T) {
	l := newTinyLocal(t, LocalOptions{Pooling: PoolCLS, PairDocuments: true})
	ref := onnxtest.LoadReference(t, "tiny-bert")
	s, err := onnx.Open(filepath.Join(onnxtest.Model("tiny-bert"), "model.onnx"), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range ref.Cases[:3] {
		ids := append([]int64{c.IDs[0], c.IDs[len(c.IDs)-1]}, c.IDs[1:]...)
		types := make([]int64, len(ids))
		for i := 2; i < len(types); i++ {
			types[i] = 1
		}
		out, err := s.Run(onnx.Batch{IDs: ids, TypeIDs: types, Rows: 1, Len: len(ids)})
		if err != nil {
			t.Fatal(err)
		}
		got := localEmbed(t, l, Document, c.Text)[0]
		if d := localDiff32(got, out.Data[:32]); d > localTol {
			t.Errorf("%q: paired document differs by %g from the hand-made layout", c.Text, d)
		}
		if q := localEmbed(t, l, Query, c.Text)[0]; localDiff(q, c.Pooled["cls"]) > localTol {
			t.Errorf("%q: queries must not be paired", c.Text)
		}
	}
}

func TestLocalErrors(t *testing.T) {
	onnxtest.Require(t)
	for name, tc := range map[string]struct {
		dir  string
		opts LocalOptions
		want string
	}{
		"no pooling":    {onnxtest.Model("tiny-bert"), LocalOptions{}, "holds token vectors; choose a pooling"},
		"pooled output": {onnxtest.Model("tiny-cross-2"), LocalOptions{Pooling: PoolMean}, "already one vector per text, so pooling mean cannot apply"},
		"no model":      {t.TempDir(), LocalOptions{Pooling: PoolCLS}, "no model.onnx (nor onnx/model.onnx)"},
		"bad batch":     {onnxtest.Model("tiny-bert"), LocalOptions{Pooling: PoolCLS, BatchSize: -1}, "must be ≥ 0"},
		// A graph whose weights lie in files beside it, one missing:
		// ONNX Runtime's error, then which file and what to do.
		"missing weights": {externalModel(t), LocalOptions{Pooling: PoolCLS}, "the graph keeps its weights in model.onnx_data, w2.bin beside it, and w2.bin is missing from"},
	} {
		if _, err := NewLocal(tc.dir, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// A model that pools itself: its vectors are used as they are.
	l, err := NewLocal(onnxtest.Model("tiny-cross-2"), LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if v := localEmbed(t, l, Document, "a", "b c"); len(v) != 2 || len(v[0]) != 2 {
		t.Errorf("pooled model gave %d vectors of %d", len(v), len(v[0]))
	}

	tiny := newTinyLocal(t, LocalOptions{Pooling: PoolCLS})
	if v, err := tiny.Embed(context.Background(), Document, nil); err != nil || len(v) != 0 {
		t.Errorf("no texts: %v, %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tiny.Embed(ctx, Document, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestLocalConcurrent(t *testing.T) {
	l := newTinyLocal(t, LocalOptions{Pooling: PoolMean, Normalize: true, BatchSize: 2})
	ref := onnxtest.LoadReference(t, "tiny-bert")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ref.Cases[g%len(ref.Cases)]
			v, err := l.Embed(context.Background(), Document, []string{c.Text, "fever", c.Text})
			if err == nil {
				if d := max(localDiff(v[0], c.Normalized["mean"]), localDiff(v[2], c.Normalized["mean"])); d > localTol {
					err = fmt.Errorf("%q: diff %g", c.Text, d)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// externalModel is a model directory whose graph keeps its weights in
// model.onnx_data and w2.bin, the second missing.
func externalModel(t *testing.T) string {
	dir := t.TempDir()
	files := onnxtest.Files(t, onnxtest.Model("tiny-bert"))
	files["model.onnx"] = onnxtest.ExternalGraph("model.onnx_data", "w2.bin")
	files["model.onnx_data"] = make([]byte, 16)
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
