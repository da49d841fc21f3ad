package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/tasks"
)

// The files a run directory holds; pipeline.Run writes them under these
// names, the manifest last.
const (
	RunFile      = "run.trec"
	ResultsFile  = "results.json"
	ManifestFile = "manifest.json"
)

// Run is one finished run found on disk: a directory holding a result file
// and the manifest that marks it finished.
type Run struct {
	Dir      string // the directory, as found under the scanned root
	Rel      string // Dir relative to the root, "." for the root itself
	Result   *R2MED
	Manifest *Manifest
}

// Listing is what Scan found under a results directory.
type Listing struct {
	Root string
	// Runs are the finished runs in lexical order of their directories.
	Runs []Run
	// Unfinished are directories with a result file but no manifest: a run
	// that was interrupted or is still going. They are listed, not read.
	Unfinished []string
}

// Scan finds every run directory under root, at any depth: each directory
// holding ResultsFile. A run whose manifest is there is read whole; a
// malformed file is an error naming it, so a broken run is never silently
// left out of a leaderboard, and so is a result file that is not the one
// its manifest vouches for, whose numbers would not be the run's. A root that does not exist is an empty
// listing, so a fresh checkout lists no runs rather than failing; a root
// that is a symbolic link to a directory is followed (links below it are
// not), and one that is a file is an error.
func Scan(root string) (*Listing, error) {
	l := &Listing{Root: root}
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l, nil
	case err != nil:
		return nil, fmt.Errorf("scanning results: %w", err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s is not a directory: give the directory runs are written under (--results)", root)
	}
	// A root that is a symbolic link (a scratch disk linked into the
	// project) is walked through: WalkDir does not follow a link, even
	// its root, unless the path names the directory itself ("link/").
	walk := root
	if lst, err := os.Lstat(root); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		walk = root + string(filepath.Separator)
	}
	err = filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("scanning results: %w", err)
		}
		if d.IsDir() || d.Name() != ResultsFile {
			return nil
		}
		dir := filepath.Dir(path)
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			rel = dir
		}
		mpath := filepath.Join(dir, ManifestFile)
		if _, err := os.Stat(mpath); errors.Is(err, fs.ErrNotExist) {
			l.Unfinished = append(l.Unfinished, dir)
			return nil
		}
		res, err := ReadR2MED(path)
		if err != nil {
			return err
		}
		m, err := ReadManifest(mpath)
		if err != nil {
			return err
		}
		if m.Task.Name == "" {
			return fileio.Errorf(mpath, 0, "manifest names no task (task.name is empty); rerun the run or delete %s", dir)
		}
		r := Run{Dir: dir, Rel: rel, Result: res, Manifest: m}
		if err := r.checkOutput(ResultsFile); err != nil {
			return err
		}
		l.Runs = append(l.Runs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(l.Runs, func(a, b Run) int { return strings.Compare(a.Dir, b.Dir) })
	return l, nil
}

// Task returns the R2MED task the run is on, in R2MED's spelling, and
// whether it was one: a NanoR2MED split ("NanoR2MEDBiology") maps to its
// task too, see Suite. Runs on other data (the demo task, BEIR sets) give
// the manifest's name and false.
func (r Run) Task() (string, bool) {
	t, err := tasks.Lookup(r.Manifest.Task.Name)
	if err != nil {
		return r.Manifest.Task.Name, false
	}
	return t.Name, true
}

// Suite says which form of an R2MED task the run used: tasks.Nano when the
// manifest names a NanoR2MED split, tasks.R2MED otherwise; for a run on a
// BRIGHT task (its data named "BRIGHT-…", tasks.Task.NameIn) tasks.Bright
// or tasks.BrightLong.
func (r Run) Suite() tasks.Suite {
	if _, s, err := tasks.Resolve(r.Manifest.Task.Name); err == nil && s.Benchmark() == tasks.Bright {
		return s
	}
	t, err := tasks.Lookup(r.Manifest.Task.Name)
	if err == nil && t.NanoSplit != "" && (strings.EqualFold(r.Manifest.Task.Name, t.NanoSplit) || strings.EqualFold(r.Manifest.Task.Split, t.NanoSplit)) {
		return tasks.Nano
	}
	return tasks.R2MED
}

