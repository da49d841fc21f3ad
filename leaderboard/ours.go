package leaderboard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
)

// Ours groups the R2MED-task runs of a results listing into systems: runs
// with the same settings (the manifest's config without its per-task
// fingerprint) and suite are one system. When a system has several runs of
// one task, the latest started wins; the others are returned in
// superseded. Runs on data that is no R2MED task (the demo task, BEIR
// sets) have no leaderboard column and are returned in other.
func Ours(l *results.Listing) (systems []System, superseded, other []results.Run) {
	type group struct {
		sys    *System
		latest map[string]results.Run
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range l.Runs {
		task, ok := r.Task()
		if !ok {
			other = append(other, r)
			continue
		}
		key := SystemKey(r)
		g, ok := groups[key]
		if !ok {
			g = &group{sys: oursSystem(r), latest: map[string]results.Run{}}
			groups[key] = g
			order = append(order, key)
		}
		if prev, dup := g.latest[task]; dup {
			if prev.Started().After(r.Started()) {
				superseded = append(superseded, r)
				continue
			}
			superseded = append(superseded, prev)
		}
		g.latest[task] = r
	}
	for _, key := range order {
		g := groups[key]
		for task, r := range g.latest {
			m, style := Normalize(r.Result.Test)
			g.sys.Tasks[task] = TaskResult{Metrics: m, Style: style, EvaluationTime: r.Result.EvaluationTime, Source: r.Dir}
		}
		systems = append(systems, *g.sys)
	}
	disambiguate(systems)
	for i := range systems {
		systems[i].ID = "ours/" + systems[i].Name
	}
	slices.SortFunc(systems, func(a, b System) int { return strings.Compare(a.ID, b.ID) })
	return systems, superseded, other
}

// Settings is the run's settings that make it the system it is: the
// manifest's config without the per-task fingerprint.
func Settings(r results.Run) map[string]any {
	cfg := maps.Clone(r.Manifest.Config)
	delete(cfg, "fingerprint")
	return cfg
}

// SystemKey identifies the system behind a run: runs with the same key
// (suite, Settings and system name) are runs of one system, and Ours
// groups them so.
func SystemKey(r results.Run) string {
	cfg, _ := json.Marshal(Settings(r)) // sorted keys: a canonical form
	return string(r.Suite()) + "\x00" + string(cfg) + "\x00" + results.SystemName(r.Result)
}

// KindOf is the kind of system a result file is from, by the fields R2MED
// writes: reranker_name for a reranker, gar_method for GAR, else base.
func KindOf(res *results.R2MED) Kind {
	switch {
	case extra(res, "reranker_name") != "":
		return Reranker
	case extra(res, "gar_method") != "":
		return GAR
	}
	return Base
}

func extra(res *results.R2MED, k string) string {
	v, _ := res.Extra[k].(string)
	return v
}

func oursSystem(r results.Run) *System {
	s := &System{Name: results.SystemName(r.Result), Kind: KindOf(r.Result), Config: Settings(r), Tasks: map[string]TaskResult{}}
	if suite := r.Suite(); suite != tasks.R2MED {
		s.Suite = suite
		s.Name += " (" + string(suite) + ")"
	}
	switch s.Kind {
	case Reranker:
		s.Reranker, s.Retriever = extra(r.Result, "reranker_name"), extra(r.Result, "retriever_name")
		fmt.Sscan(fmt.Sprint(r.Result.Extra["topk"]), &s.TopK)
	case GAR:
		s.GARMethod, s.GARLLM, s.Retriever = extra(r.Result, "gar_method"), extra(r.Result, "gar_llm"), extra(r.Result, "retriever_name")
	default:
		s.Retriever = r.Result.ModelName
		if s.Retriever == "" {
			s.Retriever = extra(r.Result, "retriever_name")
		}
	}
	return s
}

// disambiguate renames systems that share a name by the settings that
// tell them apart: "bm25 [k1=0.9]" and "bm25 [k1=1.2]".
func disambiguate(systems []System) {
	byName := map[string][]int{}
	for i, s := range systems {
		byName[s.Name] = append(byName[s.Name], i)
	}
	for name, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		keys := map[string]bool{}
		for _, i := range idx {
			for k := range systems[i].Config {
				keys[k] = true
			}
		}
		var differ []string
		for k := range keys {
			first := fmt.Sprint(systems[idx[0]].Config[k])
			for _, i := range idx[1:] {
				if fmt.Sprint(systems[i].Config[k]) != first {
					differ = append(differ, k)
					break
				}
			}
		}
		slices.Sort(differ)
		for n, i := range idx {
			var parts []string
			for _, k := range differ {
				v, ok := systems[i].Config[k]
				if !ok {
					v = "none"
				}
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
			if len(parts) == 0 { // same settings, different suites or names; cannot happen, but stay unique
				parts = append(parts, fmt.Sprint("#", n+1))
			}
			systems[i].Name = name + " [" + strings.Join(parts, " ") + "]"
		}
	}
}
