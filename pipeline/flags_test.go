package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func flagConfig(t *testing.T, file string, args ...string) (Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Config(file)
}

// TestFlagsAndFileAgree: the flags of `r2med run` and a pipeline file
// saying the same make the same Config.
func TestFlagsAndFileAgree(t *testing.T) {
	for _, c := range []struct {
		args []string
		yaml string
	}{
		{nil, "retrieve: [{bm25: {}}]"},
		{[]string{"--bm25", "lucene", "--k1", "1.2", "--top-k", "50", "--name", "x y"},
			"name: x y\ntop_k: 50\nretrieve: [{bm25: {scheme: lucene, k1: 1.2}}]"},
		{[]string{"--retriever", "bm25,dense", "--model", "bge", "--query-prefix", "", "--max-length", "256", "--quantize", "int8", "--rescore",
			"--fuse", "combsum", "--norm", "zscore", "--weights", "0.3,0.7", "--rerank", "tei", "--rerank-url", "http://h:1", "--rerank-depth", "10", "--keep-tail"},
			`retrieve: [{bm25: {}}, {dense: {model: bge, query_prefix: "", max_length: 256, quantize: int8, rescore: true}}]
fuse: {method: combsum, norm: zscore, weights: [0.3, 0.7]}
rerank: {kind: tei, base_url: "http://h:1", depth: 10, keep_tail: true}`},
		{[]string{"--retriever", "candidates:reranking_hybrid,run:runs/{task}.trec", "--rrf-k", "100"},
			"retrieve: [{candidates: reranking_hybrid}, {run: \"runs/{task}.trec\"}]\nfuse: {k: 100}"},
		{[]string{"--gar", "hyde", "--gar-llm", "gpt4", "--gar-dir", "gens"}, "expand: {method: hyde, llm: gpt4, dir: gens}\nretrieve: [{bm25: {}}]"},
		{[]string{"--gar", "hyde", "--gar-model", "Qwen/Q", "--gar-base-url", "http://gpu/v1", "--gar-style", "case", "--gar-domain", "Biology"},
			"expand: {method: hyde, generate: {model: Qwen/Q, base_url: http://gpu/v1, style: case, domain: Biology}}\nretrieve: [{bm25: {}}]"},
	} {
		byFlags, err := flagConfig(t, "", c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		byFile, err := ParseFile([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if !reflect.DeepEqual(byFlags, byFile) {
			t.Errorf("%v:\nflags %+v\nfile  %+v", c.args, byFlags, byFile)
		}
	}
}

// TestFlagsOverlayFile: flags set keys of a pipeline file; a retriever's
// flag sets every retriever of its kind, and needs one.
func TestFlagsOverlayFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(p, []byte("name: mine\ntop_k: 10\nretrieve:\n  - bm25: {scheme: lucene}\n  - bm25: {k1: 2}\nfuse: {method: combsum}\n"), 0o644)
	cfg, err := flagConfig(t, p, "--b", "0.5", "--top-k", "20", "--fuse", "rrf")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseFile([]byte("name: mine\ntop_k: 20\nretrieve:\n  - bm25: {scheme: lucene, b: 0.5}\n  - bm25: {k1: 2, b: 0.5}\nfuse: {method: rrf}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("overlay %+v, want %+v", cfg, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "bge"}, "--model sets dense or weaviate retrievers, and the pipeline has none (add one with --retriever dense)"},
		{[]string{"--retriever", "bm25,,dense"}, "has an empty entry"},
		{[]string{"--retriever", "dnese"}, `unknown retriever "dnese" (did you mean "dense"?`},
		{[]string{"--retriever", "candidates:"}, "give what follows the colon"},
		{[]string{"--rerank-model", "m"}, "rerank: needs a kind"},
		{[]string{"--gar-style", "case"}, "needs the model the LLM server serves (model:, or --gar-model)"},
		{[]string{"--bm25", "okapi"}, "r2med, lucene, robertson"},
	} {
		_, err := flagConfig(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if err != nil && regexp.MustCompile(`line \d`).MatchString(err.Error()) {
			t.Errorf("%v: %v names a line of no file", c.args, err)
		}
	}
}
