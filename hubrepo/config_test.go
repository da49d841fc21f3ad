package hubrepo

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/r2med/r2med/hub"
)

func TestParseHubConfigsForms(t *testing.T) {
	readme := "\ufeff---\r\nlicense: cc-by-4.0\r\n" + `configs:
- config_name: one
  data_files: data/one.jsonl
- config_name: many
  data_files:
  - a/*.parquet
  - ./b/**/x-*.json
- config_name: split
  default: true
  data_files:
  - split: train
    path: t.jsonl
  - split: test
    path:
    - "t1.jsonl"
    - t2.jsonl
  - split: train
    path: t3.jsonl
  sep: ";"
dataset_info:
  features: []
---

# Card

---
not front matter
---
`
	configs, declared, err := ParseConfigs([]byte(readme), "README.md")
	if err != nil || !declared {
		t.Fatalf("declared %v, err %v", declared, err)
	}
	want := []Config{
		{Name: "one", Splits: []Split{{"train", []string{"data/one.jsonl"}}}},
		{Name: "many", Splits: []Split{{"train", []string{"a/*.parquet", "b/**/x-*.json"}}}},
		{Name: "split", Default: true, Splits: []Split{
			{"train", []string{"t.jsonl", "t3.jsonl"}},
			{"test", []string{"t1.jsonl", "t2.jsonl"}},
		}},
	}
	if !reflect.DeepEqual(configs, want) {
		t.Errorf("configs\n got %+v\nwant %+v", configs, want)
	}
	hc := &Configs{Configs: configs, Declared: true}
	if d := hc.Default(); d == nil || d.Name != "split" {
		t.Errorf("default %v, want split", d)
	}
	if d := (&Configs{Configs: []Config{{Name: "x"}, {Name: "default"}}}).Default(); d == nil || d.Name != "default" {
		t.Errorf("default %v, want the config named default", d)
	}
	if d := (&Configs{Configs: []Config{{Name: "x"}}}).Default(); d != nil {
		t.Errorf("default %v, want none", d)
	}

	for _, undeclared := range []string{
		"# no front matter\n",
		"---\nlicense: mit\n---\n",
		"text first\n---\nconfigs: []\n---\n",
		"",
	} {
		configs, declared, err := ParseConfigs([]byte(undeclared), "README.md")
		if err != nil || declared || configs != nil {
			t.Errorf("%q: configs %v, declared %v, err %v; want nothing declared", undeclared, configs, declared, err)
		}
	}
}

