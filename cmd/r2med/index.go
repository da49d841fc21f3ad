package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
)

// build and info join the `r2med index` parent (indexcmd.go).
func init() {
	indexSubcommands = append(indexSubcommands, newIndexBuildCmd, newIndexInfoCmd, newIndexVerifyCmd)
}

func newIndexBuildCmd() *cobra.Command {
	var d dataFlags
	var out, retriever, scheme, analyzer, cacheDir string
	var k1, b float64
	var workers int
	var quiet, noCache bool
	var dense *config.KindFlags
	cmd := &cobra.Command{
		Use:   "build (--task T | --data DIR [--split S]) --retriever bm25|dense|bm25,dense --out INDEX",
		Short: "Index a task's corpus into one file: BM25 postings, document vectors or both",
		Long: `build writes a task's documents and a way of searching them into one
index file: BM25 postings (--retriever bm25, with --bm25, --k1, --b and
--analyzer as r2med run takes them), the document vectors the dense
retriever makes (--retriever dense, with --model, --backend, --base-url
and the other dense flags as r2med run takes them, through the same
embedding cache), or both (--retriever bm25,dense). Vectors are stored as
float32, and also as int8 or binary codes with --quantize; the dense
retriever's settings are stored as the recipe that embeds queries for
them. The same corpus and settings always give the same bytes.

Then "r2med run --index INDEX" searches the file exactly as the in-memory
retriever would (with "--retriever dense" its vectors), and
"r2med serve-search --index INDEX" serves it.`,
		Example: `  r2med index build --task demo --out demo.idx
  r2med index build --data ../shared/data/nfcorpus --split test --bm25 lucene --out nfcorpus-lucene.idx
  r2med index build --task all --out indexes/          # one INDEX/TASK.idx per task
  r2med index build --task Biology --retriever bm25,dense --model nv --backend openai --base-url http://gpu:8000/v1 --out biology.idx
  r2med index build --task demo --retriever dense --model bge --quantize int8 --rescore --out demo-int8.idx`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out INDEX is required: the index file to write")
			}
			var withBM25, withDense bool
			for _, part := range strings.Split(retriever, ",") {
				switch strings.TrimSpace(part) {
				case "bm25":
					withBM25 = true
				case "dense":
					withDense = true
				default:
					return fmt.Errorf("--retriever %q: want bm25, dense or bm25,dense", retriever)
				}
			}
			if !withBM25 {
				for _, name := range []string{"bm25", "k1", "b", "analyzer"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s sets BM25 postings, and --retriever %s builds none: add bm25 (--retriever bm25,dense)", name, retriever)
					}
				}
			}
			if !withDense && len(dense.Given()) > 0 {
				return fmt.Errorf("the dense flags (--model, --backend, …) make vectors: add --retriever dense (or bm25,dense)")
			}
			var spec retrieve.Dense
			if withDense {
				s, err := dense.Spec()
				if err != nil {
					return fmt.Errorf("--retriever dense: %w", err)
				}
				spec = s.(retrieve.Dense)
			}
			sc, err := bm25.ParseScheme(scheme)
			if err != nil {
				return err
			}
			p := bm25.DefaultParams(sc)
			if cmd.Flags().Changed("k1") {
				p.K1 = k1
			}
			if cmd.Flags().Changed("b") {
				p.B = b
			}
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			var store *cache.Store
			if withDense && !noCache {
				if store, err = cache.Open(cacheDir, cache.Options{}); err != nil {
					return err
				}
				defer store.Close()
			}
			// A build killed while writing left its temporary file: the
			// next build to the directory removes it (one being written
			// now is locked, and kept).
			// Several tasks, an existing directory, or --out ending in a
			// slash (a directory, made if missing) get TASK.idx each
			// inside it.
			st, err := os.Stat(out)
			intoDir := len(srcs) > 1 || err == nil && st.IsDir() || strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator))
			dir := filepath.Dir(out)
			if intoDir {
				dir = out
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
			if removed, err := reuse.Sweep(dir); err != nil {
				return err
			} else if len(removed) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: removed %d temporary %s an interrupted build left (%s)\n", dir, len(removed), errtext.Plural(len(removed), "file", "files"), strings.Join(removed, ", "))
			}
			bars := progress.Auto(quiet)
			for _, src := range srcs {
				// An index holds the corpus only: judgments of documents
				// the corpus lacks (a sampled corpus) are checked where
				// they count, by the run that searches it.
				src.Options.AllowMissingDocs = true
				task, err := src.Load(cmd.Context())
				if err != nil {
					return err
				}
				path := out
				if intoDir {
					path = filepath.Join(out, task.Name+".idx")
				}
				if err := index.CheckTarget(path); err != nil {
					return err
				}
				c := index.Contents{Docs: task.Corpus, Source: indexSource(task, d)}
				var parts, times []string
				// timed says how long a stage over the corpus took, and
				// its pace, for the line on stderr after each file.
				n := len(task.Corpus)
				timed := func(what string, start time.Time) {
					el := time.Since(start)
					times = append(times, fmt.Sprintf("%s %s (%.0f documents/s)", what, el.Round(time.Millisecond), float64(n)/max(el.Seconds(), 1e-9)))
				}
				began := time.Now()
				if withBM25 {
					bar := bars.New(len(task.Corpus), "indexing "+task.Name)
					ix, err := index.BuildBM25(task.Corpus, analyzer, p, bm25.BuildOptions{Workers: workers, Progress: bar.Add})
					bar.Done()
					if err != nil {
						return fmt.Errorf("%s: %w", task.Name, err)
					}
					c.BM25, c.Analyzer = ix, analyzer
					timed("postings", began)
					parts = append(parts, counted(ix.NumTerms(), "term", "terms")+"\t"+counted(ix.NumPostings(), "posting", "postings"))
				}
				if withDense {
					// The corpus embedded exactly as --retriever dense
					// embeds it in a run, and its settings as the recipe,
					// with the model's revision resolved as a run resolves
					// it (the commit loaded, a --model-dir's version).
					resolved, err := retrieve.Resolve(cmd.Context(), spec, task)
					if err != nil {
						return fmt.Errorf("%s: %w", task.Name, err)
					}
					rs := resolved.(retrieve.Dense)
					start := time.Now()
					flat, err := rs.CorpusVectors(cmd.Context(), task, retrieve.Env{Workers: workers, Progress: bars, Cache: store, Record: retrieve.SummaryLog{W: cmd.ErrOrStderr()}})
					if err != nil {
						return fmt.Errorf("%s: %w", task.Name, err)
					}
					c.Dense, c.Recipe = flat, rs.Describe()
					timed("vectors", start)
					if spec.Quantize != "" {
						c.Quantized = []string{spec.Quantize}
					}
					parts = append(parts, counted(flat.Len(), "vector", "vectors")+" of "+counted(flat.Dim(), "dimension", "dimensions"))
				}
				// Writing prepares each document's stored snippet tokens
				// first, which takes about as long as the postings did.
				bar := bars.New(len(task.Corpus), "writing "+path)
				start := time.Now()
				err = index.WriteWith(path, c, index.WriteOptions{Progress: bar.Add})
				bar.Done()
				if err != nil {
					return err
				}
				timed("written", start)
				st, err := os.Stat(path)
				if err != nil {
					return err
				}
				if !quiet {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: built in %s: %s\n", task.Name, time.Since(began).Round(time.Millisecond), strings.Join(times, ", "))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\t%s\t%s\t%s\n",
					path, task.Name, counted(len(task.Corpus), "document", "documents"), strings.Join(parts, "\t"), humanBytes(st.Size()))
			}
			return nil
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "index file to write (with several tasks, a directory that exists or a path ending in /: TASK.idx in it for each)")
	f.StringVar(&retriever, "retriever", "bm25", "what the index searches by: bm25 (postings), dense (vectors) or bm25,dense (both)")
	f.StringVar(&scheme, "bm25", "r2med", "BM25 scoring, stored in the postings: r2med, lucene, robertson (as r2med run --bm25)")
	f.Float64Var(&k1, "k1", 0, "BM25 k1 (default: the scheme's)")
	f.Float64Var(&b, "b", 0, "BM25 b (default: the scheme's)")
	f.StringVar(&analyzer, "analyzer", "lucene-english", "analyzer for documents (and, when searching, queries)")
	f.IntVar(&workers, "workers", runtime.GOMAXPROCS(0), "documents analyzed in parallel")
	f.BoolVar(&quiet, "quiet", false, "no progress bars, and no line of times on stderr")
	f.StringVar(&cacheDir, "cache", "", "dense: cache of embeddings shared by all runs (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "dense: embed afresh, without reading or writing the cache")
	dense = config.AddKindFlags(f, "dense")
	return cmd
}

