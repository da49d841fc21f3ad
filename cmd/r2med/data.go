package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/tasks"
)

// dataFlags are the flags that say which data a command reads.
type dataFlags struct {
	data, task, suite string
	opts              dataset.Options
}

func addDataFlags(cmd *cobra.Command, d *dataFlags) {
	f := cmd.Flags()
	f.StringVar(&d.task, "task", "", `task: "demo" (built in), a task of the suite (R2MED's Biology, MedQA-Diag, … or an alias; BRIGHT's biology, leetcode, …), a comma-separated list, or "all"`)
	f.StringVar(&d.suite, "suite", string(tasks.R2MED), "registry tasks: r2med (the full R2MED task), nano (its NanoR2MED split), bright (BRIGHT's 12 tasks) or bright-long (BRIGHT's long documents)")
	f.StringVar(&d.data, "data", "", "task directory (R2MED or BEIR layout, detected) or hf://datasets/OWNER/NAME[@REVISION]")
	f.StringVar(&d.opts.Split, "split", dataset.DefaultSplit, "BEIR qrels split, or the split of a Nano set (or BRIGHT's task) given by --data")
	f.BoolVar(&d.opts.AllowMissingDocs, "allow-missing-docs", false, "accept judgments of documents the corpus lacks (a sampled corpus); they count as unretrievable relevant documents")
	f.StringVar(&d.opts.Exclude, "exclude", "", "exclusions file: QUERY-ID DOC-ID per line (tab or spaces): documents each query must not retrieve, added to the task's own (BRIGHT's excluded_ids, DIR/"+dataset.ExclusionsFile+")")
}

// sources expands the flags into one source per task, in R2MED's order
// for "all".
func (d *dataFlags) sources() ([]pipeline.Source, error) {
	suite, err := tasks.ParseSuite(d.suite)
	if err != nil {
		return nil, usage(err)
	}
	if d.task == "" || strings.EqualFold(d.task, demo.Name) || d.data != "" {
		if suite != tasks.R2MED {
			return nil, usageErrorf("--suite %s picks the registry's tasks (--task Biology --suite nano, --task biology --suite bright); it does not apply to --task demo or --data (for a Nano set or BRIGHT's repository in a directory or on the Hub, give --data and --split)", suite)
		}
		return []pipeline.Source{{Task: d.task, Data: d.data, Suite: suite, Options: d.opts}}, nil
	}
	ts, err := tasks.ExpandIn(suite, d.task)
	if err != nil {
		return nil, taskError(err)
	}
	out := make([]pipeline.Source, len(ts))
	for i, t := range ts {
		out[i] = pipeline.Source{Task: t.Name, Suite: suite, Options: d.opts}
	}
	return out, nil
}

// taskError is a usage error for a task the user named that none is
// called, suggesting the nearest name (the built-in demo task among
// them).
func taskError(err error) error {
	var ue *tasks.UnknownError
	if !errors.As(err, &ue) {
		return usage(err)
	}
	var known, shown []string
	for _, t := range ue.Suite.Tasks() {
		known = append(known, t.Names()...)
		shown = append(shown, t.Name)
	}
	known = append(known, demo.Name, "all")
	if s := yamlx.Suggest(ue.Name, known); s != "" {
		return usage(fmt.Errorf("unknown %s task %q (did you mean %q?); the tasks are %s (or \"all\"); the built-in task is %q", ue.Suite.Title(), ue.Name, s, strings.Join(shown, ", "), demo.Name))
	}
	return usage(fmt.Errorf("%w; the built-in task is %q", err, demo.Name))
}

func taskNames() string {
	var names []string
	for _, t := range tasks.All() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// usageErrorf is a usage error (exit 2) formatted as fmt.Errorf does.
func usageErrorf(format string, a ...any) error { return usage(fmt.Errorf(format, a...)) }