// Seconds is the run's total stage time.
func (r Run) Seconds() float64 {
	var s float64
	for _, st := range r.Manifest.Stages {
		s += st.Seconds
	}
	return s
}

// Started is when the run began.
func (r Run) Started() time.Time { return r.Manifest.Started }

// RunPath is the run's ranked list, "" when the directory has none.
func (r Run) RunPath() string {
	p := filepath.Join(r.Dir, RunFile)
	if p, ok := fileio.Exists(p); ok {
		return p
	}
	return ""
}

// CheckRunFile reports a run file that is not the one the manifest
// vouches for (cut short, edited, replaced): its numbers would not be the
// run's. A manifest that recorded no checksum (an older r2med) vouches
// for nothing, and a file gzipped since (RunFile.gz) holds other bytes:
// neither is checked.
func (r Run) CheckRunFile() error {
	if r.RunPath() != filepath.Join(r.Dir, RunFile) {
		return nil
	}
	return r.checkOutput(RunFile)
}

// checkOutput reports an output file (name, in Dir) whose checksum is not
// the one the manifest recorded for it; one it recorded none for passes.
func (r Run) checkOutput(name string) error {
	if r.Manifest == nil {
		return nil
	}
	want, ok := r.Manifest.OutputSHA256[name]
	if !ok {
		return nil
	}
	p := filepath.Join(r.Dir, name)
	got, err := reuse.Sum(p)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s changed since the run wrote it (sha256 %.12s…, %s records %.12s…); its numbers would not be the run's: run it again, or restore the file", p, got, ManifestFile, want)
	}
	return nil
}

// Describe names the system that made the run, from its result file the
// way R2MED's tables name systems: "bm25", "hyde/gpt4 → bm25",
// "nv → rankllama@10".
func (r Run) Describe() string {
	return SystemName(r.Result)
}

// SystemName names the system behind a result file by sysname's rule,
// from the fields R2MED's files name the stages by (Stages).
func SystemName(res *R2MED) string { return Stages(res).Name() }

// Stages reads a system's stages from its result file: the model for a
// base retriever ("nv", or r2med's whole name, "rrf(bm25,bge)"), the
// generation method and LLM and the retriever for generation-augmented
// retrieval, the retriever, reranker and depth for a reranker.
func Stages(res *R2MED) sysname.Stages {
	str := func(k string) string {
		v, _ := res.Extra[k].(string)
		return v
	}
	st := sysname.Stages{Expansion: sysname.Expansion(str("gar_method"), str("gar_llm"))}
	retriever := str("retriever_name")
	if retriever == "" || st.Expansion == "" && str("reranker_name") == "" && res.ModelName != "" {
		retriever = res.ModelName
	}
	if retriever != "" {
		st.Retrievers = []string{retriever}
	}
	if st.Reranker = str("reranker_name"); st.Reranker != "" {
		var k int
		if _, err := fmt.Sscan(fmt.Sprint(res.Extra["topk"]), &k); err == nil {
			st.Depth = k
		}
	}
	return st
}

// SetSystem names the file's system as R2MED's own files name theirs, the
// fields Stages reads back: on expanded queries, gar_method, gar_llm and
// retriever_name (and when reranked reranker_name and topk), the keys of
// a BM25's upper-case as R2MED's GAR+BM25 files write them; reranked,
// reranker_name, retriever_name and topk, keys upper-case as R2MED's
// reranker files write them; otherwise model_name, the system's name.
// settings are the stages' as the manifest records them (gar_method,
// gar_llm; "retriever": "bm25" for one BM25, stored or not).
func (r *R2MED) SetSystem(name string, st sysname.Stages, settings map[string]any) {
	method, _ := settings["gar_method"].(string)
	llm, _ := settings["gar_llm"].(string)
	switch {
	case method != "":
		r.Extra = map[string]any{"gar_method": method, "gar_llm": llm, "retriever_name": st.Retrieval()}
		if settings["retriever"] == "bm25" {
			r.Test = UpperKeys(r.Test)
		}
		if st.Reranker != "" {
			r.Extra["reranker_name"], r.Extra["topk"] = st.Reranker, st.Depth
		}
	case st.Reranker != "":
		r.Extra = map[string]any{"reranker_name": st.Reranker, "retriever_name": st.Retrieval(), "topk": st.Depth}
		r.Test = UpperKeys(r.Test)
	default:
		r.ModelName = name
	}
}