// counted is n and the noun for n of them: "1 term", "2 terms".
func counted(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, errtext.Plural(n, one, many))
}

// indexSource records where an index's documents came from.
func indexSource(task *ir.Task, d dataFlags) map[string]any {
	src := map[string]any{"task": task.Name}
	if d.data != "" {
		src["data"] = d.data
	}
	if task.Split != "" {
		src["split"] = task.Split
	}
	if task.Layout != "" {
		src["layout"] = string(task.Layout)
	}
	return src
}

func newIndexInfoCmd() *cobra.Command {
	var verify, asJSON bool
	cmd := &cobra.Command{
		Use:   "info INDEX",
		Short: "Print what an index file holds",
		Example: `  r2med index info demo.idx
  r2med index info --verify demo.idx     # also check every checksum and the postings
  r2med index info --json demo.idx`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ix, err := index.Open(args[0])
			if err != nil {
				return err
			}
			defer ix.Close()
			if verify {
				if err := ix.Verify(); err != nil {
					return err
				}
			}
			if asJSON {
				return writeIndexJSON(cmd.OutOrStdout(), ix, verify)
			}
			writeIndexInfo(cmd.OutOrStdout(), ix, verify)
			return nil
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "check every section's checksum, the postings' structure and the analyzer (reads the whole file)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the metadata and sections as JSON")
	return cmd
}

