package pipeline

// Issue 21, item 5: Nano and Hub folders read the same everywhere — from
// the Hub or copied here, their candidate lists by the names their cards
// give them, and first-stage scores shown to InsertRank only where a list
// has them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/nano/nanotest"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/taskstats"
)

// A Hub folder reads the same from the Hub and from a copy here: its card
// decides. R2MED's query2doc generations are a JSON array named
// query_with_hydoc.json, which R2MED's paths (…/query_with_hydoc.jsonl)
// would not find; read through the card, the task and every GAR method
// give the same runs both ways, the folder given as --gar-dir too.
func TestHubFolderReadsTheSameLocally(t *testing.T) {
	ctx := context.Background()
	files := nanotest.DirFiles(t, filepath.Join("..", "hubrepo", "testdata", "r2med-mini"))
	srv := hubtest.NewServer(t)
	srv.AddRepo("someone/r2med-mini", files)
	c := &hub.Client{Endpoint: srv.URL(), CacheDir: t.TempDir()}
	remote, err := Source{Data: "hf://datasets/someone/r2med-mini", Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "r2med-mini")
	nanotest.WriteDir(t, dir, files)
	local, err := Source{Data: dir}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if local.Layout != remote.Layout || local.Name != remote.Name || local.Layout != ir.LayoutR2MEDHub {
		t.Errorf("local %s %q, over hf:// %s %q", local.Layout, local.Name, remote.Layout, remote.Name)
	}
	sameTask(t, local, remote)
	for i, q := range local.Queries {
		if fmt.Sprint(q.Extra) != fmt.Sprint(remote.Queries[i].Extra) {
			t.Errorf("query %s: fields %v locally, %v over hf://", q.ID, q.Extra, remote.Queries[i].Extra)
		}
	}
	for _, gar := range []expand.Source{{Method: "query2doc", LLM: "gpt4"}, {Method: "hyde", LLM: "qwen-7b"}} {
		cfg := DefaultConfig()
		cfg.GAR = gar
		viaHub, err := Run(ctx, remote, cfg, Options{})
		if err != nil {
			t.Fatalf("%s over hf://: %v", gar.Method, err)
		}
		here, err := Run(ctx, local, cfg, Options{})
		if err != nil {
			t.Fatalf("%s locally: %v", gar.Method, err)
		}
		sameRun(t, gar.Method+" locally vs over hf://", here.Run, viaHub.Run)
		if gar.Method == "query2doc" && !slices.ContainsFunc(here.Manifest.Inputs, func(d results.FileDigest) bool {
			return strings.HasSuffix(filepath.ToSlash(d.Path), "query2doc/gpt4/query_with_hydoc.json")
		}) {
			t.Errorf("query2doc's generations are not among the inputs: %+v", here.Manifest.Inputs)
		}
		// The folder as the generations directory of a task read
		// otherwise reads them through its card too.
		cfg.GARDir = dir
		plain, err := Run(ctx, local, cfg, Options{})
		if err != nil {
			t.Fatalf("%s with --gar-dir: %v", gar.Method, err)
		}
		sameRun(t, gar.Method+" with --gar-dir", plain.Run, viaHub.Run)
	}
}

// denseSet builds a Nano set of the demo task with a dense list under
// NanoR2MED's config name, and writes it as a hub folder.
func denseSet(t *testing.T) (set *nano.Set, dir string) {
	t.Helper()
	task := loadDemo(t)
	// A stand-in dense ranking: R2MED's BM25 (the set's bm25 list is
	// Robertson's), over the whole demo corpus, which the set keeps.
	r, err := retrieve.New(context.Background(), retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := r.Search(context.Background(), retrieve.Queries(task.Queries), 50)
	if err != nil {
		t.Fatal(err)
	}
	set, err = nano.Build(task, nano.Options{Split: "NanoR2MEDBiology", Dense: dense, DenseConfig: "harrier_oss_v1_270m"})
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "NanoR2MED")
	if err := nano.WriteHub(set, dir, ""); err != nil {
		t.Fatal(err)
	}
	return set, dir
}

