package hubrepo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/hubrepo/brighttest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/trec"
)

func writeRepo(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadBright reads a task from a repository in BRIGHT's layout, as
// BRIGHT's run.py does: documents' id and content, the examples' query,
// gold_ids as binary judgments, excluded_ids as exclusions ("N/A" meaning
// none), the rest of the row kept with the query; and the long-document
// setting: long_documents judged by gold_ids_long.
func TestLoadBright(t *testing.T) {
	repo := brighttest.Build(t)
	dir := writeRepo(t, repo.Files)
	want, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}

	task, err := hubrepo.Load(dir, hubrepo.Spec{Split: "biology"})
	if err != nil {
		t.Fatal(err)
	}
	if task.Layout != ir.LayoutBrightHub || task.Name != "biology" || task.Split != "biology" {
		t.Errorf("layout %s name %s split %s", task.Layout, task.Name, task.Split)
	}
	if !reflect.DeepEqual(task.Corpus, want.Corpus) || !reflect.DeepEqual(task.Qrels, want.Qrels) {
		t.Error("corpus or judgments differ from the demo task's")
	}
	if len(task.Queries) != len(want.Queries) {
		t.Fatalf("%d queries", len(task.Queries))
	}
	for i, q := range task.Queries {
		if q.ID != want.Queries[i].ID || q.Text != want.Queries[i].Text {
			t.Errorf("query %d: %s %q", i, q.ID, q.Text)
		}
		var answer string
		json.Unmarshal(q.Extra["gold_answer"], &answer)
		if _, ok := q.Extra["reasoning"]; !ok || answer == "" || len(q.Extra) != 2 {
			t.Errorf("query %s keeps %v", q.ID, q.Extra)
		}
	}
	if !reflect.DeepEqual(task.Excluded, repo.Biology.Excluded) || len(task.Excluded) != 8 || !task.Excluded.Excluded("q1", "endo-addison-1") {
		t.Errorf("exclusions %v, want %v", task.Excluded, repo.Biology.Excluded)
	}
	if want := []string{filepath.Join(dir, "README.md"), filepath.Join(dir, "documents", "biology"+brighttest.ShardSuffix), filepath.Join(dir, "examples", "biology"+brighttest.ShardSuffix)}; !reflect.DeepEqual(task.Files, want) {
		t.Errorf("files %v", task.Files)
	}

	long, err := hubrepo.Load(dir, hubrepo.Spec{Split: "biology", Long: true, Name: "BRIGHT-biology-long"})
	if err != nil {
		t.Fatal(err)
	}
	if long.Name != "BRIGHT-biology-long" || len(long.Corpus) != len(repo.Biology.LongDocs) || len(long.Corpus) >= len(task.Corpus) {
		t.Errorf("long setting: %s, %d documents", long.Name, len(long.Corpus))
	}
	if g := long.Qrels["q1"]; !reflect.DeepEqual(g, map[string]int{"endo-pheo": 1}) {
		t.Errorf("q1's long judgments %v", g)
	}
	// The exclusions name short documents, which the long corpus lacks:
	// kept, and excluding nothing there.
	if !reflect.DeepEqual(long.Excluded, task.Excluded) {
		t.Errorf("long exclusions %v", long.Excluded)
	}

	if _, err := hubrepo.Load(dir, hubrepo.Spec{Split: "leetcode", Long: true}); err == nil || !strings.Contains(err.Error(), `config "long_documents" has no split "leetcode"`) || !strings.Contains(err.Error(), "StackExchange tasks and Pony") {
		t.Errorf("leetcode has no long documents: %v", err)
	}
	if _, err := hubrepo.Load(dir, hubrepo.Spec{}); err == nil || !strings.Contains(err.Error(), "name one of its splits: biology, leetcode") {
		t.Errorf("no split named: %v", err)
	}
	leet, err := hubrepo.Load(dir, hubrepo.Spec{Shape: hubrepo.Bright, Split: "leetcode"})
	if err != nil || len(leet.Queries) != 5 || len(leet.Excluded) != 5 || len(leet.Corpus) >= len(task.Corpus) {
		t.Errorf("leetcode: %v", err)
	}
}

// TestReadReasoning reads an LLM's published reasoning as GAR generations:
// the reasoning config's query is the reasoning, the examples' query the
// query it is about.
func TestReadReasoning(t *testing.T) {
	repo := brighttest.Build(t)
	dir := writeRepo(t, repo.Files)
	for _, llm := range []string{"gpt4", "gpt4_reason"} {
		g, err := hubrepo.ReadReasoning(dir, llm, "biology")
		if err != nil {
			t.Fatal(err)
		}
		if g.Config != "gpt4_reason" || g.Split != "biology" || len(g.Rows) != len(repo.Biology.Reasoning) || len(g.Files) != 2 {
			t.Fatalf("%s: %s/%s, %d rows, files %v", llm, g.Config, g.Split, len(g.Rows), g.Files)
		}
		for i, r := range g.Rows {
			if r.ID != repo.Biology.Examples[i].ID || r.Text != repo.Biology.Examples[i].Query || r.HyDoc != repo.Biology.Reasoning[i].Query {
				t.Errorf("row %d: %+v", i, r)
			}
		}
	}
	if _, err := hubrepo.ReadReasoning(dir, "claude-3-opus", "biology"); err == nil || !strings.Contains(err.Error(), `no config "claude-3-opus_reason"; it publishes the reasoning of gpt4`) {
		t.Errorf("unknown LLM: %v", err)
	}
	hc, err := hubrepo.ReadConfigs(dir)
	if err != nil || !reflect.DeepEqual(hc.ReasoningLLMs(), []string{"gpt4"}) {
		t.Errorf("reasoning LLMs %v %v", hc.ReasoningLLMs(), err)
	}
}

