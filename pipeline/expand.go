package pipeline

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/gar"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
)

// generateStage makes the run's generations and keeps them, with their
// generation manifest, in Options.Out/stages/expand: a rerun with the same
// data and settings reads them back instead of asking again (and the LLM
// cache answers whatever an interrupted stage had asked). The generation
// manifest, agentic traces included, goes into the run manifest; what the
// answers cost and which cache entries they are, into cs.
func generateStage(ctx context.Context, task *ir.Task, g gar.Spec, remote config.Remote, opt Options, m *results.Manifest, cs *calls) ([]expand.Generation, error) {
	fp := reuse.Of(dataFingerprint(m, expand.Source{}, nil), g.Describe(), 0)
	st := opt.stages(cs, m)
	label := g.LLMName()
	dir := filepath.Join(st.dir, "expand")
	rel := func(name string) string {
		r, _ := filepath.Rel(st.dir, filepath.Join(expand.Dir(dir, g.Method, label), name))
		return filepath.ToSlash(r)
	}
	files := append([]string{rel(expand.FileName), rel(expand.ManifestName)}, callFiles("expand")...)
	if st.reusable("expand", fp, files...) {
		if gens, err := expand.LoadDir(dir, g.Method, label); err == nil {
			if counts, err := cs.reuse(st.dir, "expand"); err == nil {
				maps.Copy(m.Counts, counts)
				m.Details["expand"] = map[string]any{"reused": filepath.Join(expand.Dir(dir, g.Method, label), expand.ManifestName)}
				return gens, nil
			}
		}
	}
	sc := cs.begin()
	gopt := remote.Generation(opt.warn())
	gopt.Progress, gopt.Meter, gopt.Replay = opt.Progress, sc.meter, opt.Replay
	if opt.Cache != nil {
		gopt.Cache = opt.Cache
	}
	var res *expand.GenerateResult
	err := m.Time("expand", func() error {
		var err error
		res, err = gar.Expand(ctx, task, g, gopt)
		return err
	})
	if err == nil {
		err = res.Manifest.Unusable()
	}
	if err != nil {
		cs.end(sc, "", "expand", nil) // the usage counts; nothing is kept
		return nil, err
	}
	gm := res.Manifest
	if s := gm.FallbackSummary(); s != "" {
		logf(opt.Log, "%s: warning: %s", task.Name, s)
	}
	counts := map[string]int{"generation_fallbacks": len(gm.Fallbacks), "generations_requested": gm.Requested, "generations_cached": gm.Cached}
	maps.Copy(m.Counts, counts)
	m.Details["expand"] = gm
	if st.dir == "" {
		cs.end(sc, "", "expand", nil)
	} else {
		stage := st.stage("expand")
		if err := stage.Begin(); err != nil {
			return nil, err
		}
		if err := cs.end(sc, st.dir, "expand", counts); err != nil {
			return nil, err
		}
		if _, err := res.WriteDir(dir); err != nil {
			return nil, err
		}
		if err := stage.Keep(fp, files...); err != nil {
			return nil, err
		}
	}
	return res.Generations(), nil
}

// expandQueries combines each query with its generation (R2MED's BM25
// text, the dense input to average) and returns the generations aligned
// with the queries. Generations for queries the task does not evaluate are
// set aside (R2MED scores judged queries only) and counted.
func expandQueries(task *ir.Task, all []expand.Generation, m *results.Manifest) ([]retrieve.Query, []expand.Generation, error) {
	gens, unjudged := judgedOnly(task, all)
	if unjudged > task.UnjudgedQueries {
		// More than the query file's unjudged queries: some generations
		// belong to no query of this task, and Expand names them.
		gens = all
	}
	m.Counts["generations_for_unjudged_queries"] = unjudged
	aligned, err := expand.Align(task.Queries, gens)
	if err != nil {
		return nil, nil, err
	}
	queries, err := retrieve.Expand(task.Queries, gens)
	return queries, aligned, err
}

// loadGenerations reads published generations: from a Hub repository
// (the task's, or a generations directory with a dataset card) through its
// configs (the method's config, the LLM's split), from any other directory
// by R2MED's path, <method>/<llm>/query_with_hydoc.jsonl.
func loadGenerations(task *ir.Task, src expand.Source, dir string) ([]expand.Generation, []string, error) {
	// A Hub folder's card says where its generations are, wherever the
	// folder lies (see readDir); other folders hold R2MED's paths. BRIGHT
	// publishes LLM reasoning about its queries (its <llm>_reason
	// configs), which query reasoning reads.
	hubDir := ""
	if dir == "" && (task.Layout == ir.LayoutR2MEDHub || task.Layout == ir.LayoutBrightHub) {
		hubDir = task.Dir
	} else if dir != "" {
		card, err := hubrepo.Declares(dir)
		if err != nil {
			return nil, nil, err
		}
		if card {
			hubDir = dir
		}
	}
	if hubDir != "" {
		var hg *hubrepo.Generations
		var err error
		if dir == "" && task.Layout == ir.LayoutBrightHub {
			if expand.MethodDir(src.Method) != expand.Reasoning {
				return nil, nil, fmt.Errorf("BRIGHT publishes LLM reasoning about its queries, not %s generations: use --gar reasoning (or reasoning-append) with --gar-llm naming one of its <llm>_reason configs, or give --gar-dir", src.Method)
			}
			hg, err = hubrepo.ReadReasoning(task.Dir, src.LLM, task.Split)
		} else {
			hg, err = hubrepo.ReadGenerations(hubDir, src.Method, src.LLM)
		}
		if err != nil {
			return nil, nil, err
		}
		gens := make([]expand.Generation, len(hg.Rows))
		for i, r := range hg.Rows {
			gens[i] = expand.Generation{ID: r.ID, Text: r.Text, HyDoc: r.HyDoc, Method: src.Method, LLM: src.LLM}
		}
		return gens, hg.Files, nil
	}
	if dir == "" {
		dir = task.Dir
	}
	gens, err := expand.LoadDir(dir, src.Method, src.LLM)
	if err != nil {
		return nil, nil, err
	}
	var files []string
	if p, ok := fileio.Exists(filepath.Join(expand.Dir(dir, src.Method, src.LLM), expand.FileName)); ok {
		files = append(files, p)
	}
	return gens, files, nil
}

// judgedOnly sets aside generations for queries the task does not evaluate
// (R2MED scores only judged queries) and says how many it set aside.
func judgedOnly(task *ir.Task, gens []expand.Generation) ([]expand.Generation, int) {
	known := make(map[string]bool, len(task.Queries))
	for _, q := range task.Queries {
		known[q.ID] = true
	}
	kept := gens[:0:0]
	for _, g := range gens {
		if known[g.ID] {
			kept = append(kept, g)
		}
	}
	return kept, len(gens) - len(kept)
}