// candidates:dense, as NanoR2MED's card and r2med stats call the list,
// reads harrier_oss_v1_270m, as do the card's label and the config's own
// name; without the card (the Hub's NanoR2MED is fetched without it) the
// set's one other candidate config is its dense list; and r2med stats finds
// a dense list whatever the set named it.
func TestCandidatesByCardName(t *testing.T) {
	ctx := context.Background()
	set, dir := denseSet(t)
	task, err := Source{Data: dir}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	published := set.Subset("dense").Run
	run := func(name string) *Outcome {
		t.Helper()
		out, err := Run(ctx, task, Config{Retrievers: []retrieve.Spec{retrieve.Candidates{Config: name}}, TopK: 100}, Options{})
		if err != nil {
			t.Fatalf("candidates:%s: %v", name, err)
		}
		for qid, hits := range published {
			var want, got []string
			for _, h := range hits {
				want = append(want, h.DocID)
			}
			for _, h := range out.Run[qid] {
				got = append(got, h.DocID)
			}
			if !slices.Equal(got, want[:min(len(want), 100)]) {
				t.Errorf("candidates:%s, query %s: %v, the dense list %v", name, qid, got, want)
			}
		}
		return out
	}
	for _, name := range []string{"dense", "Dense", "harrier_oss_v1_270m"} {
		out := run(name)
		if got := out.Manifest.Config["config"]; name != "harrier_oss_v1_270m" && got != "harrier_oss_v1_270m" {
			t.Errorf("candidates:%s: the manifest does not say which config it read: %v", name, out.Manifest.Config)
		}
	}
	if _, err := Run(ctx, task, Config{Retrievers: []retrieve.Spec{retrieve.Candidates{Config: "sparse"}}, TopK: 100}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "harrier_oss_v1_270m (dense)") || !strings.Contains(err.Error(), "reranking_hybrid") {
		t.Errorf("an unknown list: %v", err)
	}
	// "Reranking hybrid" is the card's label of reranking_hybrid, and
	// keeps its safeguard treatment.
	spec, err := retrieve.Resolve(ctx, retrieve.Candidates{Config: "Reranking hybrid"}, task)
	if err != nil || !spec.(retrieve.Candidates).Safeguarded() {
		t.Errorf("Reranking hybrid: %v, %+v", err, spec)
	}

	// Without the card.
	if err := os.RemoveAll(filepath.Join(dir, "metadata")); err != nil {
		t.Fatal(err)
	}
	run("dense")

	// r2med stats: the card's dense list under either config name.
	for _, config := range []string{"harrier_oss_v1_270m", "dense"} {
		set, err := nano.Build(loadDemo(t), nano.Options{Split: "NanoR2MEDBiology", Dense: published, DenseConfig: config})
		if err != nil {
			t.Fatal(err)
		}
		d := t.TempDir()
		if err := nano.WriteHub(set, d, ""); err != nil {
			t.Fatal(err)
		}
		nt, err := Source{Data: d}.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := taskstats.Of(nt)
		if _, err := p.AddHubCandidates(d, nt, taskstats.NanoR2MEDCandidates); err != nil {
			t.Fatal(err)
		}
		if m, ok := p.CandidateSubsets["dense"]; !ok || m.Config != config {
			t.Errorf("stats of a set whose dense config is %s: %+v", config, p.CandidateSubsets)
		}
	}
}

// chatStub is a loopback OpenAI-compatible chat server that answers every
// listwise prompt "[1] > [2]" and keeps the prompts.
type chatStub struct {
	mu      sync.Mutex
	prompts []string
}

func (c *chatStub) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		c.mu.Lock()
		c.prompts = append(c.prompts, req.Messages[len(req.Messages)-1].Content)
		c.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "[1] > [2]"}, "finish_reason": "stop"}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var shownRE = regexp.MustCompile(`(?m)^\[\d+\] \((retriever (?:score|rank)): ([^)]*)\)`)

