package models

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/onnx/onnxtest"
)

// encoderFiles is a model repository as optimum exports one: the graph
// (binary, so served through LFS) under onnx/ or at the root.
func encoderFiles(graph string) map[string][]byte {
	return map[string][]byte{
		graph:            {0x08, 0x07, 0x12, 0x00, 'o', 'n', 'n', 'x'},
		"tokenizer.json": []byte(`{"model":{"type":"WordPiece"}}`),
		"config.json":    []byte(`{"model_type":"bert"}`),
		"README.md":      []byte("# an encoder\n"),
		"pytorch_model.bin": func() []byte {
			b := make([]byte, 64)
			b[0] = 0
			return b
		}(),
	}
}

func newHub(t *testing.T) (*hubtest.Server, *hub.Client) {
	t.Helper()
	srv := hubtest.NewServer(t)
	return srv, &hub.Client{Endpoint: srv.URL(), CacheDir: t.TempDir()}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPullFetchesOnlyWhatTheEncoderNeeds(t *testing.T) {
	srv, c := newHub(t)
	commit := srv.AddRepo("models/org/enc", encoderFiles("onnx/model.onnx"))
	cp, err := Pull(context.Background(), c, "org/enc", "")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Commit != commit || !strings.HasSuffix(cp.ONNX, "onnx/model.onnx") {
		t.Errorf("checkpoint %+v", cp)
	}
	if readString(t, cp.Tokenizer) != `{"model":{"type":"WordPiece"}}` || readString(t, cp.Config) != `{"model_type":"bert"}` || readString(t, cp.ONNX) != "\x08\x07\x12\x00onnx" {
		t.Error("wrong file contents")
	}
	if n := srv.Count(hubtest.Hub, "GET", "pytorch_model.bin") + srv.Count(hubtest.CDN, "GET", "pytorch_model.bin"); n != 0 {
		t.Errorf("the PyTorch weights were downloaded (%d requests)", n)
	}

	// Pulled once, it is served from the cache, online or offline.
	srv.Reset()
	if _, err := Pull(context.Background(), c, "org/enc", ""); err != nil {
		t.Fatal(err)
	}
	off := *c
	off.Offline = true
	again, err := Pull(context.Background(), &off, "org/enc", "")
	if err != nil || again != cp {
		t.Fatalf("offline pull: %+v %v", again, err)
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d requests for a cached checkpoint", n)
	}
}

func TestPullRootGraph(t *testing.T) {
	srv, c := newHub(t)
	srv.AddRepo("models/org/root", encoderFiles("model.onnx"))
	cp, err := Pull(context.Background(), c, "org/root", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cp.ONNX, "/model.onnx") || strings.Contains(cp.ONNX, "onnx/model.onnx") {
		t.Errorf("graph at %s", cp.ONNX)
	}
	off := *c
	off.Offline = true
	if _, err := Pull(context.Background(), &off, "org/root", "main"); err != nil {
		t.Errorf("offline pull of a root graph: %v", err)
	}
}

func TestPullErrors(t *testing.T) {
	srv, c := newHub(t)
	noONNX := encoderFiles("onnx/model.onnx")
	delete(noONNX, "onnx/model.onnx")
	srv.AddRepo("models/org/torch-only", noONNX)
	noTok := encoderFiles("onnx/model.onnx")
	delete(noTok, "tokenizer.json")
	srv.AddRepo("models/org/no-tokenizer", noTok)

	_, err := Pull(context.Background(), c, "org/torch-only", "")
	if !errors.Is(err, ErrNoONNX) {
		t.Fatalf("no graph: %v, want ErrNoONNX", err)
	}
	for _, want := range []string{"optimum-cli export onnx --model org/torch-only", "serve the model over HTTP"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = Pull(context.Background(), c, "org/no-tokenizer", "")
	if err == nil || errors.Is(err, ErrNoONNX) || !strings.Contains(err.Error(), "no tokenizer.json") {
		t.Errorf("no tokenizer: %v", err)
	}
	_, err = Pull(context.Background(), c, "org/absent", "")
	if !errors.Is(err, hub.ErrRepoNotFound) {
		t.Errorf("absent repository: %v", err)
	}
	off := *c
	off.Offline = true
	_, err = Pull(context.Background(), &off, "org/torch-only", "")
	if !errors.Is(err, hub.ErrOffline) {
		t.Errorf("offline, not cached: %v", err)
	}
}

func TestModelPullBothMedCPTEncoders(t *testing.T) {
	srv, c := newHub(t)
	srv.AddRepo("models/ncbi/MedCPT-Query-Encoder", encoderFiles("onnx/model.onnx"))
	srv.AddRepo("models/ncbi/MedCPT-Article-Encoder", encoderFiles("onnx/model.onnx"))
	m, _ := Lookup("medcpt")
	cps, err := m.Pull(context.Background(), c, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 2 || cps[0].HubID != "ncbi/MedCPT-Query-Encoder" || cps[1].HubID != "ncbi/MedCPT-Article-Encoder" {
		t.Errorf("checkpoints %+v", cps)
	}
	r, _ := Lookup("medcpt-r2med")
	if cps, err := r.Pull(context.Background(), c, ""); err != nil || len(cps) != 1 {
		t.Errorf("medcpt-r2med pulls the article encoder once: %+v %v", cps, err)
	}

	for name, want := range map[string]string{"nv": "HTTP server", "openai": "provider's API", "voyage": "provider's API"} {
		m, _ := Lookup(name)
		if _, err := m.Pull(context.Background(), c, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("pull %s: %v, want it to mention %q", name, err, want)
		}
	}
}

func TestLocalOptions(t *testing.T) {
	cps := []Checkpoint{{HubID: "ncbi/MedCPT-Query-Encoder", Dir: "/q"}, {HubID: "ncbi/MedCPT-Article-Encoder", Dir: "/a"}}
	m, _ := Lookup("medcpt")
	dir, opts, err := m.LocalOptions(cps)
	if err != nil || dir != "/a" || opts.QueryDir != "/q" || !opts.PairDocuments || opts.Pooling != embed.PoolCLS || opts.MaxLength != 512 || opts.QueryMaxLength != 512 || opts.Normalize {
		t.Errorf("medcpt: %s %+v %v", dir, opts, err)
	}
	r, _ := Lookup("medcpt-r2med")
	dir, opts, err = r.LocalOptions(cps[1:])
	if err != nil || dir != "/a" || opts.QueryDir != "" {
		t.Errorf("medcpt-r2med: %s %+v %v", dir, opts, err)
	}
	if _, _, err := m.LocalOptions(cps[1:]); err == nil {
		t.Error("medcpt with one checkpoint accepted")
	}
	c, _ := Lookup("contriever")
	dir, opts, err = c.LocalOptions([]Checkpoint{{HubID: "facebook/contriever-msmarco", Dir: "/c"}})
	if err != nil || dir != "/c" || opts.Pooling != embed.PoolMean || opts.Normalize || opts.QueryDir != "" {
		t.Errorf("contriever: %s %+v %v", dir, opts, err)
	}
	b, _ := Lookup("bge")
	if _, opts, _ := b.LocalOptions([]Checkpoint{{HubID: "BAAI/bge-large-en-v1.5", Dir: "/b"}}); opts.Pooling != embed.PoolCLS || !opts.Normalize {
		t.Errorf("bge: %+v", opts)
	}
	nv, _ := Lookup("nv")
	if _, _, err := nv.LocalOptions(nil); err == nil {
		t.Error("nv accepted for the local backend")
	}
}

// TestLocalRevisionReadsContent checks that a local model directory's
// revision changes with what its files hold, not only their sizes and
// times: other weights of the same size copied with the old times (cp -p,
// rsync -t, a tar), weights kept outside the graph (model.onnx_data) and
// the files the default length comes from.
func TestLocalRevisionReadsContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		// Every file keeps one time, as a copy that preserves times
		// would leave it.
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		stamp := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	write("onnx/model.onnx", onnxtest.ExternalGraph("model.onnx_data", ""))
	write("onnx/model.onnx_data", bytes.Repeat([]byte{1}, 32))
	write("tokenizer.json", []byte(`{"model":{"type":"WordPiece"}}`))
	write("config.json", []byte(`{"model_type":"bert"}`))
	first := LocalRevision(dir)
	if again := LocalRevision(dir); again != first || !strings.HasPrefix(first, "local:sha256:") {
		t.Fatalf("revision %q, then %q: want one local:sha256: revision", first, again)
	}
	seen := map[string]string{first: "the first files"}
	for _, change := range []struct{ what, name, data string }{
		{"other external weights of the same size", "onnx/model.onnx_data", strings.Repeat("\x02", 32)},
		{"another graph of the same size", "onnx/model.onnx", string(onnxtest.ExternalGraph("model.onnx_dat2", ""))},
		{"the weights the new graph names", "onnx/model.onnx_dat2", strings.Repeat("\x03", 32)},
		{"another tokenizer of the same size", "tokenizer.json", `{"model":{"type":"WordPieCE"}}`},
		{"a sentence-transformers length", "sentence_bert_config.json", `{"max_seq_length": 8}`},
		{"a tokenizer length", "tokenizer_config.json", `{"model_max_length": 16}`},
		{"a graph at the root", "model.onnx", "\x08\x07"},
	} {
		write(change.name, []byte(change.data))
		rev := LocalRevision(dir)
		if prev, ok := seen[rev]; ok {
			t.Errorf("after %s, the revision is the one of %s (%s)", change.what, prev, rev)
		}
		seen[rev] = change.what
	}
}

// TestPullFetchesExternalWeights checks that a graph keeping its weights
// beside it (an export over 2 GB: optimum's model.onnx_data) is pulled
// with them, online and then offline, and that a repository lacking them
// is an error naming them.
func TestPullFetchesExternalWeights(t *testing.T) {
	srv, c := newHub(t)
	files := encoderFiles("onnx/model.onnx")
	files["onnx/model.onnx"] = onnxtest.ExternalGraph("model.onnx_data", "", "w[1].bin")
	files["onnx/model.onnx_data"] = bytes.Repeat([]byte{7}, 32)
	files["onnx/w[1].bin"] = bytes.Repeat([]byte{8}, 16)
	files["onnx/model_fp16.onnx_data"] = bytes.Repeat([]byte{9}, 16) // another export's, not wanted
	srv.AddRepo("models/org/big", files)
	cp, err := Pull(context.Background(), c, "org/big", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"onnx/model.onnx_data", "onnx/w[1].bin"} {
		if got := readString(t, filepath.Join(cp.Dir, name)); got != string(files[name]) {
			t.Errorf("%s: %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(cp.Dir, "onnx", "model_fp16.onnx_data")); err == nil {
		t.Error("another export's weights were pulled")
	}
	off := *c
	off.Offline = true
	if again, err := Pull(context.Background(), &off, "org/big", ""); err != nil || again != cp {
		t.Errorf("offline pull: %+v %v", again, err)
	}

	delete(files, "onnx/w[1].bin")
	srv.AddRepo("models/org/partial", files)
	if _, err := Pull(context.Background(), c, "org/partial", ""); err == nil || !strings.Contains(err.Error(), "w[1].bin") {
		t.Errorf("a repository without the graph's weights: %v", err)
	}
}
