package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant replaces the first old in the file at path with new, which holds
// a byte that is not UTF-8.
func plant(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", path, old)
	}
	os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

// Invalid UTF-8 in any file a command reads whole is an error naming the
// file, the line and the byte offset in it, never a silent U+FFFD: the
// pipeline YAML, the price table, results.json and manifest.json, edited
// prompt templates (rerank and gar) and plain-text and TSV training
// files of the audit.
func TestInvalidUTF8NamesFileLineAndOffset(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("R2MED_CACHE", filepath.Join(dir, "cache"))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	fix := "the file must be UTF-8 text"
	pipe := write("p.yaml", "name: x\nretrieve: [{bm25: {scheme: r2m\xffed}}]\n")
	prices := write("prices.yaml", "\"*\": {input: 1}\ngpt\xff: {input: 2}\n")
	txt := write("train.txt", "a text\nbad \xff text\n")
	tsv := write("train.tsv", "text\tlabel\nok\t1\nbad \xff\t1\n")
	tsvHead := write("head.tsv", "te\xffxt\tlabel\nok\t1\n")

	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--task", "demo", "--out", filepath.Join(res, "bm25", "demo"), "--quiet")
	resDir := filepath.Join(res, "bm25", "demo")

	tmpl := filepath.Join(dir, "tmpl")
	mustRun(t, "rerank", "templates", "--out", tmpl)
	os.WriteFile(filepath.Join(tmpl, "insertrank.system.tmpl"), []byte("Rank\ncare\xfffully.\n"), 0o644)
	gar := filepath.Join(dir, "gar")
	mustRun(t, "gar", "templates", "--out", gar)
	garFiles, _ := filepath.Glob(filepath.Join(gar, "*.tmpl"))
	os.WriteFile(garFiles[0], []byte("Write\n\xc3 a passage.\n"), 0o644)

	for _, c := range []struct {
		name string
		args []string
		prep func()
		want string
	}{
		{"pipeline", []string{"run", "--task", "demo", "--pipeline", pipe, "--out", filepath.Join(dir, "o1"), "--quiet"}, nil,
			pipe + ": line 2: invalid UTF-8 (byte 0xff) at byte offset 30 of the line; " + fix},
		{"prices", []string{"run", "--task", "demo", "--prices", prices, "--out", filepath.Join(dir, "o2"), "--quiet"}, nil,
			prices + ":2: invalid UTF-8 (byte 0xff) at byte offset 3 of the line; " + fix},
		{"results.json", []string{"results"}, func() {
			plant(t, filepath.Join(resDir, "results.json"), `"demo"`, "\"de\xffmo\"")
		}, filepath.Join(resDir, "results.json") + ":"},
		{"manifest.json", []string{"leaderboard", "--format", "json"}, func() {
			plant(t, filepath.Join(resDir, "results.json"), "\"de\xffmo\"", `"demo"`)
			plant(t, filepath.Join(resDir, "manifest.json"), `"demo"`, "\"de\xffmo\"")
		}, filepath.Join(resDir, "manifest.json") + ":"},
		{"rerank templates", []string{"rerank", "--task", "demo", "--run", filepath.Join(resDir, "run.trec"), "--rerank", "insertrank", "--rerank-model", "m",
			"--rerank-url", "http://127.0.0.1:1/v1", "--rerank-templates", tmpl, "--out", filepath.Join(dir, "r.trec"), "--quiet"}, nil,
			filepath.Join(tmpl, "insertrank.system.tmpl") + ":2: invalid UTF-8 (byte 0xff) at byte offset 4 of the line; " + fix},
		{"gar templates", []string{"gar", "generate", "--task", "demo", "--method", "hyde", "--templates", gar, "--llm-model", "m", "--llm-base-url", "http://127.0.0.1:1/v1", "--out", filepath.Join(dir, "g")}, nil,
			garFiles[0] + ":2: invalid UTF-8 (byte 0xc3) at byte offset 0 of the line; " + fix},
		{"audit text", []string{"audit", "leakage", "--against", "demo", "--train", txt}, nil,
			txt + ":2: invalid UTF-8 (byte 0xff) at byte offset 4 of the line; " + fix},
		{"audit tsv", []string{"audit", "leakage", "--against", "demo", "--train", tsv}, nil,
			tsv + ":3: invalid UTF-8 (byte 0xff) at byte offset 4 of the line; " + fix},
		{"audit tsv header", []string{"audit", "leakage", "--against", "demo", "--train", tsvHead}, nil,
			tsvHead + ":1: invalid UTF-8 (byte 0xff) at byte offset 2 of the line; " + fix},
	} {
		if c.prep != nil {
			c.prep()
		}
		t.Setenv("R2MED_RESULTS", res)
		_, stderr, code := r2med(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, " of the line; "+fix) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.name, code, stderr, c.want)
		}
	}
}
