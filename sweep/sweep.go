// Package sweep runs a grid of tasks × pipelines: each cell an ordinary
// run (package pipeline) written where `r2med run` writes it, so a sweep
// resumes by skipping the cells whose outputs are up to date, and its
// results are what `r2med results` and `r2med leaderboard` read.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/usage"
)

// Sweep is a grid of tasks × pipelines whose cells are ordinary runs
// written to Out/PIPELINE/TASK (results.RunDir, the directories `r2med
// run` uses), so a sweep resumes by skipping the cells whose outputs are
// up to date (Run's fingerprint) and its results are what `r2med results`
// and `r2med leaderboard` read.
type Sweep struct {
	Out       string
	Sources   []pipeline.Source
	Pipelines []config.Config
	// Prices is the sweep file's price table (prices:), nil without one.
	Prices usage.Prices
	// AllowMissingDocs accepts judgments of documents a corpus lacks (a
	// sampled corpus), as `r2med run --allow-missing-docs` does; set it
	// with AllowMissing.
	AllowMissingDocs bool
}

// AllowMissing accepts, in every task of the sweep, judgments of
// documents its corpus lacks: they count as relevant documents no run can
// retrieve, and each cell's manifest says they were allowed.
func (s *Sweep) AllowMissing() {
	s.AllowMissingDocs = true
	for i := range s.Sources {
		s.Sources[i].Options.AllowMissingDocs = true
	}
}

// SetRemote lays the settings of calls to model servers given on the
// command line (RemoteFlags.Apply) over every pipeline's.
func (s *Sweep) SetRemote(apply func(config.Remote) (config.Remote, error)) error {
	for i := range s.Pipelines {
		r, err := apply(s.Pipelines[i].Remote)
		if err != nil {
			return err
		}
		s.Pipelines[i].Remote = r
	}
	return nil
}

// File is a sweep as YAML writes it:
//
//	out: results             # default: $R2MED_RESULTS, else out
//	tasks: [all]             # registry tasks (or data: [DIR, …])
//	suite: r2med             # or nano, bright, bright-long (tasks as the suite names them)
//	pipelines:
//	  - file: hybrid.yaml    # a pipeline file, relative to this one
//	  - name: bm25-lucene    # or a pipeline written inline
//	    retrieve: [{bm25: {scheme: lucene}}]
//	prices: prices.yaml      # model → dollars per million tokens (usage.ParsePrices)
//	allow_missing_docs: true # a sampled corpus (Sweep.AllowMissing)
//	request_timeout: 90s     # calls to model servers, for every pipeline
//	retries: 3               # that does not set its own
//	endpoint_concurrency: 4
type File struct {
	Out       string      `yaml:"out"`
	Tasks     []string    `yaml:"tasks"`
	Data      []string    `yaml:"data"`
	Suite     string      `yaml:"suite"`
	Split     string      `yaml:"split"`
	Pipelines []yaml.Node `yaml:"pipelines"`
	Prices    string      `yaml:"prices"`
	// AllowMissingDocs is `r2med run --allow-missing-docs` for every cell.
	AllowMissingDocs bool `yaml:"allow_missing_docs"`

	RequestTimeout      string `yaml:"request_timeout"`
	Retries             *int   `yaml:"retries"`
	EndpointConcurrency int    `yaml:"endpoint_concurrency"`
}

