package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/reproduce"
)

func init() { register(newReproduceCmd) }

// errChecksFailed makes the command exit 1 after printing its table.
var errChecksFailed = errors.New("some checks failed (✗ above)")

func newReproduceCmd() *cobra.Command {
	var list, offline, quiet, noCache bool
	var out, localData, format, cacheDir string
	var taskNames []string
	var sf *config.Flags
	cmd := &cobra.Command{
		Use:   "reproduce [NAME…]",
		Short: "Run the regression specs: published numbers as data, each checked per task (expected, got, delta, tolerance, ✓/✗, source)",
		Long: `reproduce runs regression specs: one per published configuration that r2med
can express (R2MED's 71 systems, NanoR2MED's candidate lists, results later
papers printed for models with a recipe, and reference outputs made for this
project). A spec holds the data (suite, tasks, revisions), the pipeline (the
schema of r2med run --pipeline), what it needs (model weights, servers, API
keys, a GPU), the expected scores per task with a tolerance, and their
source; --list shows them all.

NAME is a spec ("r2med/bm25"), a pattern ("r2med/hyde-*-bm25") or a group
("r2med", "nano", "external", "reference"); none runs every spec. Per task
and metric it prints the expected value, the value got, the difference, the
spec's tolerance (within: ✓ when |got − expected| is at most that) and ✓ or
✗, and on a task's first row the file its expected values are from; under
the table, where each spec's expected values were published. A spec whose
needs are not met is skipped, saying what it needs: a server (--base-url,
--rerank-url), an API key (OPENAI_API_KEY, …), weights (--rerank-model-dir).
It exits 1 when a check fails or a run breaks.

--offline uses nothing outside this machine: data only from the Hub cache
(r2med pull) or the local data folder, and no spec that needs a server, an
API key or a GPU. On a machine without the Hub cache that leaves the specs
on local data (NFCorpus in ../shared/data); the others are listed with what
they need.

Runs are kept under --out, one directory per spec and task, so a rerun
reuses what it verified, and r2med leaderboard shows them.`,
		Example: `  r2med reproduce --list
  r2med reproduce --offline
  r2med reproduce r2med/bm25
  r2med reproduce 'r2med/hyde-*-bm25' --task Biology
  r2med reproduce nano
  r2med reproduce r2med/nv --base-url http://gpu:8000/v1
  r2med reproduce r2med/nv-bge-reranker-top10 --base-url http://gpu:8000/v1 --rerank-url http://gpu:8081`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format = strings.ToLower(format)
			if format != "table" && format != "json" {
				return usage(fmt.Errorf("unknown --format %q; want table or json", format))
			}
			all, err := reproduce.All()
			if err != nil {
				return err
			}
			specs, err := reproduce.Select(all, args)
			if err != nil {
				return usage(err)
			}
			if list {
				return reproduce.WriteList(cmd.OutOrStdout(), specs, peopleWidth(cmd.OutOrStdout()))
			}
			if out == "" {
				out = filepath.Join(resultsDir(), "reproduce")
			}
			c := hub.FromEnv()
			c.Progress = progress.Auto(quiet)
			opt := pipeline.ReproduceOptions{
				Options:   pipeline.Options{Out: out, Progress: progress.Auto(quiet), Command: os.Args, Warn: cmd.ErrOrStderr()},
				Hub:       c,
				LocalData: localData,
				Env:       reproduce.Env{Offline: offline || c.Offline, Given: cmd.Flags().Changed, Getenv: os.Getenv},
				Tasks:     splitList(taskNames),
				Flags:     sf,
			}
			if !quiet {
				opt.Log = cmd.ErrOrStderr()
			}
			var reports []*reproduce.Report
			for _, s := range specs {
				if opt.Cache == nil && !noCache && needsCache(s) {
					store, err := cache.Open(cacheDir, cache.Options{})
					if err != nil {
						return err
					}
					defer store.Close()
					opt.Cache = store
				}
				r, err := pipeline.Reproduce(cmd.Context(), s, opt)
				if err != nil {
					return err
				}
				reports = append(reports, r)
			}
			w := cmd.OutOrStdout()
			if format == "json" {
				err = reproduce.WriteJSON(w, reports)
			} else {
				err = reproduce.WriteTable(w, reports)
			}
			if err != nil {
				return err
			}
			if reproduce.Failed(reports) {
				return errChecksFailed
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&list, "list", false, "list the specs (with NAME…: those) and what each needs, and run nothing")
	f.BoolVar(&offline, "offline", false, "use nothing outside this machine: data from the Hub cache or --local-data only, no spec needing a server, key or GPU")
	f.StringSliceVar(&taskNames, "task", nil, "run only these tasks of each spec (comma-separated, or repeat the flag)")
	f.StringVar(&out, "out", "", "folder the runs are kept in, one directory per spec and task (default: out/reproduce, or $R2MED_RESULTS/reproduce)")
	f.StringVar(&localData, "local-data", filepath.Join("..", "shared", "data"), "folder of the local data sets the reference specs read (the project's ../shared/data)")
	f.StringVar(&format, "format", "table", "output: table or json")
	f.StringVar(&cacheDir, "cache", "", "cache of embeddings and LLM answers (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "compute embeddings afresh, without reading or writing the cache")
	f.BoolVar(&quiet, "quiet", false, "no progress bars or stage messages")
	sf = config.AddServerFlags(f)
	return cmd
}

// needsCache says whether a spec's pipeline embeds or asks an LLM, so that
// the cache is opened only when something uses it.
func needsCache(s *reproduce.Spec) bool {
	return len(s.Needs.Models) > 0
}
