package retrieve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/onnx/onnxtest"
)

// encoderReference is ../shared/data/encoder-reference: tiny random-weight
// encoders and the vectors Hugging Face transformers computes with them
// for NFCorpus texts (see its README).
const encoderReference = "../../shared/data/encoder-reference"

// encoderFixtures are the local recipes checked against transformers.
// Each row runs a registry model with `--backend onnx` exactly as `r2med
// run` does, its checkpoints taken from a Hugging Face cache in which the
// fixture's directories stand under the registry's Hub ids (offline), and
// compares the documents' and queries' vectors with reference.jsonl's rows
// for the fixture's model (queries: those with the row's prefix).
//
// To check another recipe, add its directories (config.json,
// tokenizer.json, onnx/model.onnx, the model gzipped in testdata) and its
// vectors to a reference, and a row here.
var encoderFixtures = []struct {
	root string // the fixtures' folder: encoderReference or medcptReference
	// queryModel and docModel are the reference's "model" of each side.
	queryModel, docModel string
	dirs                 map[string]string // registry checkpoint → fixture directory
	dense                Dense
	prefix               string // the reference's query "prefix" these settings reproduce
	docs                 bool   // check the documents too (once per model is enough)
}{
	{encoderReference, "bge-tiny", "bge-tiny", map[string]string{"BAAI/bge-large-en-v1.5": "bge-tiny"}, Dense{Model: "bge", Backend: "onnx"},
		"Represent this sentence for searching relevant passages: ", true},
	{encoderReference, "bge-tiny", "bge-tiny", map[string]string{"BAAI/bge-large-en-v1.5": "bge-tiny"}, Dense{Model: "bge", Backend: "onnx", QueryPrefix: new(string)}, "", false},
	{encoderReference, "contriever-tiny", "contriever-tiny", map[string]string{"facebook/contriever-msmarco": "contriever-tiny"}, Dense{Model: "contriever", Backend: "onnx"}, "", true},
	// Padding must not move a vector: each text alone (no padding), and
	// batches of 13 that pad differently from the default 32 (mean
	// pooling, the most exposed to a padded token leaking in).
	{encoderReference, "contriever-tiny", "contriever-tiny", map[string]string{"facebook/contriever-msmarco": "contriever-tiny"}, Dense{Model: "contriever", Backend: "onnx", BatchSize: 1}, "", true},
	{encoderReference, "contriever-tiny", "contriever-tiny", map[string]string{"facebook/contriever-msmarco": "contriever-tiny"}, Dense{Model: "contriever", Backend: "onnx", BatchSize: 13}, "", true},
	// MedCPT as its authors pair it: the query encoder for queries, the
	// article encoder for documents fed as the pair ("", text).
	{medcptReference, "medcpt-query-tiny", "medcpt-article-tiny", map[string]string{
		"ncbi/MedCPT-Query-Encoder": "medcpt-query-tiny", "ncbi/MedCPT-Article-Encoder": "medcpt-article-tiny"},
		Dense{Model: "medcpt", Backend: "onnx"}, "", true},
	// R2MED's script: the article encoder embeds the queries too (plain).
	{medcptReference, "medcpt-article-tiny", "medcpt-article-tiny", map[string]string{"ncbi/MedCPT-Article-Encoder": "medcpt-article-tiny"},
		Dense{Model: "medcpt-r2med", Backend: "onnx"}, "", false},
}

// medcptReference holds MedCPT-shaped tiny encoders and their vectors,
// made for this project (testdata/encoder-reference/README.md); their
// tokenizer is the shared reference's bge-tiny one.
const medcptReference = "testdata/encoder-reference"

// encoderTol is the most any component may differ from transformers'.
const encoderTol = 1e-5

type referenceVector struct {
	Model, Pooling, Input, ID, Prefix string
	Vector                            []float64
}

