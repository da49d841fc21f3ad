package retrieve_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/onnx/onnxtest"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tokenizer"
)

const testDim = 64

// fakeVector is the loopback server's embedding: hashed character
// trigrams, so similar texts get similar vectors and the test can compute
// every vector itself.
func fakeVector(text string) []float32 {
	v := make([]float32, testDim)
	t := strings.ToLower(text)
	for i := 0; i+3 <= len(t); i++ {
		h := fnv.New32a()
		h.Write([]byte(t[i : i+3]))
		v[h.Sum32()%testDim]++
	}
	v[0] += 0.5 // no all-zero vector for very short texts
	return v
}

// embedServer answers OpenAI-style /embeddings requests with fakeVector
// and remembers every text it was sent.
type embedServer struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string
	// cut holds each text's truncate_prompt_tokens and truncation_side
	// as its request asked ("0 " when not asked).
	cut map[string]string
	// answerModel, if set, is the model the answers name (else the one
	// asked for).
	answerModel string
}

func newEmbedServer(t *testing.T) *embedServer {
	s := &embedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/embeddings") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model    string   `json:"model"`
			Input    []string `json:"input"`
			Truncate int      `json:"truncate_prompt_tokens"`
			Side     string   `json:"truncation_side"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		s.mu.Lock()
		s.texts = append(s.texts, req.Input...)
		if s.cut == nil {
			s.cut = map[string]string{}
		}
		for _, text := range req.Input {
			s.cut[text] = fmt.Sprint(req.Truncate, " ", req.Side)
		}
		s.mu.Unlock()
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, text := range req.Input {
			data = append(data, item{i, fakeVector(text)})
		}
		s.mu.Lock()
		model := cmp.Or(s.answerModel, req.Model)
		s.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": model})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *embedServer) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.texts)
}

func norm(v []float32) []float64 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) / math.Sqrt(ss)
	}
	return out
}

// cosineRun is the expected dense run, computed naively: cosine of the
// normalized vectors, best first, ties by doc id, self excluded.
func cosineRun(task *ir.Task, qvecs map[string][]float32, docPrefix string, k int) ir.Run {
	docs := make([][]float64, len(task.Corpus))
	for i, d := range task.Corpus {
		docs[i] = norm(fakeVector(docPrefix + d.Text))
	}
	run := ir.Run{}
	for qid, qv := range qvecs {
		q := norm(qv)
		var hits []ir.Hit
		for i, d := range task.Corpus {
			if d.ID == qid {
				continue
			}
			var s float64
			for j := range q {
				s += q[j] * docs[i][j]
			}
			hits = append(hits, ir.Hit{DocID: d.ID, Score: s})
		}
		slices.SortFunc(hits, func(a, b ir.Hit) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return strings.Compare(a.DocID, b.DocID)
		})
		run[qid] = hits[:min(k, len(hits))]
	}
	return run
}

func closeRun(t *testing.T, got, want ir.Run) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("run has %d queries, want %d", len(got), len(want))
	}
	for qid, w := range want {
		g := got[qid]
		if len(g) != len(w) {
			t.Fatalf("query %s: %d hits, want %d", qid, len(g), len(w))
		}
		for i := range w {
			// float32 scoring against a float64 reference: near-ties may
			// swap, so compare the score at each rank and the documents.
			if math.Abs(g[i].Score-w[i].Score) > 1e-5 {
				t.Fatalf("query %s rank %d: %s %.7f, want %s %.7f", qid, i+1, g[i].DocID, g[i].Score, w[i].DocID, w[i].Score)
			}
			if g[i].DocID != w[i].DocID && math.Abs(w[i].Score-w[min(i+1, len(w)-1)].Score) > 1e-5 && (i == 0 || math.Abs(w[i].Score-w[i-1].Score) > 1e-5) {
				t.Fatalf("query %s rank %d: %s, want %s", qid, i+1, g[i].DocID, w[i].DocID)
			}
		}
	}
}

// dense builds d over task and searches qs (the task's queries when nil).
func dense(t *testing.T, task *ir.Task, d retrieve.Dense, qs []retrieve.Query, k int, env retrieve.Env) (ir.Run, *recorder, error) {
	t.Helper()
	rec := &recorder{}
	env.Record = rec
	if qs == nil {
		qs = retrieve.Queries(task.Queries)
	}
	ctx := context.Background()
	r, err := retrieve.New(ctx, d, task, env)
	if err != nil {
		return nil, rec, err
	}
	defer retrieve.Close(r)
	run, err := r.Search(ctx, qs, k)
	return run, rec, err
}

func TestDenseHTTP(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := newEmbedServer(t)
	d := retrieve.Dense{Model: "bge", Backend: "openai", BaseURLs: []string{srv.URL + "/v1"}}
	run, rec, err := dense(t, task, d, nil, 10, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	// bge's recipe: R2MED's BGE query instruction, documents as they are.
	const instr = "Represent this sentence for searching relevant passages: "
	qvecs := map[string][]float32{}
	for _, q := range task.Queries {
		qvecs[q.ID] = fakeVector(instr + q.Text)
	}
	closeRun(t, run, cosineRun(task, qvecs, "", 10))
	sent := srv.sent()
	if len(sent) != len(task.Corpus)+len(task.Queries) {
		t.Fatalf("server embedded %d texts for %d documents and %d queries", len(sent), len(task.Corpus), len(task.Queries))
	}
	var prefixed int
	for _, s := range sent {
		if strings.HasPrefix(s, instr) {
			prefixed++
		}
	}
	if prefixed != len(task.Queries) {
		t.Errorf("%d texts carried the query instruction, want %d (queries only)", prefixed, len(task.Queries))
	}
	if d.Name() != "bge" || d.Kind() != "dense" {
		t.Errorf("name %q kind %q", d.Name(), d.Kind())
	}
	if r := rec.notes["dense_recipe"].(map[string]any); r["query_prefix"] != instr || r["model"] != "BAAI/bge-large-en-v1.5" {
		t.Errorf("recipe noted %v", r)
	}
	if !reflect.DeepEqual(rec.stages, []string{"embed documents", "embed queries", "search"}) || rec.counts["dimensions"] != testDim {
		t.Errorf("recorded %v %v", rec.stages, rec.counts)
	}
	// The serving path gives each query's list exactly.
	r, err := retrieve.New(context.Background(), d, task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range retrieve.Queries(task.Queries) {
		one, err := retrieve.SearchOne(context.Background(), r, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, run[q.ID]) {
			t.Fatalf("query %s: SearchOne %v, Search %v", q.ID, one, run[q.ID])
		}
	}
}

// TestDenseGARAverages checks R2MED's dense GAR rule: HyDE with a
// non-reasoning LLM averages the query's and the generation's embeddings;
// Query2doc embeds "query[SEP]passage" once.
func TestDenseGARAverages(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	hydoc := func(q ir.Query) string {
		return "A passage about " + strings.ToUpper(q.Text[:min(20, len(q.Text))])
	}
	srv := newEmbedServer(t)
	empty := ""
	for _, method := range []string{"hyde", "query2doc"} {
		var gens []expand.Generation
		for _, q := range task.Queries {
			gens = append(gens, expand.Generation{ID: q.ID, Text: q.Text, HyDoc: hydoc(q), Method: method, LLM: "qwen-7b"})
		}
		qs, err := retrieve.Expand(task.Queries, gens)
		if err != nil {
			t.Fatal(err)
		}
		run, _, err := dense(t, task, retrieve.Dense{Model: "my-embedder", Backend: "openai", BaseURLs: []string{srv.URL}, DocPrefix: &empty}, qs, 10, retrieve.Env{})
		if err != nil {
			t.Fatal(err)
		}
		qvecs := map[string][]float32{}
		for _, q := range task.Queries {
			if method == "query2doc" {
				qvecs[q.ID] = fakeVector(q.Text + "[SEP]" + hydoc(q))
				continue
			}
			a, g := fakeVector(q.Text), fakeVector(hydoc(q))
			avg := make([]float32, testDim)
			for i := range avg {
				avg[i] = (a[i] + g[i]) / 2
			}
			qvecs[q.ID] = avg
		}
		closeRun(t, run, cosineRun(task, qvecs, "", 10))
	}
}

// TestDenseCache checks that a second build embeds nothing: documents and
// queries come from the cache.
func TestDenseCache(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	store := openCache(t)
	srv := newEmbedServer(t)
	d := retrieve.Dense{Model: "contriever", Backend: "openai", BaseURLs: []string{srv.URL}}
	first, _, err := dense(t, task, d, nil, 10, retrieve.Env{Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	n := len(srv.sent())
	second, rec, err := dense(t, task, d, nil, 10, retrieve.Env{Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.sent()) != n {
		t.Fatalf("the second run embedded %d texts again", len(srv.sent())-n)
	}
	if rec.counts["embeddings_cached"] != n || rec.counts["embeddings_computed"] != 0 {
		t.Errorf("cache counts %v", rec.counts)
	}
	closeRun(t, second, first)
}

// TestDenseAsksServersToCut: vLLM refuses a text longer than its
// --max-model-len unless the request asks it to cut (truncate_prompt_tokens,
// vllm-project/vllm#14776; #20744), and a server started longer embeds
// the whole text where the recipe's evaluation cut it. So an open-weight
// registry model asks for its recipe's length on each side, keeping each
// text's start (GritLM: queries 512, documents 2048, R2MED's GritModel);
// --max-length asks for that; a hosted API model (OpenAI's, which refuses
// unknown fields) is asked nothing.
func TestDenseAsksServersToCut(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d          retrieve.Dense
		task       string // the task's name: its instructions and, for BRIGHT's, the length the source used
		query, doc string
		recipe     int // the dense_recipe note's max_length
	}{
		{retrieve.Dense{Model: "grit"}, "Biology", "512 right", "2048 right", 512},
		{retrieve.Dense{Model: "reasonembed-qwen3-8b"}, "Biology", "512 right", "512 right", 512},
		{retrieve.Dense{Model: "grit", MaxLength: 300}, "Biology", "300 right", "300 right", 300},
		{retrieve.Dense{Model: "served-elsewhere", MaxLength: 256}, "Biology", "256 right", "256 right", 256},
		{retrieve.Dense{Model: "served-elsewhere"}, "Biology", "0 ", "0 ", 0},
		{retrieve.Dense{Model: "openai"}, "Biology", "0 ", "0 ", 0},
		// BRIGHT's tasks as each model's BRIGHT source evaluated them
		// (ReasonEmbed's FlagEmbedding script: 8192; DIVER's: 16384;
		// ReasonIR's: 32768), on both sides; --max-length still rules.
		{retrieve.Dense{Model: "reasonembed-qwen3-8b"}, "BRIGHT-biology", "8192 right", "8192 right", 8192},
		{retrieve.Dense{Model: "diver-retriever-4b"}, "BRIGHT-pony", "16384 right", "16384 right", 16384},
		{retrieve.Dense{Model: "reasonir"}, "BRIGHT-economics-long", "32768 right", "32768 right", 32768},
		{retrieve.Dense{Model: "reasonembed-qwen3-8b", MaxLength: 1024}, "BRIGHT-biology", "1024 right", "1024 right", 1024},
	} {
		srv := newEmbedServer(t)
		d := c.d
		d.Backend, d.BaseURLs = "openai", []string{srv.URL + "/v1"}
		tk := *task
		tk.Name = c.task
		_, rec, err := dense(t, &tk, d, nil, 5, retrieve.Env{})
		if err != nil {
			t.Fatalf("%+v: %v", c.d, err)
		}
		recipe, _ := rec.notes["dense_recipe"].(map[string]any)
		if got, _ := recipe["max_length"].(int); got != c.recipe {
			t.Errorf("%+v on %s: the recipe's max_length is %v, want %d", c.d, c.task, recipe["max_length"], c.recipe)
		}
		// The recipe says who cuts where: the lengths the server was
		// asked for, or that none was.
		want := "none asked"
		if c.doc != "0 " {
			want = fmt.Sprintf("asked to cut documents at %s tokens and queries at %s,", strings.Fields(c.doc)[0], strings.Fields(c.query)[0])
		}
		if got, _ := recipe["truncation"].(string); !strings.Contains(got, want) {
			t.Errorf("%+v on %s: the recipe's truncation is %q, want it to say %q", c.d, c.task, got, want)
		}
		// R2MED's openai run cut and quoted its inputs; r2med does not,
		// and says so.
		if line, _ := rec.notes[retrieve.SummaryNote+"r2med_inputs"].(string); (c.d.Model == "openai") != strings.Contains(line, "JSON-quoted") {
			t.Errorf("%+v: summary %q", c.d, line)
		}
		srv.mu.Lock()
		queries, docs := map[string]bool{}, map[string]bool{}
		for _, q := range task.Queries {
			for text, cut := range srv.cut {
				if strings.Contains(text, q.Text) {
					queries[cut] = true
				}
			}
		}
		for _, doc := range task.Corpus[:3] {
			for text, cut := range srv.cut {
				if strings.HasSuffix(text, doc.Text) && !strings.Contains(text, "Query") {
					docs[cut] = true
				}
			}
		}
		srv.mu.Unlock()
		if len(queries) != 1 || !queries[c.query] || len(docs) != 1 || !docs[c.doc] {
			t.Errorf("%+v on %s: queries asked to cut at %v, documents at %v; want %q and %q", c.d, c.task, queries, docs, c.query, c.doc)
		}
	}
}

func TestDenseErrors(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    retrieve.Dense
		want string
	}{
		{retrieve.Dense{}, "needs a model"},
		{retrieve.Dense{Model: "bge", Quantize: "int4"}, `unknown quantization "int4"`},
		{retrieve.Dense{Model: "bge", Rescore: true}, "rescoring applies to a quantized search"},
		{retrieve.Dense{Model: "not-a-model"}, "--backend"},
		{retrieve.Dense{Model: "medcpt", Backend: "openai"}, "not --backend openai"},
		{retrieve.Dense{Model: "x", Backend: "onnx", ModelDir: t.TempDir()}, "--pooling"},
		// A registry model pools as its recipe says (bge: CLS), and a
		// server pools its own vectors: a --pooling the run would ignore
		// while its settings record it is refused.
		{retrieve.Dense{Model: "bge", Backend: "onnx", Pooling: "mean"}, "pools cls"},
		{retrieve.Dense{Model: "BAAI/bge-large-en-v1.5", Pooling: "last"}, "pools cls"},
		{retrieve.Dense{Model: "x", Backend: "openai", Pooling: "mean"}, "the server pools"},
		// A length the backend cannot be asked for is refused, not
		// recorded while the server cuts elsewhere.
		{retrieve.Dense{Model: "x", Backend: "tei", MaxLength: 256}, "start TEI with --max-input-length 256"},
		{retrieve.Dense{Model: "e5", Backend: "tei", MaxLength: 256}, "TEI's /embed takes no length"},
		{retrieve.Dense{Model: "voyage", MaxLength: 1000}, "Voyage's API takes no length"},
		{retrieve.Dense{Model: "openai", MaxLength: 6000}, "refuses vLLM's truncate_prompt_tokens"},
	} {
		_, _, err := dense(t, task, c.d, nil, 10, retrieve.Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to mention %q", c.d, err, c.want)
		}
	}
}

// TestDenseGenericInstruction: a registry model whose instructions name
// the task, run on a task outside its published ones (the demo), embeds
// with its documented generic instruction, says so on the log and records
// it with its source; a task inside them takes the published one.
func TestDenseGenericInstruction(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := newEmbedServer(t)
	var log strings.Builder
	d := retrieve.Dense{Model: "reasonembed-qwen3-8b", Backend: "openai", BaseURLs: []string{srv.URL + "/v1"}}
	_, rec, err := dense(t, task, d, nil, 10, retrieve.Env{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	const generic = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "
	var instructed int
	for _, s := range srv.sent() {
		if strings.HasPrefix(s, generic) {
			instructed++
		}
	}
	if instructed != len(task.Queries) {
		t.Errorf("%d texts carried the generic instruction, want %d", instructed, len(task.Queries))
	}
	if !strings.Contains(log.String(), `publishes no instruction for task "demo"`) || !strings.Contains(log.String(), "QwenLM/Qwen3-Embedding README.md") {
		t.Errorf("log: %q", log.String())
	}
	r := rec.notes["dense_recipe"].(map[string]any)
	if r["instruction_generic"] != true || !strings.Contains(r["instruction_source"].(string), "QwenLM/Qwen3-Embedding") || r["query_prefix"] != generic {
		t.Errorf("recipe noted %v", r)
	}

	// The same model on an R2MED task: ReasonEmbed's published instruction.
	task.Name = "PMC-Clinical"
	log.Reset()
	_, rec, err = dense(t, task, d, nil, 10, retrieve.Env{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	r = rec.notes["dense_recipe"].(map[string]any)
	if r["query_prefix"] != "Instruct: Given a Clinical Case, retrieve similar cases that help diagnose the case.\nQuery: " ||
		r["instruction_generic"] != nil || !strings.Contains(r["instruction_source"].(string), "eval_reason_embed_qwen3_8b.sh") || log.Len() != 0 {
		t.Errorf("on PMC-Clinical: recipe %v, log %q", r, log.String())
	}
}

// TestDenseEncoding: a dense run asks its server for base64 vectors; one
// against a server that refuses base64 still works, having asked once;
// the manifest says which encoding each server answered in, and what the
// batching settled on.
func TestDenseEncoding(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode    embedtest.Base64Mode
		want    string
		base64  int64
		floats  bool
		comment string
	}{
		{embedtest.Base64Answered, "base64", -1, false, "accepts base64"},
		{embedtest.Base64Refused, "float", 1, true, "refuses base64"},
	} {
		srv := embedtest.NewServer(t, embedtest.Options{Base64: c.mode})
		d := retrieve.Dense{Model: "bge", Backend: "openai", BaseURLs: []string{srv.URL}}
		_, rec, err := dense(t, task, d, nil, 10, retrieve.Env{})
		if err != nil {
			t.Fatalf("server that %s: %v", c.comment, err)
		}
		if (c.base64 >= 0 && srv.Asked("base64") != c.base64) || (c.base64 < 0 && srv.Asked("base64") == 0) || (srv.Asked("float") > 0) != c.floats {
			t.Errorf("server that %s: asked base64 %d times, floats %d", c.comment, srv.Asked("base64"), srv.Asked("float"))
		}
		note := rec.notes["embedding"].(map[string]any)
		server := note["server"].(map[string]any)
		one := server["servers"].([]map[string]any)[0]
		if server["encoding"] != c.want || one["encoding"] != c.want || server["adaptive"] != true || server["batch_size"] != 64 || one["concurrency"] != 4 {
			t.Errorf("server that %s: noted %v", c.comment, server)
		}
		docs := note["documents"].(map[string]any)
		if docs["texts"] != len(task.Corpus) || docs["texts_per_second"].(float64) <= 0 || server["tokens_per_second"].(float64) <= 0 {
			t.Errorf("server that %s: rates %v %v", c.comment, docs, server)
		}
		if _, ok := note["queries"]; !ok {
			t.Errorf("no queries in the embedding note: %v", note)
		}
	}
}

// TestParseDense checks the YAML form and the description.
func TestParseDense(t *testing.T) {
	s, err := parse(t, "dense: {model: bge, backend: onnx, query_prefix: \"\", max_length: 256, quantize: int8, rescore: true}")
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	want := retrieve.Dense{Model: "bge", Backend: "onnx", QueryPrefix: &empty, MaxLength: 256, Quantize: "int8", Rescore: true}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("parsed %+v", s)
	}
	if d := s.Describe(); !reflect.DeepEqual(d, map[string]any{"retriever": "dense", "model": "bge", "backend": "onnx", "query_prefix": "", "max_length": 256, "quantize": "int8", "rescore": true}) {
		t.Errorf("describe %v", d)
	}
	// Batching and the encoding change speed, not rankings: they are no
	// part of the description a stage's fingerprint is made of.
	s, err = parse(t, "dense: {model: bge, backend: openai, batch_size: 256, concurrency: 8, encoding: float}")
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Describe(); !reflect.DeepEqual(d, map[string]any{"retriever": "dense", "model": "bge", "backend": "openai"}) || s.(retrieve.Dense).Encoding != "float" {
		t.Errorf("describe %v", d)
	}
	if !retrieve.UsesCache(s) || retrieve.UsesCache(retrieve.DefaultBM25()) {
		t.Error("UsesCache: dense yes, bm25 no")
	}
	for _, c := range []struct{ yaml, want string }{
		{"dense:\n  model: bge\n  modle: x", `line 3: unknown key "modle" in dense (did you mean "model"?)`},
		{"dense:\n  max_length: long", `line 2: max_length in dense must be a whole number, not "long"`},
		{"dense:\n  rescore: 1", `line 2: rescore in dense must be true or false, not 1`},
		{"dense: {}", `line 1: the dense retriever needs a model`},
		{"dense: {model: bge, encoding: utf8}", `unknown encoding "utf8" (want auto, base64 or float)`},
	} {
		_, err := parse(t, c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestDenseLocalONNX runs the local backend on the tiny fixture encoder
// and checks the run against the encoder's own embeddings searched by
// hand.
func TestDenseLocalONNX(t *testing.T) {
	onnxtest.Require(t)
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := onnxtest.Model("tiny-bert")
	d := retrieve.Dense{Model: "tiny", Backend: "onnx", ModelDir: dir, Pooling: "mean"}
	run, _, err := dense(t, task, d, nil, 5, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run) != len(task.Queries) {
		t.Fatalf("%d queries in the run", len(run))
	}
	for qid, hits := range run {
		if len(hits) != 5 {
			t.Fatalf("query %s: %d hits", qid, len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Fatalf("query %s: not sorted", qid)
			}
		}
	}
	// Quantized search with rescoring must find the same top document for
	// most queries (the scores are float32 either way).
	d.Quantize, d.Rescore = "int8", true
	q, _, err := dense(t, task, d, nil, 5, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for qid := range run {
		if q[qid][0].DocID == run[qid][0].DocID {
			same++
		}
	}
	if same < len(run)*3/4 {
		t.Errorf("int8+rescore agreed on the top document for %d of %d queries", same, len(run))
	}
}

// TestDenseLocalCacheKeys checks what the embedding cache keys a local
// encoder's vectors by: a Matryoshka cut reuses the whole vectors, while
// normalization or a replaced tokenizer makes new ones.
func TestDenseLocalCacheKeys(t *testing.T) {
	onnxtest.Require(t)
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(onnxtest.Model("tiny-bert"))); err != nil {
		t.Fatal(err)
	}
	store := openCache(t)
	computed := func(d retrieve.Dense) int {
		t.Helper()
		_, rec, err := dense(t, task, d, nil, 5, retrieve.Env{Cache: store})
		if err != nil {
			t.Fatal(err)
		}
		return rec.counts["embeddings_computed"]
	}
	d := retrieve.Dense{Model: "tiny", Backend: "onnx", ModelDir: dir, Pooling: "mean"}
	all := len(task.Corpus) + len(task.Queries)
	if n := computed(d); n != all {
		t.Fatalf("first run computed %d embeddings, want %d", n, all)
	}
	d.Dimensions = 16
	if n := computed(d); n != 0 {
		t.Errorf("a Matryoshka cut recomputed %d embeddings", n)
	}
	d.Normalize = true
	if n := computed(d); n != all {
		t.Errorf("normalized vectors: %d computed, want %d (new key)", n, all)
	}
	// The revision is the files' content: a touched file is the same
	// model, a rewritten one another.
	tok := filepath.Join(dir, "tokenizer.json")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(tok, later, later); err != nil {
		t.Fatal(err)
	}
	if n := computed(d); n != 0 {
		t.Errorf("after the tokenizer was touched: %d computed, want 0", n)
	}
	raw, err := os.ReadFile(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tok, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := computed(d); n != all {
		t.Errorf("after the tokenizer changed: %d computed, want %d", n, all)
	}
	// sentence_bert_config.json's max_seq_length sets the length texts are
	// cut at (as sentence-transformers reads it): another length, other
	// vectors, so the cached ones are not reused.
	if err := os.WriteFile(filepath.Join(dir, "sentence_bert_config.json"), []byte(`{"max_seq_length": 8}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := computed(d); n != all {
		t.Errorf("cut at 8 tokens: %d computed, want %d (new key)", n, all)
	}
	if n := computed(d); n != 0 {
		t.Errorf("the same length again: %d computed, want 0", n)
	}
}

