package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/audit"
	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/audit/trainset"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/mteb"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
)

func init() { register(newAuditCmd) }

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Audit data: training-set leakage into benchmarks, and a benchmark's own duplicates and judgment problems",
		Long: `audit answers two questions before numbers are published.

  leakage  does a training set contain the benchmark's test queries or their
           relevant documents, verbatim or nearly?
  dataset  is the benchmark itself clean (duplicate documents and queries,
           copies judged differently, empty or very short texts, ids shared
           by a query and a document, judgments of missing documents,
           positives shared by many queries)?

Texts are compared after normalisation: Unicode NFKC, full case folding,
apostrophes deleted, every other run of characters that are not letters,
marks or digits collapsed to one space. Exact: equal once spaces are dropped
too. Near: Jaccard similarity of the sets of word shingles at or above a
threshold (0.8 over single words by default), candidates found by MinHash
LSH (seeded: the same pairs on every run with one seed; a pair at the
threshold is missed with the probability the report states, 0.004 at 0.8);
the similarity reported is the exact Jaccard.

Both write an audit file as their JSON output; saved as audit.json or
NAME.audit.json in a results directory, r2med report shows it.`,
	}
	cmd.AddCommand(newAuditLeakageCmd(), newAuditDatasetCmd())
	return cmd
}

// minhashFlags are the matching settings both audits share.
type minhashFlags struct {
	threshold float64
	shingle   int
	seed      uint64
}

func (m *minhashFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&m.threshold, "threshold", minhash.DefaultThreshold, "near-duplicates: Jaccard similarity of word-shingle sets at or above this")
	f.IntVar(&m.shingle, "shingle", minhash.DefaultShingle, "words per shingle (1: the set of words, robust to reordering and right for short queries; 3–5 for long web text)")
	f.Uint64Var(&m.seed, "seed", 0, "seed of every hash (the same seed gives the same results)")
}

// positiveFlags refuses a value of 0 or less for the named numeric flags:
// the packages read a zero setting as their default, so 0 given on the
// command line would silently run with another value. --threshold and
// --dense-threshold, similarities, are refused above 1 too.
func positiveFlags(cmd *cobra.Command, names ...string) error {
	for _, name := range names {
		fl := cmd.Flags().Lookup(name)
		if fl == nil {
			continue
		}
		v, err := strconv.ParseFloat(fl.Value.String(), 64)
		if err != nil {
			continue
		}
		if v <= 0 {
			return fmt.Errorf("--%s %s: want a value above 0 (default %s)", name, fl.Value.String(), fl.DefValue)
		}
		if v > 1 && (name == "threshold" || name == "dense-threshold") {
			// A similarity above 1 matches nothing: the audit would run
			// and find no copy at all.
			return fmt.Errorf("--%s %s: want a similarity in (0, 1] (default %s)", name, fl.Value.String(), fl.DefValue)
		}
	}
	return nil
}

func (m *minhashFlags) spec() minhash.Spec {
	return minhash.Spec{Threshold: m.threshold, Shingle: m.shingle, Seed: m.seed}
}

// outputTo runs write into --out atomically, or onto stdout.
func outputTo(cmd *cobra.Command, out string, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		return write(cmd.OutOrStdout())
	}
	if err := fileio.WriteAtomic(out, write); err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "wrote", out)
	return nil
}