// TestLoadBrightMalformed: bad rows are refused with their file and row.
func TestLoadBrightMalformed(t *testing.T) {
	repo := brighttest.Build(t)
	ex := repo.Biology.Examples
	for _, c := range []struct {
		name string
		edit func(rows []brighttest.ExampleRow)
		want string
	}{
		{"judged and excluded", func(rows []brighttest.ExampleRow) {
			rows[1].ExcludedIDs = []string{rows[1].GoldIDs[0]}
		}, `examples/biology-00000-of-00001.parquet row 2: query "q2" excludes document "endo-addison-1", which its judgments grade 1; a document cannot be both excluded and judged`},
		{"space in an excluded id", func(rows []brighttest.ExampleRow) {
			rows[2].ExcludedIDs = []string{"a b"}
		}, `examples/biology-00000-of-00001.parquet: row 3: element 1 of excluded_ids "a b" contains whitespace`},
		{"no gold", func(rows []brighttest.ExampleRow) {
			for i := range rows {
				rows[i].GoldIDs = nil
			}
		}, `examples/biology-00000-of-00001.parquet: no query has a gold_ids entry`},
		{"gold id not in the corpus", func(rows []brighttest.ExampleRow) {
			rows[2].GoldIDs = append(rows[2].GoldIDs, "nowhere")
			rows[4].GoldIDs = []string{"nowhere-else"}
		}, `examples/biology-00000-of-00001.parquet: row 3: 2 judged documents are not in …/documents/biology-00000-of-00001.parquet (2 judgments, the first in this row): "nowhere", "nowhere-else"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := append([]brighttest.ExampleRow(nil), ex...)
			for i := range rows {
				rows[i].ExcludedIDs = append([]string(nil), rows[i].ExcludedIDs...)
			}
			c.edit(rows)
			files := map[string][]byte{}
			for k, v := range repo.Files {
				files[k] = v
			}
			files["examples/biology"+brighttest.ShardSuffix] = brighttest.Parquet(t, rows)
			dir := writeRepo(t, files)
			_, err := hubrepo.Load(dir, hubrepo.Spec{Split: "biology"})
			for _, part := range strings.Split(c.want, "…") { // … stands for the directory
				if err == nil || !strings.Contains(err.Error(), part) {
					t.Errorf("error %v, want %s", err, c.want)
				}
			}
		})
	}
}

// TestBrightQueryWithoutGold: a query whose gold_ids list is empty (one of
// TheoremQA-Questions' 205 has none) is evaluated as BRIGHT's run.py
// evaluates it, with every measure 0 and in the mean. run.py builds
// ground_truth[qid] = {} for it and hands that to pytrec_eval, whose
// RelevanceEvaluator registers every query of the dict, empty or not, and
// whose evaluate returns a score for every run query it registered
// (cvangysel/pytrec_eval src/pytrec_eval.cpp, RelevanceEvaluator_init and
// _evaluate); calculate_retrieval_metrics then divides by len(scores).
// Five queries ranked perfectly and this one therefore average 5/6, not 1.
func TestBrightQueryWithoutGold(t *testing.T) {
	repo := brighttest.Build(t)
	rows := append(slices.Clone(repo.Leetcode.Examples), brighttest.ExampleRow{
		Query: "a question no document answers", ID: "q-nogold", ExcludedIDs: []string{repo.Leetcode.Docs[0].ID},
		GoldIDs: []string{}, GoldIDsLong: []string{}, GoldAnswer: "none",
	})
	repo.Files["examples/leetcode"+brighttest.ShardSuffix] = brighttest.Parquet(t, rows)
	task, err := hubrepo.Load(writeRepo(t, repo.Files), hubrepo.Spec{Split: "leetcode"})
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Queries) != 6 || task.UnjudgedQueries != 0 || !task.Excluded.Excluded("q-nogold", repo.Leetcode.Docs[0].ID) {
		t.Fatalf("%d queries, %d unjudged (%v), exclusions %v", len(task.Queries), task.UnjudgedQueries, task.Unjudged, task.Excluded["q-nogold"])
	}
	if g, ok := task.Qrels["q-nogold"]; !ok || len(g) != 0 {
		t.Errorf("q-nogold's judgments %v (present %v), want present and empty", g, ok)
	}
	// Every query ranks its gold documents first (q-nogold some other
	// document), as pipeline.evaluate scores a run: exclusions filtered,
	// then R2MED's measures.
	run := ir.Run{}
	for _, q := range task.Queries {
		var hits []ir.Hit
		for _, d := range trec.QueryIDs(task.Qrels[q.ID]) {
			hits = append(hits, ir.Hit{DocID: d, Score: float64(10 - len(hits))})
		}
		if len(hits) == 0 {
			hits = append(hits, ir.Hit{DocID: repo.Leetcode.Docs[1].ID, Score: 1})
		}
		run[q.ID] = hits
	}
	qrels, _ := task.Excluded.FilterQrels(task.Qrels)
	res, err := measure.EvaluateR2MED(qrels, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ndcg_at_10", "recall_at_100", "mrr"} {
		if v := res.Scores[k]; v != 0.83333 {
			t.Errorf("%s = %v, want 0.83333 (5 of 6 queries perfect, as run.py averages)", k, v)
		}
	}
}