// TestDenseLocalWeightsReplaced checks that a model directory whose
// weights were replaced by others of the same size, copied with the old
// file's times (cp -p, rsync -t, a tar), embeds anew: the shared
// reference's bge-tiny and contriever-tiny graphs are the same size with
// other weights.
func TestDenseLocalWeightsReplaced(t *testing.T) {
	const ref = "../../shared/data/encoder-reference"
	if _, err := os.Stat(filepath.Join(ref, "contriever-tiny", "onnx", "model.onnx")); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("R2MED_CI=1 and the encoder reference is missing: %v", err)
		}
		t.Skipf("encoder reference not found: %v", err)
	}
	onnxtest.Require(t)
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(ref, "bge-tiny"))); err != nil {
		t.Fatal(err)
	}
	graph := filepath.Join(dir, "onnx", "model.onnx")
	if err := os.Chmod(graph, 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := os.Stat(graph)
	if err != nil {
		t.Fatal(err)
	}
	store := openCache(t)
	d := retrieve.Dense{Model: "tiny", Backend: "onnx", ModelDir: dir, Pooling: "cls"}
	run := func() (ir.Run, int, string) {
		t.Helper()
		spec, err := d.Resolve(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		got, rec, err := dense(t, task, spec.(retrieve.Dense), nil, 5, retrieve.Env{Cache: store})
		if err != nil {
			t.Fatal(err)
		}
		return got, rec.counts["embeddings_computed"], spec.(retrieve.Dense).ModelRevision()
	}
	all := len(task.Corpus) + len(task.Queries)
	bge, n, rev := run()
	if n != all {
		t.Fatalf("first run computed %d embeddings, want %d", n, all)
	}
	if _, n, _ := run(); n != 0 {
		t.Fatalf("the same model again computed %d embeddings, want 0", n)
	}

	other, err := os.ReadFile(filepath.Join(ref, "contriever-tiny", "onnx", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(other)) != old.Size() {
		t.Fatalf("the fixtures' graphs are %d and %d bytes; this test needs one size", len(other), old.Size())
	}
	if err := os.WriteFile(graph, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(graph, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	contriever, n, rev2 := run()
	if n != all {
		t.Errorf("after the weights were replaced: %d embeddings computed, want %d (the cached ones are the old weights')", n, all)
	}
	if rev2 == rev {
		t.Errorf("model_revision %s names both weights", rev)
	}
	if reflect.DeepEqual(bge, contriever) {
		t.Error("other weights ranked the same with the same scores: the old vectors were reused")
	}
}

// TestDenseCountsTruncated checks that a local encoder's run counts the
// distinct documents and queries cut at the maximum length, as the
// tokenizer counts their tokens, with and without the cache and when
// answered from it, and says so in the run's summary.
func TestDenseCountsTruncated(t *testing.T) {
	onnxtest.Require(t)
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := onnxtest.Model("tiny-bert")
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	const maxLen = 24
	over := func(texts []string) int {
		seen := map[string]bool{}
		n := 0
		for _, s := range texts {
			if !seen[s] && tok.Count(s) > maxLen {
				n++
			}
			seen[s] = true
		}
		return n
	}
	// Every other text shortened to its first three words, which fit
	// (the tiny vocabulary spends many tokens on a word).
	short := func(i int, s string) string {
		if i%2 == 1 {
			return s
		}
		return strings.Join(strings.Fields(s)[:3], " ")
	}
	var docs, queries []string
	task.Corpus = slices.Clone(task.Corpus)
	for i := range task.Corpus {
		task.Corpus[i].Text = short(i, task.Corpus[i].Text)
		docs = append(docs, task.Corpus[i].Text)
	}
	task.Queries = slices.Clone(task.Queries)
	for i := range task.Queries {
		task.Queries[i].Text = short(i, task.Queries[i].Text)
		queries = append(queries, task.Queries[i].Text)
	}
	wantDocs, wantQueries := over(docs), over(queries)
	if wantDocs == 0 || wantDocs == len(docs) || wantQueries == 0 {
		t.Fatalf("at %d tokens, %d of %d documents and %d queries are longer: choose another length", maxLen, wantDocs, len(docs), wantQueries)
	}
	store := openCache(t)
	d := retrieve.Dense{Model: "tiny", Backend: "onnx", ModelDir: dir, Pooling: "mean", MaxLength: maxLen}
	for _, c := range []struct {
		what     string
		env      retrieve.Env
		computed int
	}{
		{"without a cache", retrieve.Env{}, -1},
		{"embedded into the cache", retrieve.Env{Cache: store}, len(task.Corpus) + len(task.Queries)},
		{"answered from the cache", retrieve.Env{Cache: store}, 0},
	} {
		_, rec, err := dense(t, task, d, nil, 5, c.env)
		if err != nil {
			t.Fatal(err)
		}
		if c.computed >= 0 && rec.counts["embeddings_computed"] != c.computed {
			t.Errorf("%s: %d computed, want %d", c.what, rec.counts["embeddings_computed"], c.computed)
		}
		if got, got2 := rec.counts["embeddings_truncated_documents"], rec.counts["embeddings_truncated_queries"]; got != wantDocs || got2 != wantQueries {
			t.Errorf("%s: %d documents and %d queries counted as cut, want %d and %d", c.what, got, got2, wantDocs, wantQueries)
		}
		recipe, _ := rec.notes["dense_recipe"].(map[string]any)
		if tr, _ := recipe["truncation"].(string); recipe["batch_size"] != 32 || !strings.Contains(tr, fmt.Sprintf("cuts documents at %d tokens and queries at %d", maxLen, maxLen)) {
			t.Errorf("%s: the recipe says batch_size %v, truncation %q", c.what, recipe["batch_size"], tr)
		}
		line, _ := rec.notes[retrieve.SummaryNote+"truncated"].(string)
		want := fmt.Sprintf("truncated: %d documents cut at %d tokens, %d queries at %d", wantDocs, maxLen, wantQueries, maxLen)
		if !strings.HasPrefix(line, want) {
			t.Errorf("%s: summary %q, want it to start %q", c.what, line, want)
		}
	}
	// The vectors an index stores (r2med index build, index push) are cut
	// alike, and a command without a manifest says so on its log
	// (SummaryLog), where the count went nowhere.
	var log strings.Builder
	if _, err := d.CorpusVectors(context.Background(), task, retrieve.Env{Cache: store, Record: retrieve.SummaryLog{W: &log}}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("r2med: truncated: %d documents cut at %d tokens, 0 queries at %d", wantDocs, maxLen, maxLen)
	if !strings.HasPrefix(log.String(), want) {
		t.Errorf("CorpusVectors said %q, want it to start %q", log.String(), want)
	}
}

// TestDenseSaysServerMustAppendEOS checks that a recipe that appends EOS
// (BMRetriever's), run on a server that is sent text only, says so on the
// log, in the summary and in the recipe, and that others say nothing.
func TestDenseSaysServerMustAppendEOS(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model string
		want  string
	}{
		{"bmr-2b", "bmr-2b's recipe cuts each text at 1023 tokens and appends EOS"},
		{"e5", ""},
	} {
		srv := newEmbedServer(t)
		var log strings.Builder
		d := retrieve.Dense{Model: c.model, Backend: "openai", BaseURLs: []string{srv.URL + "/v1"}}
		_, rec, err := dense(t, task, d, nil, 5, retrieve.Env{Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		line, _ := rec.notes[retrieve.SummaryNote+"append_eos"].(string)
		recipe, _ := rec.notes["dense_recipe"].(map[string]any)
		if recipe["similarity"] != "cosine" || recipe["normalize"] != (c.model == "e5") {
			// BMRetriever's vectors are not normalized, e5's are; both
			// are ranked by cosine, which the recipe says.
			t.Errorf("%s: the recipe says similarity %v, normalize %v", c.model, recipe["similarity"], recipe["normalize"])
		}
		if c.want == "" {
			if line != "" || recipe["append_eos"] != nil || strings.Contains(log.String(), "EOS") {
				t.Errorf("%s: said %q, recipe %v, log %q", c.model, line, recipe["append_eos"], log.String())
			}
			continue
		}
		if !strings.HasPrefix(line, c.want) || !strings.Contains(log.String(), c.want) || recipe["append_eos"] == nil {
			t.Errorf("%s: summary %q, log %q, recipe append_eos %v; want %q said in each", c.model, line, log.String(), recipe["append_eos"], c.want)
		}
		for _, sent := range srv.sent() {
			if strings.HasSuffix(sent, "</s>") {
				t.Errorf("%s: r2med sent %q with an EOS string", c.model, sent)
			}
		}
	}
}

// TestDenseNamesServedModel checks that a run says which model the server
// said embedded the texts where it is not the one asked for (a gateway
// that routed the name elsewhere), and says nothing where they agree.
func TestDenseNamesServedModel(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{"", "other/embedder"} {
		srv := newEmbedServer(t)
		srv.answerModel = answer
		d := retrieve.Dense{Model: "my/embedder", Backend: "openai", BaseURLs: []string{srv.URL + "/v1"}}
		_, rec, err := dense(t, task, d, nil, 5, retrieve.Env{})
		if err != nil {
			t.Fatal(err)
		}
		line, _ := rec.notes[retrieve.SummaryNote+"served_model"].(string)
		note, _ := rec.notes["embedding"].(map[string]any)
		server, _ := note["server"].(map[string]any)
		served, _ := server["served_models"].(map[string]int64)
		all := int64(len(task.Corpus) + len(task.Queries))
		if answer == "" {
			if line != "" || served["my/embedder"] != all {
				t.Errorf("the server named the model asked for: summary %q, served %v", line, served)
			}
			continue
		}
		want := fmt.Sprintf("served model: my/embedder asked for, the server said other/embedder (%d texts) embedded", all)
		if line != want || served["other/embedder"] != all {
			t.Errorf("summary %q, served %v; want %q", line, served, want)
		}
	}
}

// openCache is an embedding cache in a temporary directory, closed when
// the test ends.
func openCache(t *testing.T) *cache.Store {
	t.Helper()
	store, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// TestDenseSendsRecipeInstructions checks, for every registry model a
// server runs, that the texts a server receives are the recipe's
// instruction followed by the text, byte for byte, for queries and
// documents of R2MED's tasks, BRIGHT's and a task of one's own (the
// generic instruction); models/sources_test.go checks the instructions
// against the quoted sources.
func TestDenseSendsRecipeInstructions(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	task.Corpus = task.Corpus[:3]
	for _, m := range models.All() {
		if !m.Supports(models.OpenAI) {
			continue
		}
		for _, name := range []string{"Biology", "PMC-Clinical", "BRIGHT-biology", "BRIGHT-leetcode", "my-task"} {
			srv := newEmbedServer(t)
			tk := *task
			tk.Name = name
			d := retrieve.Dense{Model: m.Name, Backend: "openai", BaseURLs: []string{srv.URL + "/v1"}}
			if _, _, err := dense(t, &tk, d, nil, 3, retrieve.Env{}); err != nil {
				t.Fatalf("%s on %s: %v", m.Name, name, err)
			}
			in := m.Instruction(name)
			var want []string
			for _, doc := range tk.Corpus {
				want = append(want, in.Doc+doc.Text)
			}
			for _, q := range tk.Queries {
				want = append(want, in.Query+q.Text)
			}
			got := srv.sent()
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s on %s: sent texts are not the instruction (query %q, document %q) and the text", m.Name, name, in.Query, in.Doc)
			}
		}
	}
}
