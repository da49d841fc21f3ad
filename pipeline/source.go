package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/tasks"
)

// Source says where a run's data comes from: the built-in demo task, an
// R2MED task from the registry (read from the Hugging Face Hub at its
// pinned revision, through the local cache), a directory, or an
// hf://datasets/OWNER/NAME[@REVISION] URI.
type Source struct {
	Task string // "demo" or a registry task name or alias
	Data string // a directory or an hf:// URI
	// Suite is the registry's suite Task is named in: the full R2MED task
	// (the default) or its NanoR2MED split, or a BRIGHT task in the short
	// or long-document setting.
	Suite   tasks.Suite
	Options dataset.Options
	Hub     *hub.Client // nil means hub.FromEnv()
}

// HubURIPrefix marks a --data value that names a Hub repository.
const HubURIPrefix = "hf://"

// LoadTask resolves a task name or data location with default options; see
// Source for the forms accepted.
func LoadTask(task, data string, opts dataset.Options) (*ir.Task, error) {
	return Source{Task: task, Data: data, Options: opts}.Load(context.Background())
}

// Load reads the task the source names.
func (s Source) Load(ctx context.Context) (*ir.Task, error) {
	switch {
	case s.Task != "" && s.Data != "":
		return nil, errors.New("give either --task or --data, not both")
	case s.Task == demo.Name:
		t, err := demo.Load()
		if err == nil && s.Options.Exclude != "" {
			// The embedded task has no files: its exclusions are part of
			// the content its runs are fingerprinted by.
			err = dataset.ExcludeFile(t, s.Options.Exclude)
		}
		return t, err
	case s.Task != "":
		t, err := tasks.LookupIn(s.suite(), s.Task)
		if err != nil {
			return nil, fmt.Errorf("%w; the built-in task is %q, and --data takes a directory or an hf:// URI", err, demo.Name)
		}
		return s.loadRegistered(ctx, t)
	case s.Data == "":
		return nil, errors.New("no data: pass --task demo, --task NAME (an R2MED task, or all), or --data DIR|hf://datasets/OWNER/NAME[@REV]")
	case strings.HasPrefix(s.Data, HubURIPrefix):
		repo, rev, err := hub.ParseURI(s.Data)
		if err != nil {
			return nil, err
		}
		snap, err := s.hub().Snapshot(ctx, repo, rev)
		if err != nil {
			return nil, err
		}
		return readDir(snap.Dir, s.hubSpec(), s.Options)
	}
	return readDir(s.Data, s.hubSpec(), s.Options)
}

// readDir reads a task directory by one rule, whether it came from the Hub
// (hf://) or lies here (a copy of a Hub folder, a set nano build wrote, a
// task in R2MED's or BEIR's layout), so that a folder reads the same both
// ways: a dataset card declaring a task's configs decides what is read
// (hubrepo.IsTask, hubrepo.Load); otherwise the files' layout does
// (dataset.Load); a folder of neither, with a README.md, is read through
// the configs its file names imply.
func readDir(dir string, spec hubrepo.Spec, opts dataset.Options) (*ir.Task, error) {
	card, err := hubrepo.IsTask(dir)
	if err != nil {
		return nil, err
	}
	if card {
		return hubrepo.Load(dir, spec)
	}
	if _, err := dataset.DetectLayout(dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "README.md")); statErr == nil {
			return hubrepo.Load(dir, spec)
		}
	}
	return dataset.Load(dir, opts)
}

func (s Source) suite() tasks.Suite {
	if s.Suite == "" {
		return tasks.R2MED
	}
	return s.Suite
}

func (s Source) hubSpec() hubrepo.Spec {
	spec := hubrepo.Spec{AllowMissingDocs: s.Options.AllowMissingDocs, Name: s.Options.Name, Exclude: s.Options.Exclude}
	if s.Options.Split != dataset.DefaultSplit {
		spec.Split = s.Options.Split
	}
	return spec
}