// verifiedText says what Index.Verify checked.
const verifiedText = "every checksum, the postings and the analyzer"

func newIndexVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify INDEX...",
		Short: "Check index files whole: every checksum, the postings and the analyzer",
		Long: `verify reads each index file whole and checks every section's checksum,
the padding between sections, the postings' structure, the stored
snippets' structure, the analyzer it was built with and that every stored
vector is finite: what opening a file checks of its small sections, and
first use of its large ones, at once. It goes on past a file that fails,
and exits 1 if any did. "r2med index info --verify" does the same for one
file and describes it too.`,
		Example: `  r2med index verify demo.idx
  r2med index verify indexes/*.idx`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := 0
			for _, path := range args {
				err := verifyIndex(path)
				if err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "r2med: %v\n", err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\tverified: %s\n", path, verifiedText)
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d index %s failed verification; rebuild %s with `r2med index build`", failed, len(args), errtext.Plural(len(args), "file", "files"), errtext.Plural(failed, "it", "them"))
			}
			return nil
		},
	}
}

func verifyIndex(path string) error {
	ix, err := index.Open(path)
	if err != nil {
		return err
	}
	defer ix.Close()
	return ix.Verify()
}

func writeIndexInfo(w io.Writer, ix *index.Index, verified bool) {
	m := ix.Meta()
	size := "?"
	if st, err := os.Stat(ix.Path()); err == nil {
		size = fmt.Sprintf("%d bytes, %s", st.Size(), humanBytes(st.Size()))
	}
	fmt.Fprintf(w, "index      %s (format version %d, %s)\n", ix.Path(), index.Version, size)
	fmt.Fprintf(w, "documents  %d (corpus sha256 %s)\n", m.Docs, m.CorpusSHA256)
	if len(m.Source) > 0 {
		keys := make([]string, 0, len(m.Source))
		for k := range m.Source {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v", k, m.Source[k]))
		}
		fmt.Fprintf(w, "source     %s\n", strings.Join(parts, " "))
	}
	if b := m.BM25; b != nil {
		fmt.Fprintf(w, "bm25       scheme %s k1=%g b=%g, analyzer %s, %s, %s, %s\n",
			b.Scheme, b.K1, b.B, b.Analyzer, counted(b.Terms, "term", "terms"), counted(b.Postings, "posting", "postings"), counted(int(b.Tokens), "token", "tokens"))
	}
	if d := m.Dense; d != nil {
		recipe, _ := json.Marshal(d.Recipe)
		fmt.Fprintf(w, "dense      %s, %s, stored %s, recipe %s\n", counted(d.Dim, "dimension", "dimensions"), d.Metric, strings.Join(d.Stored, ", "), recipe)
	}
	fmt.Fprintln(w, "sections")
	for _, s := range ix.Sections() {
		when := "checked on open"
		if s.Lazy {
			when = "checked on first use"
		}
		fmt.Fprintf(w, "  %-16s %10s  crc32 %08x  %s\n", s.Name, humanBytes(s.Bytes), s.CRC32, when)
	}
	if verified {
		fmt.Fprintln(w, "verified   "+verifiedText)
	}
}

func writeIndexJSON(w io.Writer, ix *index.Index, verified bool) error {
	type section struct {
		Name  string `json:"name"`
		Bytes int64  `json:"bytes"`
		CRC32 string `json:"crc32"`
		Lazy  bool   `json:"checked_on_first_use"`
	}
	var secs []section
	for _, s := range ix.Sections() {
		secs = append(secs, section{s.Name, s.Bytes, fmt.Sprintf("%08x", s.CRC32), s.Lazy})
	}
	st, err := os.Stat(ix.Path())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Path     string     `json:"path"`
		Version  int        `json:"format_version"`
		Bytes    int64      `json:"bytes"`
		Meta     index.Meta `json:"meta"`
		Sections []section  `json:"sections"`
		Verified bool       `json:"verified"`
	}{ix.Path(), index.Version, st.Size(), ix.Meta(), secs, verified})
}
