package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/retrieve"
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
	tmpl := t.TempDir()
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
		// Fleets, the reasoning rerankers' settings, calls to servers.
		{[]string{"--retriever", "dense", "--model", "m", "--backend", "openai", "--base-url", "http://a/v1", "--base-url", "servers.txt",
			"--rerank", "insertrank", "--rerank-model", "r1", "--rerank-url", "http://c/v1", "--rerank-url", "http://d/v1",
			"--rerank-templates", tmpl, "--insertrank-scores", "minmax", "--insertrank-decimals", "3", "--rerank-max-tokens", "4096",
			"--request-timeout", "90s", "--retries", "0", "--endpoint-concurrency", "4"},
			`retrieve: [{dense: {model: m, backend: openai, base_url: [http://a/v1, servers.txt]}}]
rerank: {kind: insertrank, model: r1, base_url: [http://c/v1, http://d/v1], templates: ` + tmpl + `, scores: minmax, decimals: 3, max_tokens: 4096}
request_timeout: 90s
retries: 0
endpoint_concurrency: 4`},
		{[]string{"--rerank", "rank1", "--rerank-model", "r1", "--rerank-url", "http://c/v1", "--rerank-text-only"},
			"retrieve: [{bm25: {}}]\nrerank: {kind: rank1, model: r1, base_url: http://c/v1, text_only: true}"},
		{[]string{"--rerank", "grouprank", "--rerank-model", "r1", "--grouprank-size", "20", "--grouprank-repeats", "6"},
			"retrieve: [{bm25: {}}]\nrerank: {kind: grouprank, model: r1, group_size: 20, repeats: 6}"},
		{[]string{"--rerank", "diver", "--rerank-model", "r1", "--merge-pointwise", "grouprank", "--merge-listwise", "insertrank", "--merge-weight", "0.5"},
			"retrieve: [{bm25: {}}]\nrerank: {kind: diver, model: r1, merge: {pointwise: grouprank, listwise: insertrank, weight: 0.5}}"},
		{[]string{"--gar", "reasoning-append", "--gar-model", "Q", "--gar-base-url", "http://a/v1", "--gar-base-url", "http://b/v1"},
			"expand: {method: reasoning, mode: append, generate: {model: Q, base_url: [http://a/v1, http://b/v1]}}\nretrieve: [{bm25: {}}]"},
	} {
		sameAsFile(t, c.args, c.yaml)
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
		{[]string{"--rerank", "insertrank", "--rerank-model", "m", "--insertrank-scores", "log"}, `unknown InsertRank score scale "log"`},
		{[]string{"--rerank", "reranker9"}, `unknown reranker "reranker9" (tei, cohere`},
		{[]string{"--rerank", "grouprank", "--rerank-model", "m", "--grouprank-repeats", "-1"}, "grouprank needs a group size and repeats of at least 1"},
		{[]string{"--rerank", "diver", "--rerank-model", "m", "--merge-listwise", "tei"}, "the diver merge's listwise reranker is one of llm-listwise, insertrank, reasonrank, grouprank"},
		{[]string{"--rerank", "diver", "--rerank-model", "m", "--merge-weight", "1.5"}, "pointwise weight must lie between 0 and 1"},
		{[]string{"--rerank", "rank1", "--rerank-templates", "/nonexistent/templates"}, "/nonexistent/templates"},
		{[]string{"--retries", "-1"}, "retries must be 0 or more"},
		{[]string{"--endpoint-concurrency", "-1"}, "endpoint concurrency must be positive"},
		{[]string{"--gar", "hyde", "--gar-model", "m", "--gar-llm", "x"}, ""}, // fine: the label names the set
	} {
		if c.want == "" {
			if _, err := flagConfig(t, "", c.args...); err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
			continue
		}
		_, err := flagConfig(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if err != nil && regexp.MustCompile(`line \d`).MatchString(err.Error()) {
			t.Errorf("%v: %v names a line of no file", c.args, err)
		}
	}
}

// TestFlagsIndex: --index makes the pipeline's bm25 and dense retrievers
// search an index file, their flags becoming keys checked against it; a
// flag the index contradicts is an error saying so.
func TestFlagsIndex(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.Lucene), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "demo.idx")
	if err := index.Write(p, index.Contents{Docs: task.Corpus, BM25: ix, Analyzer: "lucene-english"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		yaml string
	}{
		{[]string{"--index", p}, "retrieve: [{index: {path: " + p + ", part: bm25}}]"},
		{[]string{"--index", p, "--bm25", "lucene", "--k1", "0.9"}, "retrieve: [{index: {path: " + p + ", scheme: lucene, k1: 0.9}}]"},
		{[]string{"--retriever", "bm25,run:r.trec", "--index", p}, "retrieve: [{index: " + p + "}, {run: r.trec}]"},
		{[]string{"--retriever", "index:" + p, "--bm25", "lucene"}, "retrieve: [{index: {path: " + p + ", scheme: lucene}}]"},
	} {
		byFlags, ok := sameAsFile(t, c.args, c.yaml)
		if !ok {
			continue
		}
		if byFlags.ModelName() != "bm25-lucene" && len(byFlags.Retrievers) == 1 {
			t.Errorf("%v: named %q, want the stored scheme's bm25-lucene", c.args, byFlags.ModelName())
		}
	}
	// A pipeline file's retrievers search the index too.
	pf := filepath.Join(dir, "p.yaml")
	os.WriteFile(pf, []byte("retrieve:\n  - bm25: {scheme: lucene}\n"), 0o644)
	if cfg, err := flagConfig(t, pf, "--index", p); err != nil || cfg.RetrieverName() != "bm25-lucene" {
		t.Errorf("file with --index: %v %v", cfg, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--index", p, "--bm25", "r2med"}, "built with scheme lucene, and --bm25 r2med (scheme: in a pipeline) contradicts it"},
		{[]string{"--index", p, "--retriever", "dense", "--model", "bge"}, "holds no dense vectors; build with --retriever dense"},
		{[]string{"--index", p, "--retriever", "run:r.trec"}, "the pipeline has neither retriever"},
		{[]string{"--index", filepath.Join(dir, "none.idx")}, "no such file"},
	} {
		_, err := flagConfig(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// sameAsFile reads args as run's flags and yaml as a pipeline file and
// reports (t.Errorf) where the two Configs differ; ok is false when the
// flags were refused.
func sameAsFile(t *testing.T, args []string, yaml string) (byFlags Config, ok bool) {
	t.Helper()
	byFlags, err := flagConfig(t, "", args...)
	if err != nil {
		t.Errorf("%v: %v", args, err)
		return Config{}, false
	}
	byFile, err := ParseFile([]byte(yaml))
	if err != nil {
		t.Fatalf("%q: %v", yaml, err)
	}
	if !reflect.DeepEqual(byFlags, byFile) {
		t.Errorf("%v:\nflags %+v\nfile  %+v", args, byFlags, byFile)
	}
	return byFlags, true
}

// TestKindFlagsFleet: index push reads the dense flags as run does, a
// repeated --base-url making a fleet.
func TestKindFlagsFleet(t *testing.T) {
	fs := pflag.NewFlagSet("push", pflag.ContinueOnError)
	kf := AddKindFlags(fs, "dense")
	if err := fs.Parse([]string{"--model", "m", "--backend", "openai", "--base-url", "http://a/v1", "--base-url", "servers.txt"}); err != nil {
		t.Fatal(err)
	}
	spec, err := kf.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if d := spec.(retrieve.Dense); strings.Join(d.BaseURLs, " ") != "http://a/v1 servers.txt" {
		t.Errorf("base URLs %q", d.BaseURLs)
	}
}