func (s Source) loadRegistered(ctx context.Context, t tasks.Task) (*ir.Task, error) {
	suite := s.suite()
	repoID, rev := t.HubRepo(suite)
	spec := registrySpec(t, suite)
	spec.AllowMissingDocs = s.Options.AllowMissingDocs
	spec.Exclude = s.Options.Exclude
	task, err := s.loadHub(ctx, hub.Repo{Type: hub.Dataset, ID: repoID}, rev, spec, registryPatterns(t, suite)...)
	if err != nil {
		return nil, fmt.Errorf("task %s (%s at the pinned revision %s): %w", t.NameIn(suite), repoID, rev, err)
	}
	return task, nil
}

// registrySpec says how to read a registry task from its repository in
// suite s: R2MED's own repository, its split of NanoR2MED, or its split
// of BRIGHT's, named as tasks.Task.NameIn names it.
func registrySpec(t tasks.Task, s tasks.Suite) hubrepo.Spec {
	switch {
	case s.Benchmark() == tasks.Bright:
		return hubrepo.Spec{Shape: hubrepo.Bright, Split: t.Name, Name: t.NameIn(s), Long: s == tasks.BrightLong}
	case s == tasks.Nano:
		return hubrepo.Spec{Shape: hubrepo.Nano, Split: t.NanoSplit, Name: t.NameIn(s)}
	}
	return hubrepo.Spec{Shape: hubrepo.R2MED, Name: t.Name}
}

// registryPatterns are the files of a registry task's repository to
// fetch; none means all. NanoR2MED and BRIGHT hold every task of their
// suite as a split of each config: only this task's split is fetched, of
// BRIGHT's configs the queries, the setting's documents and the published
// LLM reasoning (small beside the documents, and what --gar reasoning
// reads, so that a pulled task runs it offline).
func registryPatterns(t tasks.Task, s tasks.Suite) []string {
	switch {
	case s == tasks.Bright:
		return []string{"README.md", "examples/" + t.Name + "-*", "documents/" + t.Name + "-*", "*_reason/" + t.Name + "-*"}
	case s == tasks.BrightLong:
		return []string{"README.md", "examples/" + t.Name + "-*", "long_documents/" + t.Name + "-*", "*_reason/" + t.Name + "-*"}
	case s == tasks.Nano:
		return []string{"README.md", "*/" + t.NanoSplit + "-*"}
	}
	return nil
}

func (s Source) hub() *hub.Client {
	if s.Hub == nil {
		return hub.FromEnv()
	}
	return s.Hub
}

func (s Source) loadHub(ctx context.Context, repo hub.Repo, rev string, spec hubrepo.Spec, patterns ...string) (*ir.Task, error) {
	snap, err := s.hub().Snapshot(ctx, repo, rev, patterns...)
	if err != nil {
		return nil, err
	}
	return hubrepo.Load(snap.Dir, spec)
}

// Pull fills the local Hub cache with the tasks' repositories at their
// pinned revisions, so that later runs work offline (HF_HUB_OFFLINE=1).
func Pull(ctx context.Context, c *hub.Client, suite tasks.Suite, ts []tasks.Task) ([]*hub.Snapshot, error) {
	if c == nil {
		c = hub.FromEnv()
	}
	var out []*hub.Snapshot
	for _, t := range ts {
		repoID, rev := t.HubRepo(suite)
		snap, err := c.Snapshot(ctx, hub.Repo{Type: hub.Dataset, ID: repoID}, rev, registryPatterns(t, suite)...)
		if err != nil {
			return out, fmt.Errorf("%s: %w", t.NameIn(suite), err)
		}
		out = append(out, snap)
	}
	return out, nil
}

// HubCommit returns the commit of a Hugging Face cache snapshot directory
// (…/snapshots/<commit>), or "" for any other path.
func HubCommit(dir string) string {
	parent, commit := filepath.Split(filepath.Clean(dir))
	if filepath.Base(parent) != "snapshots" || len(commit) != 40 {
		return ""
	}
	for _, c := range commit {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	return commit
}