func newAuditLeakageCmd() *cobra.Command {
	var train, against []string
	var split, suite, format, out, state, documents, trainFormat string
	var queryFields, posFields, negFields, textFields []string
	var denseModel, backend, baseURL, cacheDir string
	var denseThreshold float64
	var examples, workers int
	var quiet, noCache, allowMissing bool
	var mh minhashFlags
	var wordEdits string
	cmd := &cobra.Command{
		Use:   "leakage --train FILE... --against TASK|DIR...",
		Short: "Find benchmark queries and relevant documents in training files (exact, near-duplicate, optionally dense)",
		Long: `leakage reads training files — JSON lines, JSON, parquet, TSV or plain text,
optionally gzipped — and reports which of the benchmark's queries and
relevant documents they contain: per task the number and share of
contaminated queries and documents, the judgments whose query and document
appear together in one training record ("pairs", out of the judgments
whose query and document were both audited), and examples with the
training file, line and similarity.

Layouts are detected from the fields: BGE {query, pos: [...], neg: [...]},
sentence-transformers {anchor, positive, negative…}, {query, positive},
{sentence1, sentence2}, Tevatron {query_id, query, positive_passages,
negative_passages} (passages {docid, title, text}; JSON lines), BEIR corpus {_id, title, text} and queries
{_id, text}, {id, text}, {text}; TSV with a header or 1–3 columns; plain
text, one text per line. --query-field, --pos-field, --neg-field and
--text-field name other fields (for TSV without a header: 1-based column
numbers).

Short texts, whose word shingles change too much with one word, are also
near-duplicates when one word is replaced, dropped or added (--word-edits
MIN,CONTENT,MAX, default 5,6,32: texts of 5 to 32 words, a content word
replaced by another only from 6 words, as "Are dates good for you?" is not
"Are avocados good for you?"; off turns it off); the similarity reported is
1 − edits / words of the longer text, under the measure word_edits.

The training side is streamed, so memory is bounded by the benchmark side.
The run checkpoints every few seconds under --state; run the same command
again after an interruption and it continues where it stopped. The state is
removed once the output is written.

--dense-model adds matching by embedding similarity through an embedding
server (--backend openai|tei|voyage, --base-url); embeddings are cached.

Output: --format table (default), json (an audit file for r2med report) or
jsonl: one line per match with task, benchmark_kind (query|document),
benchmark_id, train_file, train_line (1-based; parquet: row),
train_element (JSON arrays: the record's place in the array), train_field,
train_role, match (exact|near|dense), measure (exact|jaccard|word_edits|
cosine), similarity and train_text.`,
		Example: `  r2med audit leakage --train train.jsonl --against demo
  r2med audit leakage --train bge.jsonl,st.parquet --against Biology,MedQA-Diag --format json --out out/audit.json
  r2med audit leakage --train triples.tsv --against ../shared/data/nfcorpus --split test --format jsonl --out matches.jsonl
  r2med audit leakage --train corpus.jsonl --against all --documents all --threshold 0.9
  r2med audit leakage --train train.jsonl --against demo --dense-model bge-m3 --backend openai --base-url http://gpu:8000/v1`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			files := append(splitList(train), args...)
			if len(files) == 0 {
				return fmt.Errorf("no training files: give --train FILE (repeat it or separate files with commas)")
			}
			if len(against) == 0 {
				return fmt.Errorf("no benchmark: give --against with task names (demo, Biology, all, …) or data directories")
			}
			if err := positiveFlags(cmd, "threshold", "shingle", "examples", "dense-threshold"); err != nil {
				return err
			}
			format = strings.ToLower(format)
			if format != "table" && format != "json" && format != "jsonl" {
				return fmt.Errorf("unknown --format %q; want table, json or jsonl", format)
			}
			scope, err := audit.ParseScope(documents)
			if err != nil {
				return err
			}
			tasks, err := loadAgainst(cmd.Context(), splitList(against), split, suite, allowMissing)
			if err != nil {
				return err
			}
			edits, err := minhash.ParseEdits(wordEdits)
			if err != nil {
				return fmt.Errorf("--word-edits: %w", err)
			}
			opts := audit.LeakageOptions{
				MinHash: mh.spec(), Edits: edits, Documents: scope, Workers: workers, Examples: examples, State: state,
				Train:    trainset.Options{Format: trainFormat, Fields: trainset.Fields{Query: splitList(queryFields), Positive: splitList(posFields), Negative: splitList(negFields), Text: splitList(textFields)}},
				Progress: progress.Auto(quiet),
			}
			if !quiet {
				opts.Log = cmd.ErrOrStderr()
			}
			if opts.State == "" {
				opts.State = filepath.Join(cache.DefaultDir(), "audit")
			}
			if denseModel != "" {
				emb, closeEmb, err := auditEmbedder(cmd.Context(), denseModel, backend, baseURL, cacheDir, noCache)
				if err != nil {
					return err
				}
				defer closeEmb()
				opts.Dense = &audit.Dense{Embedder: emb, Model: backend + ":" + denseModel, Threshold: denseThreshold}
			} else if cmd.Flags().Changed("backend") || baseURL != "" || cmd.Flags().Changed("dense-threshold") {
				return fmt.Errorf("--backend, --base-url and --dense-threshold configure dense matching; add --dense-model MODEL")
			}
			res, err := audit.Leakage(cmd.Context(), tasks, files, opts)
			if ie := (*audit.InterruptedError)(nil); errors.As(err, &ie) {
				return keptForResume(err, ie.State)
			}
			if err != nil {
				return err
			}
			err = outputTo(cmd, out, func(w io.Writer) error {
				switch format {
				case "json":
					return (&audit.File{Version: results.Version(), Leakage: res.Report}).Write(w)
				case "jsonl":
					return res.WriteMatches(w)
				}
				return res.Report.WriteTable(w)
			})
			if err != nil {
				return err
			}
			return res.Close()
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&train, "train", nil, "training files (repeat the flag or separate with commas; more may follow as arguments)")
	f.StringSliceVar(&against, "against", nil, `benchmark: task names ("demo", an R2MED task or alias, "all") or data directories / hf:// URIs, comma-separated`)
	f.StringVar(&split, "split", dataset.DefaultSplit, "BEIR qrels split of --against directories, or the split of a Nano set")
	f.StringVar(&suite, "suite", "r2med", "for R2MED tasks: r2med (the full task) or nano (its NanoR2MED split)")
	f.BoolVar(&allowMissing, "allow-missing-docs", false, "accept judgments of documents the corpus lacks (they are counted, not audited)")
	f.StringVar(&documents, "documents", "positives", "benchmark documents audited: positives (judged relevant to an evaluated query), all (the corpus) or none")
	f.StringSliceVar(&queryFields, "query-field", nil, "training field(s) holding queries (default: detected)")
	f.StringSliceVar(&posFields, "pos-field", nil, "training field(s) holding positives (a string or a list of strings)")
	f.StringSliceVar(&negFields, "neg-field", nil, "training field(s) holding negatives")
	f.StringSliceVar(&textFields, "text-field", nil, "training field(s) holding other texts")
	f.StringVar(&trainFormat, "train-format", "", "override the format the file name implies: "+strings.Join(trainset.Formats, ", "))
	mh.add(cmd)
	f.StringVar(&wordEdits, "word-edits", minhash.Edits{}.String(), "short texts: MIN,CONTENT,MAX words within which one word replaced, dropped or added is a near-duplicate (a content word replaced by another from CONTENT words), or off")
	f.StringVar(&denseModel, "dense-model", "", "also match by embedding cosine with this model of an embedding server")
	f.StringVar(&backend, "backend", "openai", "dense: the server's API: "+strings.Join(embed.HTTPBackends, ", "))
	f.StringVar(&baseURL, "base-url", "", "dense: the embedding server's base URL (default: OPENAI_BASE_URL or the backend's)")
	f.Float64Var(&denseThreshold, "dense-threshold", 0.95, "dense: cosine similarity at or above which texts match (model-dependent)")
	f.StringVar(&cacheDir, "cache", "", "dense: cache of embeddings (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "dense: embed afresh, without reading or writing the cache")
	f.StringVar(&format, "format", "table", "output: table, json (an audit file) or jsonl (one line per match)")
	f.StringVar(&out, "out", "", "output file (default: standard output); written whole or not at all")
	f.StringVar(&state, "state", "", "directory of checkpoints for resuming (default: the cache directory's audit/)")
	f.IntVar(&examples, "examples", 5, "examples per task and kind in the report")
	f.IntVar(&workers, "workers", 0, "goroutines matching (default: all CPUs); results do not depend on it")
	f.BoolVar(&quiet, "quiet", false, "no progress or messages on standard error")
	return cmd
}

// splitList splits comma-separated values of a repeated flag, dropping
// empty ones.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// loadAgainst loads the benchmark tasks --against names: each entry a task
// name (or "all") or a data directory / hf:// URI, resolved as --task and
// --data are.
func loadAgainst(ctx context.Context, names []string, split, suite string, allowMissing bool) ([]*ir.Task, error) {
	var tasks []*ir.Task
	seen := map[string]bool{}
	for _, name := range names {
		d := dataFlags{suite: suite}
		d.opts.Split = split
		d.opts.AllowMissingDocs = allowMissing
		if isDataLocation(name) {
			d.data = name
		} else {
			d.task = name
		}
		srcs, err := d.sources()
		if err != nil {
			return nil, fmt.Errorf("--against %s: %w", name, err)
		}
		for _, src := range srcs {
			t, err := src.Load(ctx)
			if err != nil {
				return nil, err
			}
			if seen[t.Name] {
				return nil, fmt.Errorf("--against names task %s twice; tasks are reported by name, so give each once", t.Name)
			}
			seen[t.Name] = true
			tasks = append(tasks, t)
		}
	}
	return tasks, nil
}

// isDataLocation tells a directory or Hub URI from a task name.
func isDataLocation(s string) bool {
	if strings.HasPrefix(s, pipeline.HubURIPrefix) || strings.ContainsAny(s, `/\`) {
		return true
	}
	st, err := os.Stat(s)
	return err == nil && st.IsDir()
}

// auditEmbedder is the dense retriever's embedder of model on a server
// (retrieve.Dense.Embedder), its vectors cached as the retriever caches
// them.
func auditEmbedder(ctx context.Context, model, backend, baseURL, cacheDir string, noCache bool) (embed.Embedder, func(), error) {
	d := retrieve.Dense{Model: model, Backend: backend}
	if baseURL != "" {
		d.BaseURLs = []string{baseURL}
	}
	var env retrieve.Env
	if !noCache {
		store, err := cache.Open(cacheDir, cache.Options{})
		if err != nil {
			return nil, nil, err
		}
		env.Cache = store
	}
	e, done, err := d.Embedder(ctx, env)
	if err != nil {
		if env.Cache != nil {
			env.Cache.Close()
		}
		return nil, nil, err
	}
	return e, func() {
		done()
		if env.Cache != nil {
			env.Cache.Close()
		}
	}, nil
}

func newAuditDatasetCmd() *cobra.Command {
	var d dataFlags
	var format, out, revision, mtebDataset string
	var shortWords, shared, limit, workers int
	var withMTEB bool
	var mh minhashFlags
	cmd := &cobra.Command{
		Use:   "dataset --task T|--data DIR",
		Short: "Audit a benchmark: duplicate documents and queries, copies judged differently, empty or short texts, id collisions, missing documents, shared positives",
		Long: `dataset checks a task's own data:

  duplicate documents (equal after normalisation) and near-duplicates
  (Jaccard ≥ --threshold), and relevance splits: a query that judges one
  copy relevant and the other not (non-relevant or unjudged);
  duplicate and near-duplicate queries;
  empty texts and very short ones (fewer than --short-words words);
  ids used by both a query and a document;
  judgments of documents the corpus lacks (the task is read accepting them);
  documents relevant to at least --shared-positives queries;
  queries without a relevant document.

--mteb compares instead two copies of each R2MED task named by --task: A,
the task as R2MED's Hub repository publishes it (R2MED/<Task> at --revision,
default main), and B, the copy MTEB's task reads (the dataset id and
revision MTEB's metadata names; --mteb-dataset REPO@REV for another). Both
are read as MTEB's loader reads them (configs corpus, query and qrels) with
every row kept: per copy its rows, distinct ids and the ids on several rows
(a dict keyed by id, as MTEB's loader and R2MED's code build, keeps the
last), the documents MTEB's statistics count, then the documents, queries
and judgments present in one copy and not the other, and those whose text or
grade differs. --format json writes the comparisons as a JSON list.

Output: a summary and the first entries of each list (--format table), or
an audit file with every entry (--format json) that r2med report shows.`,
		Example: `  r2med audit dataset --task demo
  r2med audit dataset --data ../shared/data/nfcorpus --split test
  r2med audit dataset --task all --format json --out out/dataset.audit.json
  r2med audit dataset --task Bioinformatics --mteb           # R2MED's repository against MTEB's copy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format = strings.ToLower(format)
			if format != "table" && format != "json" {
				return fmt.Errorf("unknown --format %q; want table or json", format)
			}
			if err := positiveFlags(cmd, "threshold", "shingle", "short-words", "shared-positives"); err != nil {
				return err
			}
			if withMTEB {
				return auditMTEBCopies(cmd, d, revision, mtebDataset, format, out, limit)
			}
			if cmd.Flags().Changed("revision") || mtebDataset != "" {
				return usage(fmt.Errorf("--revision and --mteb-dataset choose the copies --mteb compares; add --mteb"))
			}
			d.opts.AllowMissingDocs = true // reported, not refused
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			var reps []*audit.DatasetReport
			for _, src := range srcs {
				t, err := src.Load(cmd.Context())
				if err != nil {
					return err
				}
				r, err := audit.Dataset(t, audit.DatasetOptions{MinHash: mh.spec(), ShortWords: shortWords, SharedPositives: shared, Workers: workers})
				if err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				reps = append(reps, r)
			}
			return outputTo(cmd, out, func(w io.Writer) error {
				if format == "json" {
					return (&audit.File{Version: results.Version(), Datasets: reps}).Write(w)
				}
				return writeTables(w, reps, limit)
			})
		},
	}
	addDataFlags(cmd, &d)
	mh.add(cmd)
	f := cmd.Flags()
	f.IntVar(&shortWords, "short-words", 3, "a non-empty text with fewer words (after normalisation) is very short")
	f.IntVar(&shared, "shared-positives", 10, "list documents relevant to at least this many queries")
	f.IntVar(&limit, "limit", 10, "table: entries shown per list")
	f.IntVar(&workers, "workers", 0, "goroutines (default: all CPUs)")
	f.StringVar(&format, "format", "table", "output: table or json (an audit file)")
	f.StringVar(&out, "out", "", "output file (default: standard output); written whole or not at all")
	f.BoolVar(&withMTEB, "mteb", false, "compare the task as R2MED's repository publishes it with the copy MTEB's task reads: ids in one and not the other")
	f.StringVar(&revision, "revision", hub.DefaultRevision, "with --mteb: the revision of R2MED's repository to compare (a branch, tag or commit)")
	f.StringVar(&mtebDataset, "mteb-dataset", "", "with --mteb: the copy to compare with, REPO@REVISION (default: the dataset and revision MTEB's metadata names)")
	return cmd
}

