// Command gen writes reproduce's specs from the data they cite, then
// docs/REPRODUCE.md from the specs (go generate ./reproduce; the output is
// committed, and tests check both are fresh):
//
//   - specs/r2med/: one spec per system of R2MED's published results (the
//     leaderboard's published.json, itself converted from R2MED's result
//     files), with r2med's recipe for it: BM25, the registry's dense
//     models, GAR with the published generations, the three rerankers;
//   - specs/nano/: NanoR2MED's candidate-list profiles, one spec per
//     candidate config over the eight task cards in nanor2med-metadata/;
//   - specs/external/: results later papers printed (external.json) for
//     models the registry has a recipe for, R2MED's own rows left out
//     (specs/r2med/ has them at full precision);
//   - specs/reference/: trec_eval's output on R2MED's BM25 run of NFCorpus
//     (eval-reference/), the one spec whose data is local.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/reproduce"
)

func main() {
	shared := flag.String("shared", "", "the project's reference data folder (../shared/data)")
	specsDir := flag.String("specs", "specs", "output folder of the specs")
	doc := flag.String("doc", "", "output file of the rendered docs (docs/REPRODUCE.md); empty: none")
	flag.Parse()
	if *shared == "" {
		fmt.Fprintln(os.Stderr, "gen: -shared DIR is required")
		os.Exit(2)
	}
	if err := run(*shared, *specsDir, *doc); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(shared, specsDir, doc string) error {
	files, err := Generate(shared, Registry)
	if err != nil {
		return err
	}
	if err := writeTree(specsDir, files); err != nil {
		return err
	}
	if doc == "" {
		return nil
	}
	specs, err := reproduce.ReadFS(os.DirFS(filepath.Dir(specsDir)), filepath.Base(specsDir))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := reproduce.Doc(&b, specs); err != nil {
		return err
	}
	return fileio.WriteAtomic(doc, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err })
}

// writeTree makes dir hold exactly files (slash paths under dir): stale
// specs of systems no longer published are removed.
func writeTree(dir string, files map[string][]byte) error {
	var stale []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipAll
		}
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			stale = append(stale, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[n]) {
			continue
		}
		if err := fileio.WriteAtomic(p, func(w io.Writer) error { _, err := w.Write(files[n]); return err }); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "gen: removed %d stale spec file(s): %s\n", len(stale), strings.Join(stale, ", "))
	}
	return nil
}