// InsertRank over a candidate list published without scores shows each
// passage's rank and says that only ranks are known, in the prompt and in
// the trace; over a list with scores it shows those scores; and over a
// BM25 run, BM25's.
func TestInsertRankShowsRanksOfUnscoredLists(t *testing.T) {
	ctx := context.Background()
	set, dir := denseSet(t)
	task, err := Source{Data: dir}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rerankWith := func(t *testing.T, task *ir.Task, retr retrieve.Spec) (prompts []string, traces []rerank.Trace) {
		t.Helper()
		stub := &chatStub{}
		cfg := Config{Retrievers: []retrieve.Spec{retr}, TopK: 100,
			Rerank: Rerank{Kind: "insertrank", Model: "m", BaseURLs: []string{stub.serve(t)}, Depth: 5}}
		out := t.TempDir()
		if _, err := Run(ctx, task, cfg, Options{Out: out}); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(out, "stages", "*.trace.jsonl"))
		if len(files) != 1 {
			t.Fatalf("trace files %q", files)
		}
		f, err := os.Open(files[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var tr rerank.Trace
			if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
				t.Fatal(err)
			}
			traces = append(traces, tr)
		}
		if len(stub.prompts) == 0 || len(traces) != len(stub.prompts) {
			t.Fatalf("%d prompts, %d traces", len(stub.prompts), len(traces))
		}
		return stub.prompts, traces
	}

	// Ranks alone.
	prompts, traces := rerankWith(t, task, retrieve.Candidates{Config: "dense"})
	for _, p := range prompts {
		if !strings.Contains(p, "the list gives ranks only, no scores") || strings.Contains(p, "score:") {
			t.Fatalf("a prompt over a list without scores:\n%s", p)
		}
		for i, m := range shownRE.FindAllStringSubmatch(p, -1) {
			if m[1] != "retriever rank" || m[2] != fmt.Sprint(i+1) {
				t.Errorf("passage %d shows %s: %s", i+1, m[1], m[2])
			}
		}
	}
	for _, tr := range traces {
		if tr.FirstStage != "ranks only: the candidate list has no scores" || !slices.Equal(tr.Shown, []string{"1", "2", "3", "4", "5"}) {
			t.Errorf("trace of %s: first stage %q, shown %q", tr.QueryID, tr.FirstStage, tr.Shown)
		}
	}

	// Published scores: a copy of the set whose dense list carries them.
	scored := withScores(t, dir, set.Subset("dense"))
	stask, err := Source{Data: scored}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prompts, traces = rerankWith(t, stask, retrieve.Candidates{Config: "dense"})
	for _, tr := range traces {
		hits := set.Subset("dense").Run[tr.QueryID]
		var want []string
		for _, h := range hits[:5] {
			want = append(want, fmt.Sprintf("%.2f", h.Score))
		}
		if tr.FirstStage != "scores" || !slices.Equal(tr.Shown, want) {
			t.Errorf("trace of %s: first stage %q, shown %q, want the published %q", tr.QueryID, tr.FirstStage, tr.Shown, want)
		}
	}
	for _, p := range prompts {
		if strings.Contains(p, "ranks only") || len(shownRE.FindAllStringSubmatch(p, -1)) != 5 || shownRE.FindStringSubmatch(p)[1] != "retriever score" {
			t.Fatalf("a prompt over a list with scores:\n%s", p)
		}
	}
}

// withScores copies a Nano hub folder and gives its dense list the
// scores it was ranked by (a corpus-scores column, JSON lines).
func withScores(t *testing.T, dir string, sub *nano.Subset) string {
	t.Helper()
	files := nanotest.DirFiles(t, dir)
	out := filepath.Join(t.TempDir(), "scored")
	delete(files, nano.DataFile(sub.Config, "NanoR2MEDBiology"))
	var b strings.Builder
	for _, qid := range slices.Sorted(maps.Keys(sub.Run)) {
		var ids []string
		var scores []float64
		for _, h := range sub.Run[qid] {
			ids = append(ids, h.DocID)
			scores = append(scores, h.Score)
		}
		line, _ := json.Marshal(map[string]any{"query-id": qid, "corpus-ids": ids, "corpus-scores": scores})
		b.Write(append(line, '\n'))
	}
	files[sub.Config+"/NanoR2MEDBiology.jsonl"] = []byte(b.String())
	readme := string(files["README.md"])
	old := sub.Config + "/NanoR2MEDBiology-00000-of-00001.parquet"
	if !strings.Contains(readme, old) {
		t.Fatalf("README.md does not name %s:\n%s", old, readme)
	}
	files["README.md"] = []byte(strings.Replace(readme, old, sub.Config+"/NanoR2MEDBiology.jsonl", 1))
	nanotest.WriteDir(t, out, files)
	return out
}
