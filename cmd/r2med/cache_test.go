package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/models"
	costs "github.com/r2med/r2med/usage"
)

// fillCache embeds n texts per model through embed.Cached, as a run does.
func fillCache(t *testing.T, dir string, n int, names ...string) {
	t.Helper()
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fake := embed.Func(func(_ context.Context, _ embed.Input, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 2, 3, 4}
		}
		return out, nil
	})
	for _, name := range names {
		m, ok := models.Lookup(name)
		if !ok {
			t.Fatalf("no model %s", name)
		}
		texts := make([]string, n)
		for i := range texts {
			texts[i] = fmt.Sprint(name, i)
		}
		if _, err := embed.Cached(fake, s, m.Identity(m.Backends[0], "")).Embed(context.Background(), embed.Document, texts); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCLICacheStatsAndPrune(t *testing.T) {
	dir := t.TempDir()
	if out := mustRun(t, "cache", "stats", "--cache", dir); out != "no cache at "+dir+"\n" {
		t.Errorf("stats of an empty directory: %q", out)
	}
	fillCache(t, dir, 3, "bge", "medcpt", "medcpt-r2med")
	fillCache(t, dir, 2, "nv")

	out := mustRun(t, "cache", "stats", "--cache", dir)
	for _, want := range []string{
		"embed  BAAI/bge-large-en-v1.5",
		"ncbi/MedCPT-Query-Encoder+ncbi/MedCPT-Article-Encoder",
		"all", "11", "file " + dir,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	var rows []struct {
		Kind, Model string
		Entries     int
		Bytes       int64
	}
	if err := json.Unmarshal([]byte(mustRun(t, "cache", "stats", "--cache", dir, "--format", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Model != "BAAI/bge-large-en-v1.5" || rows[0].Entries != 3 || rows[0].Bytes < 3*(32+9+7+16) || rows[0].Bytes > 3*(32+9+10+16) { // key, header, usage record (mark, tokens, µs as 1-4 byte varints, flags), 4 float32s
		t.Errorf("stats JSON: %+v", rows)
	}

	if _, stderr, code := r2med(t, "", "cache", "prune", "--cache", dir); code == 0 || !strings.Contains(stderr, "--all") {
		t.Errorf("prune without a selection: exit %d %s", code, stderr)
	}
	// A registry name reaches its label; medcpt leaves medcpt-r2med alone.
	if out := mustRun(t, "cache", "prune", "--cache", dir, "--model", "medcpt"); !strings.HasPrefix(out, "removed 3 entries") {
		t.Errorf("prune medcpt: %q", out)
	}
	if out := mustRun(t, "cache", "prune", "--cache", dir, "--model", "nvidia/NV-Embed-v2"); !strings.HasPrefix(out, "removed 2 entries") {
		t.Errorf("prune by Hub id: %q", out)
	}
	// Nothing is older than a day.
	if out := mustRun(t, "cache", "prune", "--cache", dir, "--older-than", "1d"); !strings.HasPrefix(out, "removed 0 entries") {
		t.Errorf("prune --older-than 1d: %q", out)
	}
	if out := mustRun(t, "cache", "prune", "--cache", dir, "--all"); !strings.HasPrefix(out, "removed 6 entries") {
		t.Errorf("prune --all: %q", out)
	}
	if out := mustRun(t, "cache", "stats", "--cache", dir, "--format", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("after prune --all: %s", out)
	}

	// A cache another process holds is a clear error, not a hang.
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, stderr, code := r2med(t, "", "cache", "prune", "--cache", dir, "--all")
	if code == 0 || !strings.Contains(stderr, "in use by another r2med process") {
		t.Errorf("prune of a held cache: exit %d %s", code, stderr)
	}
}

func TestCacheDefaultDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("R2MED_CACHE", dir)
	fillCache(t, dir, 1, "contriever")
	if out := mustRun(t, "cache", "stats"); !strings.Contains(out, "facebook/contriever-msmarco") {
		t.Errorf("stats with $R2MED_CACHE:\n%s", out)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"36h": 36 * time.Hour, "30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-3d", "x", "1.5d", "-1h", "200000d", "30000w"} {
		if _, err := parseAge(bad); err == nil {
			t.Errorf("parseAge(%q) accepted", bad)
		}
	}
}

// A run's entries go from one cache to another through export and import,
// and the other machine replays them without a model server.
func TestCLICacheExportImportReplay(t *testing.T) {
	src, dst, run := t.TempDir(), t.TempDir(), t.TempDir()
	fillCache(t, src, 4, "nv") // entries the run does not use

	// The "run": embeds three texts with the cache recording, and writes
	// the key list beside its manifest, as the pipeline does.
	s, err := cache.Open(src, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := models.Lookup("bge")
	id := m.Identity(m.Backends[0], "")
	rec := s.Record()
	texts := []string{"alpha", "beta", "gamma"}
	if _, err := embed.Cached(embed.Func(func(_ context.Context, _ embed.Input, in []string) ([][]float32, error) {
		out := make([][]float32, len(in))
		for i, s := range in {
			out[i] = []float32{float32(len(s)), 1}
		}
		return out, nil
	}), s, id).Embed(context.Background(), embed.Document, texts); err != nil {
		t.Fatal(err)
	}
	rec.Stop()
	if err := rec.WriteFile(filepath.Join(run, cache.KeysFile)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(run, "manifest.json"), []byte("{}"), 0o644)
	s.Close()

	file := filepath.Join(t.TempDir(), "share.jsonl.gz")
	out := mustRun(t, "cache", "export", "--cache", src, "--manifest", filepath.Join(run, "manifest.json"), "--out", file)
	if !strings.Contains(out, "exported 3 entries") {
		t.Errorf("export: %q", out)
	}
	out = mustRun(t, "cache", "import", "--cache", dst, file)
	if !strings.Contains(out, "3 entries, 3 added, 0 already there") {
		t.Errorf("import: %q", out)
	}
	if out = mustRun(t, "cache", "import", "--cache", dst, file); !strings.Contains(out, "0 added, 3 already there") {
		t.Errorf("second import: %q", out)
	}

	d, err := cache.Open(dst, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := embed.Cached(embed.Func(func(context.Context, embed.Input, []string) ([][]float32, error) {
		t.Fatal("replay called the backend")
		return nil, nil
	}), d, id)
	c.Replay = true
	got, err := c.Embed(context.Background(), embed.Document, texts)
	if err != nil || got[1][0] != 4 {
		t.Fatalf("replay: %v %v", got, err)
	}
	if st, _ := d.Stats(); len(st) != 1 {
		t.Errorf("the other model's entries were exported too: %+v", st)
	}

	// Selection errors, and a kind/label export.
	for args, want := range map[string]string{
		"--out x":                                "say what to export",
		"--manifest m --kind embed --out x":      "do not combine",
		"--manifest " + t.TempDir() + " --out x": "recorded no cache keys",
	} {
		_, stderr, code := r2med(t, "", append([]string{"cache", "export", "--cache", src}, strings.Fields(args)...)...)
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, %q", args, code, stderr)
		}
	}
	out = mustRun(t, "cache", "export", "--cache", src, "--kind", "embed", "--label", id.Model, "--out", file)
	if !strings.Contains(out, "exported 3 entries") {
		t.Errorf("by label: %q", out)
	}
}

// TestCacheStatsTokensAndDollars: cache stats gave entries and bytes per
// model and no tokens or dollars; it now sums the usage each entry was
// stored with (the servers' counts, else estimated and said to be),
// prices it by --prices as run does, names the model a server answered
// with, and counts apart the entries that record no usage. Every count
// is checked against what the servers answered and the generation
// manifests say.
func TestCacheStatsTokensAndDollars(t *testing.T) {
	counted, _ := yesLoopback(t, map[string]any{"prompt_tokens": 10, "completion_tokens": 1}, "gpt-x-2025-01-31")
	uncounted, _ := yesLoopback(t, nil, "")
	data := demoDir(t)
	dir := t.TempDir()
	gen := func(method, model, url string) map[string]any {
		mustRun(t, "gar", "generate", "--method", method, "--llm-model", model, "--llm-base-url", url+"/v1",
			"--data", data, "--style", "exam", "--cache", dir, "--quiet")
		var m map[string]any
		b, err := os.ReadFile(filepath.Join(data, method, model, "generation_manifest.json"))
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			t.Fatal(err)
		}
		return m["usage"].(map[string]any)
	}
	gen("hyde", "gpt-x", counted.URL)
	local := gen("query2doc", "local-m", uncounted.URL)
	fillCache(t, dir, 3, "bge")
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// An answer cached before usage was recorded.
	if err := s.PutMany(cache.Bucket("generate", "old-m"), [][]byte{cache.Key("q")}, [][]byte{[]byte(`{"content":"Yes"}`)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	os.WriteFile(prices, []byte("gpt-x: {input: 1000, output: 2000}\nold-m: {input: 1, output: 1}\n"), 0o644)

	n := len(mustLoadDemo(t).Queries)
	var rows []struct {
		Model        string
		Entries      int
		WithoutUsage int      `json:"entries_without_usage"`
		Estimated    string   `json:"estimated_tokens"`
		Served       []string `json:"served"`
		USD          *float64 `json:"usd"`
	}
	var raw []map[string]any // for usage's counts, by their names
	doc := []byte(mustRun(t, "cache", "stats", "--cache", dir, "--prices", prices, "--format", "json"))
	if err := errors.Join(json.Unmarshal(doc, &rows), json.Unmarshal(doc, &raw)); err != nil {
		t.Fatal(err)
	}
	byModel := map[string]int{}
	for i, r := range rows {
		byModel[r.Model] = i
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4 (bge, gpt-x, local-m, old-m): %+v", len(rows), rows)
	}
	tokens := func(model, field string) int {
		u, _ := raw[byModel[model]]["usage"].(map[string]any)
		f, _ := u[field].(float64)
		return int(f)
	}
	gx := rows[byModel["gpt-x"]]
	if gx.Entries != n || tokens("gpt-x", "calls") != n || tokens("gpt-x", "prompt_tokens") != 10*n || tokens("gpt-x", "completion_tokens") != n ||
		gx.Estimated != "" || strings.Join(gx.Served, ",") != "gpt-x-2025-01-31" || gx.USD == nil || !near(*gx.USD, float64(10*n*1000+n*2000)/1e6) {
		t.Errorf("gpt-x: %+v (usage %v), want %d answers of 10+1 tokens, $%v", gx, raw[byModel["gpt-x"]]["usage"], n, float64(10*n*1000+n*2000)/1e6)
	}
	lm := rows[byModel["local-m"]]
	if tokens("local-m", "prompt_tokens") != int(local["prompt_tokens"].(float64)) || tokens("local-m", "completion_tokens") != int(local["completion_tokens"].(float64)) ||
		tokens("local-m", "estimated_calls") != n || lm.Estimated != "utf8-bytes/4" || lm.USD != nil {
		t.Errorf("local-m: %v, estimated %q, usd %v; its generation manifest says %v", raw[byModel["local-m"]]["usage"], lm.Estimated, lm.USD, local)
	}
	if bge := rows[byModel["BAAI/bge-large-en-v1.5"]]; tokens("BAAI/bge-large-en-v1.5", "calls") != 3 || tokens("BAAI/bge-large-en-v1.5", "prompt_tokens") != 3 || bge.Estimated == "" {
		t.Errorf("bge: %v estimated %q; want 3 texts of 1 estimated token", raw[byModel["BAAI/bge-large-en-v1.5"]]["usage"], bge.Estimated)
	}
	if old := rows[byModel["old-m"]]; old.WithoutUsage != 1 || tokens("old-m", "calls") != 0 || old.USD != nil {
		t.Errorf("old-m: %+v", old)
	}

	out := mustRun(t, "cache", "stats", "--cache", dir, "--prices", prices)
	for _, want := range []string{
		"gpt-x was answered by gpt-x-2025-01-31", fmt.Sprintf("%d  ", 10*n), costs.USDText(*gx.USD), "no price", "unknown",
		fmt.Sprintf("* the tokens of %d of the entries are estimated (utf8-bytes/4", n+3),
		"1 entry records no usage (cached before r2med recorded it, or unreadable): its tokens are not counted, nor its cost",
		"the price table has no price for BAAI/bge-large-en-v1.5, local-m: no total",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	// A row fits 120 columns (the served model is named under the table),
	// and an entry without usage is no $0.
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 120 && !strings.HasPrefix(line, "file ") {
			t.Errorf("a line of %d columns: %q", n, line)
		}
		if strings.HasPrefix(line, "generate  old-m") && (strings.Contains(line, "$0") || !strings.Contains(line, "  -       -  ")) {
			t.Errorf("entries without usage priced at $0: %q", line)
		}
	}
}

func mustLoadDemo(t *testing.T) *ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TestCacheExportRerankManifest: cache export --manifest took any file's
// directory and exported the entries listed there, so a rerank's
// OUT.manifest.json written into a run's directory exported that run's
// entries as the rerank's; a manifest not named manifest.json is now
// refused, saying how to export instead.
func TestCacheExportRerankManifest(t *testing.T) {
	srv, _ := yesLoopback(t, nil, "")
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	mustRun(t, "run", "--task", "demo", "--rerank", "llm-pointwise", "--rerank-model", "m", "--rerank-url", srv.URL+"/v1", "--rerank-depth", "2",
		"--cache", filepath.Join(dir, "cache"), "--out", run, "--quiet")
	out := filepath.Join(run, "again.trec")
	mustRun(t, "rerank", "--task", "demo", "--run", filepath.Join(run, "run.trec"), "--rerank", "llm-pointwise", "--rerank-model", "other",
		"--rerank-url", srv.URL+"/v1", "--rerank-depth", "1", "--cache", filepath.Join(dir, "cache"), "--out", out, "--quiet", "--no-eval")
	_, stderr, code := r2med(t, "", "cache", "export", "--cache", filepath.Join(dir, "cache"), "--manifest", out+".manifest.json", "--out", filepath.Join(dir, "x.jsonl.gz"))
	if code == 0 || !strings.Contains(stderr, "--kind generate --label MODEL") {
		t.Errorf("exit %d: a rerank's manifest exported the run's entries beside it:\n%s", code, stderr)
	}
	// A run's manifest, by file or directory, still exports its entries.
	for _, m := range []string{run, filepath.Join(run, "manifest.json")} {
		if stdout := mustRun(t, "cache", "export", "--cache", filepath.Join(dir, "cache"), "--manifest", m, "--out", filepath.Join(dir, "y.jsonl.gz")); !strings.Contains(stdout, fmt.Sprintf("exported %d entries", 2*len(mustLoadDemo(t).Queries))) {
			t.Errorf("--manifest %s: %s", m, stdout)
		}
	}
}
