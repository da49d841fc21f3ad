package weaviatekind_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/retrieve/weaviatekind"
)

// TestRegistered: importing the package registers the weaviate kind with
// retrieve, so pipeline files and --retriever weaviate:SEARCH read it as
// they read the kinds of retrieve itself.
func TestRegistered(t *testing.T) {
	k, ok := retrieve.Lookup("weaviate")
	if !ok {
		t.Fatal("the weaviate kind is not registered")
	}
	if k.Usage != "weaviate:bm25|vector|hybrid" || k.ArgKey != "search" {
		t.Errorf("kind %+v", k)
	}
	parse := func(entry string) (retrieve.Spec, error) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(entry), &doc); err != nil {
			t.Fatal(err)
		}
		return retrieve.ParseSpec(doc.Content[0])
	}
	spec, err := parse(`weaviate: {search: hybrid, url: "http://search:8080", collection: Biology, model: bge, backend: openai, ef: 64}`)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := spec.(weaviatekind.Weaviate)
	if !ok {
		t.Fatalf("parsed as %T", spec)
	}
	if w.Name() != "weaviate:hybrid+bge" || !retrieve.UsesCache(w) || w.Describe()["ef"] != 64 {
		t.Errorf("%s: uses cache %v, described %v", w.Name(), retrieve.UsesCache(w), w.Describe())
	}
	if _, err := parse(`weaviate: {search: bm25, url: "http://search:8080", collection: Biology, ef: 64}`); err == nil || !strings.Contains(err.Error(), "ef and check_exact apply to Weaviate's vector search") {
		t.Errorf("ef on weaviate:bm25: %v", err)
	}
	if _, err := parse(`weaviate: {search: bm25, url: "http://search:8080", collection: Biology, colection: x}`); err == nil || !strings.Contains(err.Error(), `did you mean "collection"`) {
		t.Errorf("a misspelt key: %v", err)
	}
}

// TestIndexVectors: the vectors push takes from an index are the stored
// rows with the recipe's model, what CorpusVectors pushes from the task.
func TestIndexVectors(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 8})
	d := retrieve.Dense{Model: "bge", Backend: "openai", BaseURLs: yamlx.Strings{srv.URL}}
	want, winfo, err := weaviatekind.CorpusVectors(context.Background(), d, task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if winfo.Model != "bge" || winfo.Dim != 8 || winfo.Metric != "cosine" || want.Len() != len(task.Corpus) {
		t.Errorf("corpus vectors: %d, %+v", want.Len(), winfo)
	}
	open := func(c index.Contents) *index.Index {
		path := filepath.Join(t.TempDir(), "x.idx")
		c.Docs, c.Source = task.Corpus, map[string]any{"task": task.Name}
		if err := index.Write(path, c); err != nil {
			t.Fatal(err)
		}
		ix, err := index.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	flat, info, err := weaviatekind.IndexVectors(open(index.Contents{Dense: want, Recipe: d.Describe()}))
	if err != nil {
		t.Fatal(err)
	}
	if info != winfo || !reflect.DeepEqual(flat.Data(), want.Data()) {
		t.Errorf("index vectors %+v differ from the embedded corpus's %+v", info, winfo)
	}
	lex, err := index.BuildBM25(task.Corpus, "lucene-english", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := weaviatekind.IndexVectors(open(index.Contents{BM25: lex, Analyzer: "lucene-english"})); err == nil || !strings.Contains(err.Error(), "holds no dense vectors") {
		t.Errorf("no vectors: %v", err)
	}
}

// heavy matches the packages of the Weaviate client: ours, Weaviate's
// own, and gRPC, go-openapi and BSON under them.
var heavy = regexp.MustCompile(`^(github\.com/r2med/r2med/weaviate(/|$)|github\.com/weaviate/|google\.golang\.org/grpc(/|$)|github\.com/go-openapi/|go\.mongodb\.org/mongo-driver/)`)

// TestClientStaysOut: the Weaviate client is linked only into what
// imports this package. retrieve, and the packages built on it that do not
// ask for the kind, list none of its packages among their dependencies
// (go list -deps); this package lists them, so the check sees them where
// they are.
func TestClientStaysOut(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			if os.Getenv("R2MED_CI") == "1" {
				t.Fatalf("R2MED_CI=1 and the go command is not found: %v", err)
			}
			t.Skipf("needs the go command (set R2MED_CI=1 to make this an error): %v", err)
		}
	}
	deps := func(pkgs ...string) []string {
		t.Helper()
		cmd := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", strings.Join(pkgs, " "), err)
		}
		var found []string
		for _, p := range strings.Fields(string(out)) {
			if heavy.MatchString(p) {
				found = append(found, p)
			}
		}
		return found
	}
	const mod = "github.com/r2med/r2med/"
	var light []string
	for _, p := range []string{"retrieve", "pipeline", "searchapi", "nano", "plan", "config"} {
		light = append(light, mod+p)
	}
	if found := deps(light...); len(found) > 0 {
		t.Errorf("%s link the Weaviate client (%d packages, %s …); what needs the weaviate kind imports %sretrieve/weaviatekind",
			strings.Join(light, ", "), len(found), strings.Join(found[:min(5, len(found))], ", "), mod)
	}
	if found := deps(mod + "retrieve/weaviatekind"); len(found) < 50 {
		t.Errorf("the weaviate kind links %d of the client's packages; the check no longer recognises them: %v", len(found), found)
	}
}
