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
	Task    string      // "demo" or a registry task name or alias
	Data    string      // a directory or an hf:// URI
	Suite   tasks.Suite // for registry tasks: the full R2MED task or its NanoR2MED split
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
		return demo.Load()
	case s.Task != "":
		t, err := tasks.Lookup(s.Task)
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

func (s Source) hubSpec() hubrepo.Spec {
	spec := hubrepo.Spec{AllowMissingDocs: s.Options.AllowMissingDocs, Name: s.Options.Name}
	if s.Options.Split != dataset.DefaultSplit {
		spec.Split = s.Options.Split
	}
	return spec
}

func (s Source) loadRegistered(ctx context.Context, t tasks.Task) (*ir.Task, error) {
	suite := s.Suite
	if suite == "" {
		suite = tasks.R2MED
	}
	repoID, rev := t.HubRepo(suite)
	spec := registrySpec(t, suite)
	spec.AllowMissingDocs = s.Options.AllowMissingDocs
	var patterns []string
	if suite == tasks.Nano {
		// NanoR2MED holds all eight tasks; fetch this task's split only.
		patterns = []string{"README.md", "*/" + t.NanoSplit + "-*"}
	}
	task, err := s.loadHub(ctx, hub.Repo{Type: hub.Dataset, ID: repoID}, rev, spec, patterns...)
	if err != nil {
		return nil, fmt.Errorf("task %s (%s at the pinned revision %s): %w", t.Name, repoID, rev, err)
	}
	return task, nil
}

// registrySpec says how to read a registry task from its repository in
// suite s: R2MED's own repository, or its split of NanoR2MED, named after
// the split as HAKARI-Bench names it.
func registrySpec(t tasks.Task, s tasks.Suite) hubrepo.Spec {
	if s == tasks.Nano {
		return hubrepo.Spec{Shape: hubrepo.Nano, Split: t.NanoSplit, Name: t.NanoSplit}
	}
	return hubrepo.Spec{Shape: hubrepo.R2MED, Name: t.Name}
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
		var patterns []string
		if suite == tasks.Nano {
			patterns = []string{"README.md", "*/" + t.NanoSplit + "-*"}
		}
		snap, err := c.Snapshot(ctx, hub.Repo{Type: hub.Dataset, ID: repoID}, rev, patterns...)
		if err != nil {
			return out, fmt.Errorf("%s: %w", t.Name, err)
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
