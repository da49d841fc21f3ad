package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/sweep"
)

func init() { register(newSweepCmd) }

func newSweepCmd() *cobra.Command {
	var overwrite, quiet, noCache, allowMissing bool
	var out, cacheDir string
	var calls callFlags
	var rf *config.RemoteFlags
	cmd := &cobra.Command{
		Use:   "sweep SWEEP.yaml",
		Short: "Run every task × pipeline of a sweep file; finished cells are skipped",
		Long: `sweep runs a grid of tasks × pipelines. Each cell is an ordinary run written
to OUT/PIPELINE/TASK, the directory 'r2med run' uses, so an interrupted sweep
resumes where it stopped (cells whose outputs match their data and settings
are skipped, after checking their checksums, unless --overwrite; a cell whose
pipeline changed under the same name is redone), and 'r2med results' and
'r2med leaderboard' read what it wrote. Embeddings and LLM answers come from
the cache 'r2med run' uses, so a rerun or a killed cell does not compute them
again.

  out: results                 # default: $R2MED_RESULTS, else out
  tasks: [all]                 # registry tasks; or data: [DIR, …]
  suite: r2med                 # or nano, bright, bright-long
  pipelines:
    - file: hybrid.yaml        # a pipeline file (see r2med run --help)
    - name: bm25-lucene        # or a pipeline inline
      retrieve: [{bm25: {scheme: lucene}}]
  prices: prices.yaml          # --prices: dollars in each cell's usage
  allow_missing_docs: true     # --allow-missing-docs: a sampled corpus
  request_timeout: 90s         # --request-timeout, --retries and
  retries: 3                   # --endpoint-concurrency: model servers, for
  endpoint_concurrency: 4      # pipelines that set none (flags: for all)`,
		Example: `  r2med sweep sweeps/r2med-bm25.yaml
  r2med sweep sweep.yaml --out /data/results --overwrite`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sweep.Load(args[0])
			if err != nil {
				return err
			}
			if out != "" {
				s.Out = out
			}
			if allowMissing {
				s.AllowMissing()
			}
			if err := s.SetRemote(rf.Apply); err != nil {
				return err
			}
			prices, err := calls.read(noCache)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			var cellErrs []error
			// The cells' model calls, summed for the sweep: a kept cell's
			// as answered from the cache (this sweep spent nothing on it).
			spent := newMeter()
			var store *cache.Store
			if !noCache && s.NeedsCache() {
				if store, err = cache.Open(cacheDir, cache.Options{}); err != nil {
					return err
				}
				defer store.Close()
			}
			opt := sweep.Options{Overwrite: overwrite, Progress: progress.Auto(quiet), Command: os.Args, Cache: store, Replay: calls.replay, Prices: prices, Warn: cmd.ErrOrStderr(),
				Done: func(c sweep.Cell, o *pipeline.Outcome, err error) {
					switch {
					case err != nil:
						cellErrs = append(cellErrs, err)
						fmt.Fprintf(w, "FAIL   %-18s %-28s %v\n", c.Task, c.Pipeline, err)
					default:
						v, _ := o.Result.Metric("ndcg_at_10")
						state := "done"
						switch {
						case o.Skipped:
							state = "kept"
						case o.Replaced:
							state = "redone"
						}
						fmt.Fprintf(w, "%-6s %-18s %-28s nDCG@10 %.4f  %s\n", state, c.Task, c.Pipeline, v, c.Dir)
						if o.Manifest != nil && o.Manifest.Usage != nil {
							spent.Merge(o.Manifest.Usage.Models, o.Skipped)
						}
					}
				}}
			failed, err := s.Run(cmd.Context(), opt)
			if ce := (*sweep.CellError)(nil); errors.As(err, &ce) {
				return keptForResume(err, resumable(ce.Cell.Dir, store)...)
			}
			if err != nil {
				return err
			}
			cells := len(s.Sources) * len(s.Pipelines)
			if failed > 0 {
				return &cellsFailed{failed, cells, cellErrs}
			}
			fmt.Fprintf(w, "%d cells in %s\n", cells, s.Out)
			if prices == nil {
				prices = s.Prices // --prices wins over the sweep file's, as in the cells
			}
			if u := spent.Summary(0, prices); u.Calls+u.Cached.Calls > 0 {
				printUsage(w, u)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "results directory (default: the sweep file's out:, else $R2MED_RESULTS, else out)")
	f.StringVar(&cacheDir, "cache", "", "cache of embeddings and LLM answers shared with r2med run (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "compute embeddings and LLM answers afresh, without reading or writing the cache")
	calls.add(f, "answer every model call from the cache and send nothing to any server; a call the cache lacks fails its cell",
		"price table (as r2med run --prices) for every cell, instead of the sweep file's prices:")
	rf = config.AddRemoteFlags(f)
	f.BoolVar(&overwrite, "overwrite", false, "redo cells whose outputs are up to date")
	f.BoolVar(&allowMissing, "allow-missing-docs", false, "accept judgments of documents a corpus lacks (a sampled corpus), as the sweep file's allow_missing_docs: true; they count as unretrievable relevant documents")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	return cmd
}

// cellsFailed is a sweep's error when cells failed; it wraps their errors,
// so that the hint for a kind of error (flagHint) follows.
type cellsFailed struct {
	failed, cells int
	errs          []error
}

func (e *cellsFailed) Error() string {
	return fmt.Sprintf("%d of %d cells failed (see FAIL lines); rerun the sweep to retry them, finished cells are kept", e.failed, e.cells)
}

func (e *cellsFailed) Unwrap() []error { return e.errs }