// TestLocalEncodersMatchTransformers checks the dense recipe's local ONNX
// path end to end (registry recipe, Hub cache, tokenizer, truncation at
// 512 tokens, ONNX Runtime, pooling, normalization, instruction, the
// documents' store) against transformers' vectors, to encoderTol per
// component: 300 NFCorpus documents (two longer than 512 tokens) and 50
// queries per recipe.
func TestLocalEncodersMatchTransformers(t *testing.T) {
	if _, err := os.Stat(filepath.Join(encoderReference, "reference.jsonl")); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("R2MED_CI=1 and the encoder reference is missing: %v", err)
		}
		t.Skipf("encoder reference not found: %v", err)
	}
	onnxtest.Require(t)
	refs := readReference(t)
	task, err := dataset.Load(filepath.Join(encoderReference, "..", "nfcorpus"), dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	docs, queries := task.Corpus[:300], Queries(task.Queries[:50])

	for _, fx := range encoderFixtures {
		t.Run(fmt.Sprintf("%s/%s/prefix=%s/batch=%d", fx.queryModel, fx.dense.Model, fx.prefix, fx.dense.BatchSize), func(t *testing.T) {
			hubCache(t, fx.root, fx.dirs)
			m, _ := models.Lookup(fx.dense.Model)
			ctx := context.Background()
			r, err := newDenseRecipe(ctx, fx.dense, task.Name, Env{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()

			want := func(input, id string) []float64 {
				model := fx.docModel
				if input == "query" {
					model = fx.queryModel
				}
				key := model + "|" + input + "|" + id
				if input == "query" {
					key += "|" + fx.prefix
				}
				v, ok := refs[key]
				if !ok {
					t.Fatalf("reference.jsonl has no %s", key)
				}
				return v
			}
			// Queries: as the recipe returns them (normalized if it
			// normalizes; cosine scoring normalizes anyway).
			qv, err := r.embedQueries(ctx, queries)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range queries {
				w := want("query", q.ID)
				if m.Normalize {
					w = unit(w)
				}
				compareVector(t, "query "+q.ID, qv[i], w)
			}
			if !fx.docs {
				return
			}
			// Documents: the store the run searches (normalized rows).
			flat, err := r.embedCorpus(ctx, docs, Env{})
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range docs {
				compareVector(t, "document "+d.ID, flat.Row(i), unit(want("document", d.ID)))
			}
		})
	}
}

// readReference keys the references' vectors (the shared reference.jsonl
// and testdata's reference.jsonl.gz) by model|input|id, and queries also
// by prefix.
func readReference(t *testing.T) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, path := range []string{filepath.Join(encoderReference, "reference.jsonl"), filepath.Join(medcptReference, "reference.jsonl.gz")} {
		f, err := fileio.Open(path) // gunzips .gz
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r referenceVector
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			key := r.Model + "|" + r.Input + "|" + r.ID
			if r.Input == "query" {
				key += "|" + r.Prefix
			}
			if _, dup := out[key]; dup {
				t.Fatalf("%s: %s twice", path, key)
			}
			out[key] = r.Vector
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return out
}

// hubCache makes a Hugging Face cache, offline, in which each fixture
// directory of root is the snapshot of its registry checkpoint, so the
// recipe finds it as `r2med model pull` would have left it. A gzipped
// model is unpacked; a fixture without its own tokenizer.json takes the
// shared bge-tiny one (testdata's README says why).
func hubCache(t *testing.T, root string, dirs map[string]string) {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	const commit = "0123456789abcdef0123456789abcdef01234567"
	for hubID, dir := range dirs {
		repo := filepath.Join(cache, "models--"+strings.ReplaceAll(hubID, "/", "--"))
		snap := filepath.Join(repo, "snapshots", commit)
		for _, f := range []string{"config.json", "tokenizer.json", filepath.Join("onnx", "model.onnx")} {
			dst := filepath.Join(snap, f)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(root, dir, f)
			if _, err := os.Stat(src); err != nil && f == "tokenizer.json" {
				src = filepath.Join(encoderReference, "bge-tiny", f)
			}
			if _, err := os.Stat(src + ".gz"); err == nil {
				unzip(t, src+".gz", dst)
				continue
			}
			abs, err := filepath.Abs(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, dst); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(repo, "refs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(commit), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func unzip(t *testing.T, src, dst string) {
	t.Helper()
	in, err := fileio.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func unit(v []float64) []float64 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / math.Sqrt(ss)
	}
	return out
}

func compareVector(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d dimensions, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > worst {
			worst, at = d, i
		}
	}
	if worst > encoderTol {
		t.Errorf("%s: component %d is %.7g, transformers %.7g (|Δ| %.2g > %g)", what, at, got[at], want[at], worst, encoderTol)
	}
}