// auditMTEBCopies compares, for each task --task names, R2MED's repository
// at revision with the copy MTEB reads.
func auditMTEBCopies(cmd *cobra.Command, d dataFlags, revision, mtebDataset, format, out string, limit int) error {
	if d.data != "" || d.task == "" || strings.EqualFold(d.task, "demo") || d.suite != string(tasks.R2MED) {
		return usage(fmt.Errorf("--mteb compares copies of R2MED's full tasks: give --task NAME (or all), not --data, demo or --suite nano"))
	}
	ts, err := tasks.Expand(d.task)
	if err != nil {
		return usage(err)
	}
	c := hub.FromEnv()
	c.Progress = progress.Auto(false)
	var reps []*audit.CopiesReport
	for _, t := range ts {
		m, err := mteb.ForR2MED(t.Name)
		if err != nil {
			return err
		}
		bRepo, bRev := m.Dataset, m.Revision
		if mtebDataset != "" {
			if bRepo, bRev, _ = strings.Cut(mtebDataset, "@"); bRepo == "" || bRev == "" {
				return usage(fmt.Errorf("--mteb-dataset %q: want REPO@REVISION", mtebDataset))
			}
		}
		a, err := audit.FetchCopy(cmd.Context(), c, t.Repo, revision)
		if err != nil {
			return fmt.Errorf("%s as R2MED publishes it: %w", t.Name, err)
		}
		a.Label = "as R2MED's repository publishes it (" + revision + ")"
		b, err := audit.FetchCopy(cmd.Context(), c, bRepo, bRev)
		if err != nil {
			return fmt.Errorf("%s as MTEB reads it: %w", t.Name, err)
		}
		b.Label = "the copy MTEB's " + m.Name + " reads"
		if mtebDataset == "" {
			b.Expected = m.Documents
		}
		reps = append(reps, audit.CompareCopies(t.Name, a, b))
	}
	return outputTo(cmd, out, func(w io.Writer) error {
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(reps)
		}
		return writeTables(w, reps, limit)
	})
}

// writeTables prints reports one after the other, a blank line between.
func writeTables[R interface{ WriteTable(io.Writer, int) error }](w io.Writer, reps []R, limit int) error {
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := r.WriteTable(w, limit); err != nil {
			return err
		}
	}
	return nil
}

// auditSections renders the audit files of a results directory for r2med
// report (audit.json and *.audit.json).
func auditSections(dir string) ([]template.HTML, error) {
	s, err := audit.Sections(dir)
	if err != nil && os.IsNotExist(err) {
		return nil, nil
	}
	return s, err
}
