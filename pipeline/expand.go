package pipeline

import (
	"context"
	"maps"
	"path/filepath"

	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/gar"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
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
