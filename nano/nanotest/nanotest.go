// Package nanotest puts repositories shaped like the benchmark's on a fake
// Hub (hubtest.Server), built from the built-in demo task, so that the
// whole data path (the task registry, the hub cache, the dataset readers,
// GAR generations and published candidate lists) can be tested end to end
// without the network:
//
//   - R2MED/Biology, as R2MED's task repositories are laid out (corpus.jsonl,
//     query.jsonl, qrels.jsonl and hyde/gpt4/query_with_hydoc.jsonl at the
//     root, found through the README's configs), served at the revision the
//     task registry pins for Biology; its main branch has since moved to a
//     commit with fewer judgments, so reading main instead shows.
//   - hakari-bench/NanoR2MED at main, written by nano.Build and nano.WriteHub:
//     the NanoR2MEDBiology split (DocLimit 60) and a NanoR2MEDBioinformatics
//     split (DocLimit 40), so that fetching one task's split alone shows.
package nanotest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

// Sizes of what Serve builds.
const (
	// MainQrels is the number of judgments R2MED/Biology keeps at main.
	MainQrels = 10
	// NanoDocLimit and OtherNanoDocLimit are the corpus sizes of the
	// NanoR2MEDBiology and NanoR2MEDBioinformatics splits.
	NanoDocLimit      = 60
	OtherNanoDocLimit = 40
)

// Readme is the front matter of R2MED's task repositories: a config per
// file, its split named after it, and a config per GAR method whose splits
// are the LLMs (split names cannot hold "-").
const Readme = `---
configs:
  - config_name: corpus
    data_files:
      - split: corpus
        path: corpus.jsonl
  - config_name: query
    data_files:
      - split: query
        path: query.jsonl
  - config_name: qrels
    data_files:
      - split: qrels
        path: qrels.jsonl
  - config_name: hyde
    data_files:
      - split: gpt4
        path: hyde/gpt4/query_with_hydoc.jsonl
---

# Biology (a test fixture: the r2med demo task in R2MED's repository layout)
`

// Repos describes what Serve added.
type Repos struct {
	Biology tasks.Task
	// BiologyCommit is Biology's pinned revision, holding R2MEDFiles;
	// BiologyMain is the later commit main points to.
	BiologyCommit, BiologyMain string
	R2MEDFiles                 map[string][]byte
	// Nano is the NanoR2MEDBiology split as built, with its metadata.
	Nano         *nano.Set
	NanoMetadata *nano.Metadata
	NanoCommit   string
}

// Serve adds the repositories to srv.
func Serve(t testing.TB, srv *hubtest.Server) *Repos {
	t.Helper()
	r := &Repos{Biology: lookup(t, "Biology"), R2MEDFiles: R2MEDFiles(t)}
	r.BiologyCommit = srv.AddRepo(r.Biology.Repo, r.R2MEDFiles, hubtest.Commit(r.Biology.Revision))
	moved := maps.Clone(r.R2MEDFiles)
	moved["qrels.jsonl"] = firstLines(r.R2MEDFiles["qrels.jsonl"], MainQrels)
	r.BiologyMain = srv.AddRepo(r.Biology.Repo, moved)

	dir := t.TempDir()
	for _, split := range []struct {
		task  tasks.Task
		limit int
	}{{r.Biology, NanoDocLimit}, {lookup(t, "Bioinformatics"), OtherNanoDocLimit}} {
		set, err := nano.Build(loadDemo(t), nano.Options{Split: split.task.NanoSplit, DocLimit: split.limit})
		if err != nil {
			t.Fatal(err)
		}
		if err := nano.WriteHub(set, dir, ""); err != nil {
			t.Fatal(err)
		}
		if split.task.Name == r.Biology.Name {
			r.Nano = set
			if r.NanoMetadata, err = set.Metadata(); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.NanoCommit = srv.AddRepo(tasks.NanoRepo, DirFiles(t, dir))
	return r
}

// R2MEDFiles is the demo task in R2MED's repository layout: its own
// corpus, query and qrels files, Readme, and HyDE "generations" by gpt4
// that are each query's first relevant document (by id), so that HyDE
// retrieval does visibly better than the queries alone.
func R2MEDFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{"README.md": []byte(Readme)}
	for _, name := range []string{"corpus.jsonl", "query.jsonl", "qrels.jsonl"} {
		b, err := fs.ReadFile(demo.FS, "data/"+name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}

	task := loadDemo(t)
	text := make(map[string]string, len(task.Corpus))
	for _, d := range task.Corpus {
		text[d.ID] = d.Text
	}
	var gens bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(files["query.jsonl"]))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct{ ID, Text string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		rel := trec.QueryIDs(task.Qrels[q.ID])
		if len(rel) == 0 {
			t.Fatalf("nanotest: demo query %s has no judgment", q.ID)
		}
		line, _ := json.Marshal(map[string]any{"id": q.ID, "text": q.Text, "hy_doc": text[rel[0]], "doc_id": rel})
		gens.Write(line)
		gens.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	files["hyde/gpt4/query_with_hydoc.jsonl"] = gens.Bytes()
	return files
}

// DirFiles reads every file under dir, keyed by slash path, as AddRepo
// takes them.
func DirFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// WriteDir writes files (slash path → content) under dir.
func WriteDir(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func loadDemo(t testing.TB) *ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func lookup(t testing.TB, name string) tasks.Task {
	t.Helper()
	task, err := tasks.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func firstLines(b []byte, n int) []byte {
	return bytes.Join(bytes.SplitAfter(b, []byte("\n"))[:n], nil)
}
