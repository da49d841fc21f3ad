package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/results"
	// Imported under another name: package main has a func usage.
	costs "github.com/r2med/r2med/usage"
)

func init() { register(newCacheCmd) }

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect, prune or share the cache of embeddings and generations shared by all runs",
		Long: `r2med keeps what is expensive to recompute (embeddings; LLM generations and
reranker scores where those stages run) in one content-addressed store,
shared by every run, task and query-expansion variant: a text embedded once
by one model configuration is never embedded again, and an interrupted run
resumes where it stopped.

The store is DIR/cache.db, where DIR is --cache, else $R2MED_CACHE, else
r2med under the user cache directory (~/.cache/r2med on Linux). Entries are
grouped by kind (embed, …) and model.

export and import share entries between machines: the entries a run used
(its manifest's directory holds the list) or a kind and model, in a
checksummed file that import verifies whole before it writes anything.
With the file imported, the run can be replayed without a model server.`,
	}
	cmd.AddCommand(newCacheStatsCmd(), newCachePruneCmd(), newCacheExportCmd(), newCacheImportCmd())
	return cmd
}

func newCacheExportCmd() *cobra.Command {
	var dir, out, kind, label, manifest string
	var all bool
	cmd := &cobra.Command{
		Use:   "export --out FILE (--kind K [--label L] | --label L | --manifest RUN/manifest.json | --all)",
		Short: "Write cache entries to a portable, checksummed file",
		Long: `export writes the selected entries (values, keys and write times) to FILE,
gzip'd JSON lines ending in an entry count and a SHA-256 checksum, for
r2med cache import on another machine.

--manifest RUN/manifest.json (or the run directory) takes exactly the
entries the run used, listed in ` + cache.KeysFile + ` beside its manifest;
every one must still be in the cache. --kind and --label (as cache stats
prints them) take a kind, a model's entries, or both; --all takes
everything.`,
		Example: `  r2med cache export --manifest out/hyde/Biology/manifest.json --out biology-cache.jsonl.gz
  r2med cache export --kind generate --label Qwen/Qwen2.5-7B-Instruct --out qwen.jsonl.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out FILE is required")
			}
			var sel cache.Selection
			switch {
			case manifest != "" && (kind != "" || label != "" || all):
				return errors.New("--manifest selects a run's entries; do not combine it with --kind, --label or --all")
			case manifest != "":
				keys, err := runCacheKeys(manifest)
				if err != nil {
					return err
				}
				sel.Refs = keys
			case kind == "" && label == "" && !all:
				return errors.New("say what to export: --manifest RUN/manifest.json, --kind K and/or --label L, or --all")
			default:
				sel.Filter = &cache.Filter{Kind: kind, Label: label, All: all}
			}
			if dir == "" {
				dir = cache.DefaultDir()
			}
			s, err := cache.Open(dir, cache.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			var n int
			if err := fileio.WriteAtomic(out, func(w io.Writer) error {
				var err error
				n, err = s.Export(w, sel)
				return err
			}); err != nil {
				return err
			}
			if n == 0 && sel.Refs == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "r2med: nothing in %s matched; %s holds no entries (see r2med cache stats)\n", s.Path(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "exported %d entries from %s to %s\n", n, s.Path(), out)
			return nil
		},
	}
	fl := cmd.Flags()
	cacheDirFlag(cmd, &dir)
	fl.StringVar(&out, "out", "", "the file to write (gzip'd JSON lines)")
	fl.StringVar(&kind, "kind", "", "only entries of this kind (embed, generate, …)")
	fl.StringVar(&label, "label", "", "only this model's entries, as cache stats prints it")
	fl.StringVar(&manifest, "manifest", "", "the entries a run used: its manifest.json or its directory")
	fl.BoolVar(&all, "all", false, "every entry (or all the --kind/--label flags select)")
	return cmd
}

// runCacheKeys reads the list of cache entries a run used, beside its
// manifest.
func runCacheKeys(manifest string) ([]cache.Ref, error) {
	dir := manifest
	if fi, err := os.Stat(manifest); err != nil {
		return nil, fmt.Errorf("--manifest: %w", err)
	} else if !fi.IsDir() {
		if filepath.Base(manifest) != results.ManifestFile {
			// Another run's list may sit in the same directory (a rerank
			// written into a run's): it must not be taken for this one's.
			return nil, fmt.Errorf("--manifest %s: not a run's %s, beside which a run lists its cache entries (r2med rerank's manifest lists none); export by --kind generate --label MODEL instead", manifest, results.ManifestFile)
		}
		dir = filepath.Dir(manifest)
	}
	return cache.ReadKeys(filepath.Join(dir, cache.KeysFile))
}

func newCacheImportCmd() *cobra.Command {
	var dir string
	var replace bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Add the entries of a file written by cache export",
		Long: `import verifies FILE whole (format, entries, count, checksum) and then adds
its entries with their original write times. An entry the cache already
holds with another value is kept and counted, unless --replace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = cache.DefaultDir()
			}
			s, err := cache.Open(dir, cache.Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Import(args[0], cache.ImportOptions{Replace: replace})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "imported %s into %s: %d entries, %d added, %d already there", args[0], s.Path(), st.Entries, st.Added, st.Same)
			if st.Replaced > 0 {
				fmt.Fprintf(w, ", %d replaced", st.Replaced)
			}
			fmt.Fprintln(w)
			if st.Different > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "r2med: %d entries are in the cache with other values and were kept; pass --replace to take the file's\n", st.Different)
			}
			return nil
		},
	}
	cacheDirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&replace, "replace", false, "where the cache holds another value under a key, take the file's")
	return cmd
}

