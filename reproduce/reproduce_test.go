package reproduce

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/tasks"
)

// TestShippedSpecs reads the embedded specs: every published system has
// one with its eight tasks at the registry's revisions, and every value
// equals the published file's.
func TestShippedSpecs(t *testing.T) {
	specs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := leaderboard.Published()
	if err != nil {
		t.Fatal(err)
	}
	bySystem := map[string]*Spec{}
	groups := map[string]int{}
	for _, s := range specs {
		groups[strings.Split(s.Name, "/")[0]]++
		if s.Source.Kind == SourcePublished {
			bySystem[s.Source.System] = s
		}
		for _, td := range s.Data.Tasks {
			switch s.Data.Suite {
			case SuiteR2MED, SuiteNano:
				rt, err := tasks.Lookup(td.Task)
				if err != nil {
					t.Fatalf("%s: %v", s.Name, err)
				}
				suite := tasks.R2MED
				if s.Data.Suite == SuiteNano {
					suite = tasks.Nano
				}
				if repo, rev := rt.HubRepo(suite); td.Repo != repo || td.Revision != rev {
					t.Errorf("%s %s: %s@%s, the registry has %s@%s", s.Name, td.Task, td.Repo, td.Revision, repo, rev)
				}
			}
		}
	}
	if len(bySystem) != len(pub) || len(pub) != 71 {
		t.Fatalf("%d specs of published systems, %d published systems; want 71 each", len(bySystem), len(pub))
	}
	if groups["nano"] != 3 || groups["reference"] != 1 {
		t.Errorf("groups %v: want 3 nano specs (bm25, dense, reranking_hybrid) and 1 reference", groups)
	}
	for _, sys := range pub {
		s := bySystem[sys.ID]
		if s == nil {
			t.Errorf("no spec for published %s", sys.ID)
			continue
		}
		if len(s.Expected.Tasks) != 8 {
			t.Errorf("%s: %d tasks", s.Name, len(s.Expected.Tasks))
		}
		for _, e := range s.Expected.Tasks {
			res := sys.Tasks[e.Task]
			if e.Source != res.Source {
				t.Errorf("%s %s: source %q, published %q", s.Name, e.Task, e.Source, res.Source)
			}
			if e.Scores["ndcg_at_10"] != res.Metrics["ndcg_at_10"] || e.Scores["recall_at_100"] != res.Metrics["recall_at_100"] {
				t.Errorf("%s %s: %v, published %v", s.Name, e.Task, e.Scores, res.Metrics)
			}
		}
	}
	bm := bySystem["base/bm25"]
	if bm.Name != "r2med/bm25" || bm.Expected.Tolerance != 0.00001 || !bm.Needs.Offline() {
		t.Errorf("r2med/bm25: %+v", bm)
	}
	if e, _ := bm.Expected.Task("Biology"); e.Scores["ndcg_at_10"] != 0.19188 || e.Scores["mrr"] != 0.27195 {
		t.Errorf("r2med/bm25 Biology: %v, want R2MED's 0.19188 and MRR 0.27195", e.Scores)
	}
	if nv := bySystem["base/nv"]; len(nv.Needs.Servers) != 1 || nv.Needs.Servers[0].Flag != "base-url" || !nv.Needs.GPU {
		t.Errorf("r2med/nv needs %+v: want a server named by --base-url, and a GPU", nv.Needs)
	}
}

// TestDocIsFresh renders docs/REPRODUCE.md from the specs and the template
// and requires the committed file byte for byte.
func TestDocIsFresh(t *testing.T) {
	b := renderDoc(t)
	path := filepath.Join("..", "docs", "REPRODUCE.md")
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is not what reproduce/REPRODUCE.md.tmpl and the specs render; run go generate ./reproduce (and edit the template, not the file)\n%s", path, firstDiff(have, b.Bytes()))
	}
}

// renderDoc renders docs/REPRODUCE.md from the shipped specs.
func renderDoc(t *testing.T) *bytes.Buffer {
	t.Helper()
	specs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Doc(&b, specs); err != nil {
		t.Fatal(err)
	}
	return &b
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + x + "\n  rendered:  " + y
		}
	}
	return ""
}

const goodSpec = `title: a test
source: {kind: published, reference: a paper}
data:
  suite: r2med
  tasks:
    - {task: Biology, repo: R2MED/Biology, revision: 8b9fec2db9eda4b5742d03732213fbaee8169556}
pipeline:
  retrieve: [bm25]
needs: {}
expected:
  tolerance: 0.001
  tasks:
    - {task: Biology, source: f.json, scores: {ndcg_at_10: 0.5, mrr: 0.25}}
`