// Load reads a sweep file; pipeline files it names are relative to its
// directory.
func Load(path string) (*Sweep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading sweep: %w", err)
	}
	s, err := Parse(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads a sweep from YAML; dir resolves relative pipeline files.
func Parse(data []byte, dir string) (*Sweep, error) {
	doc, err := yamlx.Parse(data)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("empty sweep file; it needs tasks: (or data:) and pipelines:")
	}
	var f File
	if err := yamlx.Decode(doc, &f, "the sweep"); err != nil {
		return nil, err
	}
	s := &Sweep{Out: f.Out}
	if s.Out == "" {
		s.Out = results.Root()
	}
	remote, err := config.File{RequestTimeout: f.RequestTimeout, Retries: f.Retries, EndpointConcurrency: f.EndpointConcurrency}.Remote()
	if err != nil {
		return nil, config.LineOf(doc, err)
	}
	if f.Prices != "" {
		p := f.Prices
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if s.Prices, err = usage.ReadPrices(p); err != nil {
			return nil, err
		}
	}
	suite, err := tasks.ParseSuite(f.Suite)
	if f.Suite == "" {
		suite, err = tasks.R2MED, nil
	}
	if err != nil {
		return nil, err
	}
	opts := dataset.Options{Split: f.Split}
	if opts.Split == "" {
		opts.Split = dataset.DefaultSplit
	}
	for _, name := range f.Tasks {
		if name == demo.Name {
			s.Sources = append(s.Sources, pipeline.Source{Task: demo.Name})
			continue
		}
		ts, err := tasks.ExpandIn(suite, name)
		if err != nil {
			return nil, fmt.Errorf("tasks: %w", err)
		}
		for _, t := range ts {
			s.Sources = append(s.Sources, pipeline.Source{Task: t.Name, Suite: suite, Options: opts})
		}
	}
	for _, d := range f.Data {
		if !filepath.IsAbs(d) && !isHubURI(d) {
			d = filepath.Join(dir, d)
		}
		s.Sources = append(s.Sources, pipeline.Source{Data: d, Options: opts})
	}
	if len(s.Sources) == 0 {
		return nil, errors.New("no tasks: give tasks: [NAME, …] or tasks: [all], or data: [DIR, …]")
	}
	if f.AllowMissingDocs {
		s.AllowMissing()
	}
	if len(f.Pipelines) == 0 {
		return nil, errors.New("no pipelines: give pipelines: with file: entries or inline pipelines")
	}
	names := map[string]int{}
	for i := range f.Pipelines {
		e := &f.Pipelines[i]
		var cfg config.Config
		var err error
		if k, v := yamlx.Lookup(e, "file"); k != nil {
			if len(e.Content) != 2 {
				return nil, yamlx.Errorf(k, "pipelines[%d]: give either file: or an inline pipeline, not both", i)
			}
			p := v.Value
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			cfg, err = config.LoadFile(p)
		} else {
			cfg, err = config.FromYAML(e)
		}
		if err != nil {
			return nil, fmt.Errorf("pipelines[%d]: %w", i, err)
		}
		cfg.Remote = cfg.Remote.Or(remote)
		name := cfg.ModelName()
		if j, dup := names[name]; dup {
			return nil, fmt.Errorf("pipelines[%d] and [%d] are both named %q and would write to the same directory; give one a name:", j, i, name)
		}
		names[name] = i
		s.Pipelines = append(s.Pipelines, cfg)
	}
	return s, nil
}

func isHubURI(s string) bool { return strings.HasPrefix(s, pipeline.HubURIPrefix) }

// Cell is one task × pipeline run of a sweep.
type Cell struct {
	Task     string
	Pipeline string
	Dir      string
}

// Options control a sweep.
type Options struct {
	Overwrite bool
	Progress  progress.Factory
	Log       io.Writer
	Command   []string
	// Cache holds embeddings and LLM answers across runs and sweeps, as in
	// Options; nil computes everything afresh.
	Cache *cache.Store
	// Replay, Prices and Warn are Options' for every cell; Prices
	// replaces the sweep file's table.
	Replay bool
	Prices usage.Prices
	Warn   io.Writer
	// Done hears about every cell as it finishes, failed or not.
	Done func(c Cell, out *pipeline.Outcome, err error)
}

// Run executes every cell, loading each task once for all pipelines. A
// failed cell does not stop the others; Run returns the number of failed
// cells.
func (s *Sweep) Run(ctx context.Context, opt Options) (failed int, err error) {
	bar := opt.Progress.New(len(s.Sources)*len(s.Pipelines), "sweep")
	defer bar.Done()
	for _, src := range s.Sources {
		task, err := src.Load(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return failed, ctx.Err()
			}
			for _, cfg := range s.Pipelines {
				failed++
				name := src.Task
				if name == "" {
					name = src.Data
				}
				if opt.Done != nil {
					opt.Done(Cell{Task: name, Pipeline: cfg.ModelName()}, nil, err)
				}
				bar.Add(1)
			}
			continue
		}
		for _, cfg := range s.Pipelines {
			c := Cell{Task: task.Name, Pipeline: cfg.ModelName()}
			c.Dir = results.RunDir(s.Out, c.Pipeline, task.Name)
			// A cell whose pipeline was edited under the same name is redone
			// in place (Outcome.Replaced says so).
			prices := opt.Prices
			if prices == nil {
				prices = s.Prices
			}
			out, err := pipeline.Run(ctx, task, cfg, pipeline.Options{Out: c.Dir, Overwrite: opt.Overwrite, Replace: true, Progress: progress.Factory{}, Log: opt.Log, Command: opt.Command, Cache: opt.Cache,
				Replay: opt.Replay, Prices: prices, Warn: opt.Warn, AllowMissingDocs: s.AllowMissingDocs})
			if ctx.Err() != nil {
				return failed, &CellError{Cell: c, Err: ctx.Err()}
			}
			if err != nil {
				failed++
			}
			if opt.Done != nil {
				opt.Done(c, out, err)
			}
			bar.Add(1)
		}
	}
	return failed, nil
}

// CellError is Sweep.Run's error for the cell it stopped in (an
// interrupt); pipeline.Resumable(Cell.Dir) lists what that cell left to
// resume from.
type CellError struct {
	Cell Cell
	Err  error
}

func (e *CellError) Error() string {
	return fmt.Sprintf("%s × %s: %v", e.Cell.Task, e.Cell.Pipeline, e.Err)
}
func (e *CellError) Unwrap() error { return e.Err }

// NeedsCache reports whether any pipeline of the sweep can use the
// embedding and LLM cache.
func (s *Sweep) NeedsCache() bool {
	return slices.ContainsFunc(s.Pipelines, config.Config.NeedsCache)
}