func newCacheStatsCmd() *cobra.Command {
	var dir, format, prices string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Entries, bytes, tokens, dollars and ages per kind and model",
		Long: `stats reads every entry and prints, per kind and model, how many there are,
their size, the tokens they cost when they were made (as the servers counted
them, else estimated, and said to be) and, with --prices (a price table as
r2med run takes it), those tokens in dollars. Entries cached before r2med
recorded usage are counted apart: their tokens are unknown. The model is the
one asked for; a server that answered with another name is named beside it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: want table or json", format)
			}
			table, err := readPrices(prices)
			if err != nil {
				return err
			}
			if dir == "" {
				dir = cache.DefaultDir()
			}
			s, err := cache.Open(dir, cache.Options{ReadOnly: true})
			if errors.Is(err, cache.ErrNotExist) {
				if format == "json" {
					fmt.Fprintln(cmd.OutOrStdout(), "[]")
					return nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "no cache at %s\n", dir)
				return nil
			}
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Stats()
			if err != nil {
				return err
			}
			if format == "json" {
				return writeCacheJSON(cmd, st, table)
			}
			var size int64
			if fi, err := os.Stat(s.Path()); err == nil {
				size = fi.Size()
			}
			return writeCacheTable(cmd, s.Path(), size, st, table)
		},
	}
	cacheDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	cmd.Flags().StringVar(&prices, "prices", "", "price table (as r2med run --prices): print what each model's entries cost when made")
	return cmd
}

// cacheCost is what a bucket's entries that record usage cost when made
// by the price table; ok is false without a table, for a kind whose usage
// is not recorded, where no entry records it, or for a model the table
// lacks.
func cacheCost(s cache.BucketStats, prices costs.Prices) (usd float64, ok bool) {
	if prices == nil || !s.Metered || s.NoUsage == s.Entries {
		return 0, false
	}
	p, ok := prices.Lookup(s.Label)
	if !ok {
		return 0, false
	}
	return p.Cost(s.Usage), true
}

// cacheSummary sums the buckets' usage as a run's summary sums calls
// answered from the cache: its dollars, the models the table lacks, and
// its notes on how they were reckoned.
func cacheSummary(st []cache.BucketStats, prices costs.Prices) costs.Summary {
	var m costs.Meter
	for _, s := range st {
		if s.Metered {
			m.Merge([]costs.Line{{Kind: s.Kind, Model: s.Label, Cached: s.Usage, Served: s.Served}}, false)
		}
	}
	return m.Summary(0, prices)
}

func writeCacheTable(cmd *cobra.Command, path string, size int64, st []cache.BucketStats, prices costs.Prices) error {
	out := cmd.OutOrStdout()
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	// Tokens and dollars sit in short columns, and the models a server
	// answered with under the table, so that a row fits 120 columns.
	head := "kind\tmodel\tentries\tsize\tprompt\tcompletion"
	if prices != nil {
		head += "\tcost"
	}
	fmt.Fprintln(w, head+"\toldest\tnewest")
	var n, estimated, noUsage int
	var served []string
	var b int64
	var all costs.Tally
	for _, s := range st {
		prompt, completion := "-", "-"
		if s.Metered && s.NoUsage < s.Entries {
			mark := ""
			if s.Usage.EstimatedCalls > 0 {
				mark = "*"
			}
			prompt, completion = fmt.Sprintf("%d%s", s.Usage.PromptTokens, mark), fmt.Sprintf("%d%s", s.Usage.CompletionTokens, mark)
			all = all.Plus(s.Usage)
			estimated += int(s.Usage.EstimatedCalls)
		}
		if s.Metered {
			noUsage += s.NoUsage
		}
		if len(s.Served) > 0 {
			served = append(served, s.Label+" was answered by "+strings.Join(s.Served, ", "))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s", s.Kind, s.Label, s.Entries, humanBytes(s.Bytes), prompt, completion)
		if prices != nil {
			cost := "-"
			if usd, ok := cacheCost(s, prices); ok {
				cost = costs.USDText(usd)
				if s.NoUsage > 0 {
					// Entries without usage cost an unknown amount more.
					cost = "≥ " + cost
				}
			} else if s.Metered && s.NoUsage == s.Entries {
				cost = "unknown"
			} else if s.Metered {
				cost = "no price"
			}
			fmt.Fprintf(w, "\t%s", cost)
		}
		fmt.Fprintf(w, "\t%s\t%s\n", day(s.Oldest), day(s.Newest))
		n += s.Entries
		b += s.Bytes
	}
	fmt.Fprintf(w, "all\t\t%d\t%s\t%d\t%d", n, humanBytes(b), all.PromptTokens, all.CompletionTokens)
	sum := cacheSummary(st, prices)
	if prices != nil {
		total := "-"
		if sum.CachedUSD != nil {
			total = costs.USDText(*sum.CachedUSD)
		}
		fmt.Fprintf(w, "\t%s", total)
	}
	fmt.Fprintln(w, "\t\t")
	if err := w.Flush(); err != nil {
		return err
	}
	for _, line := range served {
		fmt.Fprintln(out, line)
	}
	if estimated > 0 {
		fmt.Fprintf(out, "* the tokens of %d of the entries are estimated (%s: the server reported none)\n", estimated, costs.Estimator)
	}
	if noUsage > 0 {
		fmt.Fprintf(out, "%d %s no usage (cached before r2med recorded it, or unreadable): %s tokens are not counted, nor %s cost\n", noUsage, errtext.Plural(noUsage, "entry records", "entries record"), errtext.Plural(noUsage, "its", "their"), errtext.Plural(noUsage, "its", "their"))
	}
	if len(sum.Unpriced) > 0 {
		fmt.Fprintf(out, "the price table has no price for %s: no total, as r2med run gives none\n", strings.Join(sum.Unpriced, ", "))
	}
	for _, note := range sum.Notes {
		fmt.Fprintln(out, note)
	}
	// bbolt reuses freed pages rather than shrinking the file, so after a
	// prune the file can be larger than its entries.
	_, err := fmt.Fprintf(out, "file %s: %s\n", path, humanBytes(size))
	return err
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	// The unit is chosen after rounding: 1048575 bytes is 1.0 MiB, not
	// 1024.0 KiB.
	v, exp := float64(n)/unit, 0
	for exp < 5 && (v >= unit || fmt.Sprintf("%.1f", v) == "1024.0") {
		v /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[exp])
}

func writeCacheJSON(cmd *cobra.Command, st []cache.BucketStats, prices costs.Prices) error {
	type row struct {
		Kind    string `json:"kind"`
		Model   string `json:"model"`
		Entries int    `json:"entries"`
		Bytes   int64  `json:"bytes"`
		Oldest  string `json:"oldest"`
		Newest  string `json:"newest"`
		// Usage sums the entries that record it, as a run manifest's
		// usage counts calls answered from the cache; absent for a kind
		// whose usage is not recorded.
		Usage *costs.Tally `json:"usage,omitempty"`
		// WithoutUsage counts the entries cached before usage was
		// recorded; Estimated names the estimator where some tokens are
		// estimated.
		WithoutUsage int      `json:"entries_without_usage,omitempty"`
		Estimated    string   `json:"estimated_tokens,omitempty"`
		Served       []string `json:"served,omitempty"`
		// USD is what the entries that record usage cost when made, by
		// --prices; absent where none records it.
		USD *float64 `json:"usd,omitempty"`
	}
	out := make([]row, len(st))
	for i, s := range st {
		out[i] = row{Kind: s.Kind, Model: s.Label, Entries: s.Entries, Bytes: s.Bytes,
			Oldest: s.Oldest.UTC().Format(time.RFC3339), Newest: s.Newest.UTC().Format(time.RFC3339),
			WithoutUsage: s.NoUsage, Served: s.Served}
		if s.Metered {
			u := s.Usage
			u.Seconds = math.Round(u.Seconds*1e6) / 1e6
			out[i].Usage = &u
			if u.EstimatedCalls > 0 {
				out[i].Estimated = costs.Estimator
			}
		}
		if usd, ok := cacheCost(s, prices); ok {
			out[i].USD = &usd
		}
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func newCachePruneCmd() *cobra.Command {
	var dir, model, kind, olderThan string
	var all bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove cache entries by model, kind or age",
		Long: `prune removes the entries the flags select; the flags combine (all must
hold). --model takes a registry name (r2med models), an alias or the model
label that cache stats prints (a Hub id, an API model name). --older-than
takes a Go duration (36h) or days and weeks (30d, 2w), and compares with
when each entry was written. With no selection, --all is required.`,
		Example: `  r2med cache prune --model bge
  r2med cache prune --older-than 30d
  r2med cache prune --kind embed --model nvidia/NV-Embed-v2
  r2med cache prune --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cache.Filter{Kind: kind, All: all}
			if olderThan != "" {
				age, err := parseAge(olderThan)
				if err != nil {
					return err
				}
				f.Before = time.Now().Add(-age)
			}
			if model == "" && kind == "" && olderThan == "" && !all {
				return errors.New("say what to prune: --model M, --kind K, --older-than D, or --all for everything")
			}
			labels := []string{""}
			if model != "" {
				labels = cacheLabels(model)
			}
			if dir == "" {
				dir = cache.DefaultDir()
			}
			s, err := cache.Open(dir, cache.Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			removed := 0
			for _, l := range labels {
				f.Label = l
				n, err := s.Prune(f)
				removed += n
				if err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d entries from %s\n", removed, s.Path())
			return nil
		},
	}
	fl := cmd.Flags()
	cacheDirFlag(cmd, &dir)
	fl.StringVar(&model, "model", "", "only this model's entries (registry name, alias, or label as cache stats prints it)")
	fl.StringVar(&kind, "kind", "", "only entries of this kind (embed, …)")
	fl.StringVar(&olderThan, "older-than", "", "only entries written longer ago than this (36h, 30d, 2w)")
	fl.BoolVar(&all, "all", false, "everything the other flags select, or the whole cache if none is given")
	return cmd
}

// cacheLabels is every cache label a --model argument can mean: the
// argument itself, and for a registry model the labels its embeddings are
// kept under (a dual encoder's joint label, its checkpoints).
func cacheLabels(model string) []string {
	labels := []string{model}
	if m, ok := models.Lookup(model); ok {
		labels = append(labels, m.Identity("", "").Model)
		labels = append(labels, m.HubIDs()...)
	}
	seen := map[string]bool{}
	out := labels[:0]
	for _, l := range labels {
		if k := strings.ToLower(l); !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	return out
}

// parseAge reads a Go duration, or a whole number of days (30d) or weeks
// (2w), which time.ParseDuration lacks.
func parseAge(s string) (time.Duration, error) {
	bad := fmt.Errorf("--older-than %q: want a duration such as 36h, 30d or 2w", s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if num, ok := strings.CutSuffix(s, suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			// Beyond about 292 years the product wraps negative, and a
			// cutoff in the future would prune everything.
			if err != nil || n < 0 || n > math.MaxInt64/int64(unit) {
				return 0, bad
			}
			return time.Duration(n) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// cacheDirFlag is every cache command's --cache.
func cacheDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "cache", "", "cache directory (default $R2MED_CACHE, else the user cache directory's r2med)")
}