func TestParseRejects(t *testing.T) {
	if s, err := Parse("x/good", []byte(goodSpec)); err != nil || s.Evaluate != R2MED || s.Name != "x/good" {
		t.Fatalf("good spec: %+v, %v", s, err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown key", "needs: {}", "needs: {gpus: true}", `line 9: unknown key "gpus" in needs (did you mean "gpu"?)`},
		{"bad suite", "suite: r2med", "suite: bright2", `data: suite "bright2" is none of r2med, nano, local`},
		{"no pipeline", "pipeline:\n  retrieve: [bm25]\n", "", "needs a pipeline: mapping"},
		{"task not in data", "{task: Biology, source", "{task: Biolog, source", `expected: task "Biolog" is not among data's tasks`},
		{"negative tolerance", "tolerance: 0.001", "tolerance: -1", "tolerance must be 0 or more"},
		{"text for a number", "ndcg_at_10: 0.5", "ndcg_at_10: high", "line 13: ndcg_at_10 in expected.tasks[0].scores must be a number"},
		{"bad evaluate", "needs: {}", "needs: {}\nevaluate: trec", `evaluate: "trec" is neither r2med nor candidate-card`},
		{"hub task without revision", ", revision: 8b9fec2db9eda4b5742d03732213fbaee8169556}", "}", "task Biology needs repo: and revision:"},
	} {
		bad := strings.Replace(goodSpec, c.from, c.to, 1)
		if bad == goodSpec {
			t.Fatalf("%s: %q not in the spec", c.name, c.from)
		}
		_, err := Parse("x/bad", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestSelect(t *testing.T) {
	specs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	names := func(ss []*Spec) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	got, err := Select(specs, []string{"nano", "r2med/bm25", "r2med/hyde-gpt4-*"})
	if err != nil {
		t.Fatal(err)
	}
	want := "nano/bm25-candidates nano/dense-candidates nano/reranking-hybrid-candidates r2med/bm25 r2med/hyde-gpt4-bge r2med/hyde-gpt4-bm25 r2med/hyde-gpt4-nv"
	if g := strings.Join(names(got), " "); g != want {
		t.Errorf("selected %s\nwant %s", g, want)
	}
	if all, _ := Select(specs, nil); len(all) != len(specs) {
		t.Errorf("no pattern selected %d of %d", len(all), len(specs))
	}
	if _, err := Select(specs, []string{"r2med/bm52"}); err == nil || !strings.Contains(err.Error(), `did you mean "r2med/bm25"`) {
		t.Errorf("unknown name: %v", err)
	}
}

func TestUnmet(t *testing.T) {
	specs, _ := All()
	get := func(name string) *Spec {
		for _, s := range specs {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no spec %s", name)
		return nil
	}
	env := map[string]string{}
	given := map[string]bool{}
	e := Env{Getenv: func(k string) string { return env[k] }, Given: func(f string) bool { return given[f] }}

	rr := get("r2med/nv-bge-reranker-top10")
	if u := rr.Unmet(e); len(u) != 2 || !strings.Contains(u[0], "(--base-url or OPENAI_BASE_URL)") || !strings.Contains(u[1], "(--rerank-url)") {
		t.Errorf("reranker with nothing given: %q", u)
	}
	env["OPENAI_BASE_URL"] = "http://gpu:8000/v1"
	given["rerank-url"] = true
	if u := rr.Unmet(e); len(u) != 0 {
		t.Errorf("reranker with both servers given: %q", u)
	}
	off := e
	off.Offline = true
	if u := rr.Unmet(off); len(u) != 1 || u[0] != "servers for nvidia/NV-Embed-v2 and BAAI/bge-reranker-v2-m3 (not offline)" {
		t.Errorf("reranker offline: %q", u)
	}
	if u := get("r2med/openai").Unmet(e); len(u) != 1 || u[0] != "the API key in OPENAI_API_KEY" {
		t.Errorf("openai without a key: %q", u)
	}
	env["OPENAI_API_KEY"] = "sk-test"
	if u := get("r2med/openai").Unmet(e); len(u) != 0 {
		t.Errorf("openai with a key: %q", u)
	}
	mono := get("r2med/nv-monobert-top10")
	if u := mono.Unmet(e); len(u) != 1 || !strings.Contains(u[0], "(--rerank-model-dir)") {
		t.Errorf("monobert without its folder: %q", u)
	}
	for _, name := range []string{"r2med/bm25", "r2med/hyde-gpt4-bm25", "r2med/bge", "nano/bm25-candidates", "reference/nfcorpus-bm25"} {
		if u := get(name).Unmet(off); len(u) != 0 {
			t.Errorf("%s offline: %q, want nothing (its data is checked when read)", name, u)
		}
	}
}

func TestCheckAndTable(t *testing.T) {
	s, err := Parse("x/t", []byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := s.Check("Biology", func(m string) (float64, bool) {
		switch m {
		case "ndcg_at_10":
			return 0.5009, true // within 0.001
		}
		return 0, false // no mrr
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 || checks[0].Metric != "ndcg_at_10" || !checks[0].OK || checks[1].Metric != "mrr" || checks[1].OK || !checks[1].Missing ||
		checks[0].Tolerance != 0.001 || checks[0].Source != "f.json" {
		t.Fatalf("checks %+v", checks)
	}
	far, _ := s.Check("Biology", func(string) (float64, bool) { return 0.502, true })
	if far[0].OK {
		t.Errorf("0.502 against 0.5 at tolerance 0.001 passed")
	}
	other := &Spec{Name: "x/skipped", Data: Data{Tasks: []TaskData{{Task: "A"}, {Task: "B"}}}}
	reports := []*Report{
		{Spec: s, Tasks: []TaskReport{{Task: "Biology", Checks: checks}}},
		{Spec: other, Unmet: []string{"a server (--base-url)"}},
		{Spec: s, Tasks: []TaskReport{{Task: "Biology", Checks: []Check{{Metric: "ndcg_at_10", Expected: 0.5, Got: 0.50001, OK: true, Tolerance: 0.001, Source: "f.json"}}}}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, reports); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Each row says what passes (the tolerance) and where the expected
	// value is from (the task's source, the spec's reference under the
	// table).
	for _, want := range []string{
		"spec       task       metric      expected  got      delta     within\n",
		"x/t        Biology    ndcg_at_10  0.5       0.5009   +0.0009   ±0.001  ✓\n",
		"mrr         0.25      —                  ±0.001  ✗\n",
		"x/skipped  (2 tasks)  skipped: needs a server (--base-url)\n",
		"+0.00001  ±0.001  ✓\n",
		"\nx/t: expected from a paper, read from f.json\n✓: |got − expected| ≤ within, the spec's tolerance\n",
		"3 specs: 1 passed, 1 failed, 1 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !Failed(reports) || Failed(reports[1:]) {
		t.Errorf("Failed: a missing metric fails, a skip does not")
	}
	b.Reset()
	if err := WriteJSON(&b, reports[:2]); err != nil {
		t.Fatal(err)
	}
	var js []map[string]any
	if err := json.Unmarshal(b.Bytes(), &js); err != nil || len(js) != 2 || js[0]["status"] != "fail" || js[1]["status"] != "skip" {
		t.Errorf("json %s (%v)", b.String(), err)
	}
}

// TestKeysOnlyForHostedModels: a spec asks for an API key exactly when
// its model is served only by its vendor's API; a model with public
// weights (ReasonIR-8B, answered through an OpenAI-compatible route) needs
// a server of one's own, not the vendor's key.
func TestKeysOnlyForHostedModels(t *testing.T) {
	specs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		for _, id := range s.Needs.Models {
			m, ok := models.Lookup(id)
			if !ok {
				continue // rerankers and generators are not in the embedding registry
			}
			if hosted, keyed := m.Hosted, len(s.Needs.Keys) > 0; hosted != keyed {
				t.Errorf("%s: model %s (hosted %v) but keys %v", s.Name, id, hosted, s.Needs.Keys)
			}
		}
	}
	if s, err := Select(specs, []string{"external/reasonir-8b"}); err != nil || len(s) != 1 || len(s[0].Needs.Servers) != 1 || !s[0].Needs.GPU {
		t.Errorf("external/reasonir-8b: %v %+v, want a server of one's own and a GPU", err, s)
	}
}

// TestDocSaysPrintedAverage: a row titled "as … printed it" shows the
// average the paper printed beside the mean of its printed per-task values
// where the two disagree, as the leaderboard does (leaderboard.PrintedAgrees):
// ReasonEmbed's Table 3 prints 35.19 for RaDeR-gte-Qwen2-7B, whose eight
// values (../shared/data/external-results/reasonembed-table3.csv) average
// 35.215; ReasonEmbed-Qwen3-8B's 43.18 is its values' mean.
func TestDocSaysPrintedAverage(t *testing.T) {
	b := renderDoc(t)
	for _, want := range []string{
		"| `external/rader-gte-qwen2-7b` | RaDeR-gte-Qwen2-7B, as ReasonEmbed authors (released model) printed it | 35.22 (printed 35.19) |",
		"| `external/reasonembed-qwen3-8b` | ReasonEmbed-Qwen3-8B, as ReasonEmbed authors printed it | 43.18 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("docs/REPRODUCE.md lacks %q", want)
		}
	}
}

// TestTableLinesFit: the lines under the table (where a spec's values were
// published and read from) wrap at 120 columns; the source file sat at the
// end of a task's first row, which ran to 134.
func TestTableLinesFit(t *testing.T) {
	s := &Spec{Name: "reference/nfcorpus-bm25", Source: Source{Reference: strings.Repeat("a long reference to where it was published ", 5), System: "bm25"}}
	reports := []*Report{{Spec: s, Tasks: []TaskReport{{Task: "NFCorpus", Checks: []Check{{Metric: "ndcg_at_10", Expected: 0.319, Got: 0.31898, OK: true, Tolerance: 0.0001, Source: "eval-reference/nfcorpus.bm25.trec_eval"}}}}}}
	var b bytes.Buffer
	if err := WriteTable(&b, reports); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > 120 {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}
	if !strings.Contains(b.String(), "read from eval-reference/nfcorpus.bm25.trec_eval") {
		t.Errorf("the file the values are read from is not named:\n%s", b.String())
	}
}