// TestParseHubConfigsErrors checks that a bad card names the README, the
// line and the entry at fault.
func TestParseHubConfigsErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"configs: {a: 1}\n", `README.md:2: configs is a YAML mapping, want a list of configs`},
		{"configs:\n- data_files: x.jsonl\n", `README.md:3: configs[0] has no config_name; the Hub requires one for every config`},
		{"configs:\n- config_name: a\n  data_files: a.jsonl\n- config_name: a\n  data_files: b.jsonl\n",
			`README.md:5: configs[1] (a): config "a" is declared twice`},
		{"configs:\n- config_name: a\n  data_dir: data\n", `README.md:3: configs[0] (a) has no data_files; configs that name their files another way (data_dir, a loading script) are not supported`},
		{"configs:\n- config_name: a\n  default: maybe\n  data_files: a.jsonl\n", `README.md:4: configs[0] (a): default is "maybe", want true or false`},
		{"configs:\n- config_name: a\n  data_files: {train: a.jsonl}\n",
			`README.md:4: configs[0] (a): data_files is a mapping, want a path pattern, a list of them, or a list of {split, path} with path a pattern or a list of patterns`},
		{"configs:\n- config_name: a\n  data_files:\n  - split: train\n", `README.md:5: configs[0] (a): data_files[0] needs both split and path`},
		{"configs:\n- config_name: a\n  data_files:\n  - split: train\n    path: a.jsonl\n  - b.jsonl\n",
			`README.md:7: configs[0] (a): data_files[1] is "b.jsonl"; the list mixes patterns and {split, path} entries, want a path pattern, a list of them, or a list of {split, path} with path a pattern or a list of patterns`},
		{"configs:\n- config_name: a\n  data_files:\n  - split: train\n    path: []\n",
			`README.md:6: configs[0] (a): data_files[0].path is an empty list, want a pattern or a non-empty list of patterns`},
		{"configs:\n- config_name: a\n  data_files: ../escape.jsonl\n",
			`README.md:4: configs[0] (a): data_files "../escape.jsonl" must be a slash-separated path inside the repository`},
		{"configs:\n- config_name: a\n  data_files: 'x[.jsonl'\n",
			`README.md:4: configs[0] (a): data_files "x[.jsonl" is not a valid pattern: syntax error in pattern`},
		{"configs:\n- config_name: a\n  data_files:\n", `README.md:4: configs[0] (a): data_files is empty, want a path pattern`},
		{"configs: [\n", `README.md:2: front matter is not valid YAML: did not find expected node content`},
	} {
		_, _, err := ParseConfigs([]byte("---\n"+c.body+"---\n"), "README.md")
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.body, err, c.want)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"corpus.jsonl", "corpus.jsonl", true},
		{"corpus.jsonl", "a/corpus.jsonl", false},
		{"data/train-*", "data/train-00000-of-00002.parquet", true},
		{"data/train-*", "data/sub/train-0.parquet", false},
		{"*.jsonl", "a/b.jsonl", false},
		{"**/*.jsonl", "b.jsonl", true},
		{"**/*.jsonl", "a/b/c.jsonl", true},
		{"hyde/**", "hyde/qwen-7b/query_with_hydoc.jsonl", true},
		{"hyde/**/q?ery_*.jsonl", "hyde/x/y/query_with_hydoc.jsonl", true},
		{"hyde/**/q?ery_*.jsonl", "lamer/x/query_with_hydoc.jsonl", false},
		{"c/[ab].json", "c/b.json", true},
		{"c/[ab].json", "c/c.json", false},
	} {
		if got := hub.Match(c.pattern, c.name); got != c.want {
			t.Errorf("hub.Match(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// TestInferConfigs reads a repository without a configs block: the
// conventions of the Hub's exports and of R2MED's repositories.
func TestInferConfigs(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":                             {Data: []byte("# no configs\n")},
		".gitattributes":                        {Data: []byte("*.parquet filter=lfs\n")},
		"corpus.jsonl":                          {},
		"query.jsonl.gz":                        {},
		"notes.txt":                             {},
		"data/train-00000-of-00002.parquet":     {},
		"data/train-00001-of-00002.parquet":     {},
		"data/test.jsonl":                       {},
		"bm25/NanoA-00000-of-00001.parquet":     {},
		"bm25/NanoB.parquet":                    {},
		"hyde/qwen-7b/query_with_hydoc.jsonl":   {},
		"default/validation/0000.parquet":       {},
		"a/b/c/too-deep.jsonl":                  {},
		".cache/huggingface/download/x.parquet": {},
		"train-00000-of-00001.parquet":          {},
	}
	hc, err := ReadConfigsFS(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	if hc.Declared || hc.Readme != "README.md" {
		t.Errorf("declared %v, readme %q", hc.Declared, hc.Readme)
	}
	want := []Config{
		{Name: "bm25", Splits: []Split{{"NanoA", []string{"bm25/NanoA-00000-of-00001.parquet"}}, {"NanoB", []string{"bm25/NanoB.parquet"}}}},
		{Name: "corpus", Splits: []Split{{"corpus", []string{"corpus.jsonl"}}}},
		{Name: "default", Splits: []Split{
			{"test", []string{"data/test.jsonl"}},
			{"train", []string{"data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet", "train-00000-of-00001.parquet"}},
			{"validation", []string{"default/validation/0000.parquet"}},
		}},
		{Name: "hyde", Splits: []Split{{"qwen-7b", []string{"hyde/qwen-7b/query_with_hydoc.jsonl"}}}},
		{Name: "query", Splits: []Split{{"query", []string{"query.jsonl.gz"}}}},
	}
	if !reflect.DeepEqual(hc.Configs, want) {
		t.Errorf("configs\n got %+v\nwant %+v", hc.Configs, want)
	}
	files, err := hc.Files("default", "train")
	if err != nil || len(files) != 3 {
		t.Errorf("files %v, %v", files, err)
	}
}

func TestHubFilesErrors(t *testing.T) {
	readme := `---
configs:
- config_name: corpus
  data_files:
  - split: corpus
    path: corpus.jsonl
  - split: other
    path: [corpus.jsonl, "*.jsonl", gone/*.parquet]
- config_name: csv
  data_files: table.csv
---
`
	fsys := fstest.MapFS{
		"README.md":    {Data: []byte(readme)},
		"corpus.jsonl": {},
		"more.jsonl":   {},
		"table.csv":    {},
	}
	hc, err := ReadConfigsFS(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ config, split, want string }{
		{"query", "query", `README.md has no config "query"; its configs (declared): corpus, csv`},
		{"corpus", "test", `README.md: config "corpus" has no split "test"; its splits: corpus, other`},
		{"corpus", "other", `README.md: config "corpus" split "other": no file matches "gone/*.parquet"; was the repository downloaded with this config's files?`},
		{"csv", "train", `README.md: config "csv" split "train": table.csv is not a table file this reader takes (.parquet, .jsonl, .ndjson or .json, optionally gzipped with .gz added)`},
	} {
		_, err := hc.Files(c.config, c.split)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s/%s:\n got %v\nwant %s", c.config, c.split, err, c.want)
		}
	}
	pats, err := hc.Patterns("corpus", "other")
	if err != nil || strings.Join(pats, " ") != "corpus.jsonl *.jsonl gone/*.parquet" {
		t.Errorf("patterns %q, %v", pats, err)
	}
}
