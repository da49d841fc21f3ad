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

// Ours groups the runs of a results listing into systems: runs with the
// same settings (the manifest's config without its per-task fingerprint)
// and suite are one system. When a system has several runs of one task,
// the latest started wins; the others are returned in superseded. Runs on
// R2MED's tasks fill the leaderboard's columns; runs on other data (the
// demo task, BEIR sets such as NFCorpus) are kept under the manifest's
// task name, so exports and pages show them too (see OtherTasks).
func Ours(l *results.Listing) (systems []System, superseded []results.Run) {
	type group struct {
		sys    *System
		latest map[string]results.Run
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range l.Runs {
		task, _ := r.Task()
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
			g.sys.Tasks[task] = TaskResult{Metrics: m, Style: style, EvaluationTime: r.Result.EvaluationTime, Source: r.Dir, Usage: r.Manifest.Usage}
		}
		systems = append(systems, *g.sys)
	}
	disambiguate(systems)
	for i := range systems {
		systems[i].ID = "ours/" + systems[i].Name
	}
	slices.SortFunc(systems, func(a, b System) int { return strings.Compare(a.ID, b.ID) })
	return systems, superseded
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
// RunKind also knows fusion, which only the manifest records.
func KindOf(res *results.R2MED) Kind {
	switch {
	case extra(res, "reranker_name") != "":
		return Reranker
	case extra(res, "gar_method") != "":
		return GAR
	}
	return Base
}

// RunKind is the kind of system a finished run is from: KindOf its result
// file, except that a run fusing several retrievers (and neither
// reranked nor on expanded queries) is Fusion.
func RunKind(r results.Run) Kind {
	k := KindOf(r.Result)
	if k == Base && FusionOf(r.Manifest) != nil {
		return Fusion
	}
	return k
}

// Fused is how a run combined several retrievers, as its manifest
// records it.
type Fused struct {
	Method string   // "rrf", "combsum"
	Parts  []string // the retrievers, as result files name them: "bm25", "bge", "bm25-lucene"
}

// Name is the fused system's name: "rrf(bm25,bge)".
func (f *Fused) Name() string { return f.Method + "(" + strings.Join(f.Parts, ",") + ")" }

// FusionOf reads the fusion a manifest records, nil for a run of one
// retriever. It reads the settings' "fuse" entry (method, with the
// primary retriever's settings at the top and the others under "also"),
// and a "fusion" entry of the same shape, with "retrievers" listing the
// parts' names, where a manifest has one.
func FusionOf(m *results.Manifest) *Fused {
	if m == nil {
		return nil
	}
	for _, key := range []string{"fusion", "fuse"} {
		f, ok := m.Config[key].(map[string]any)
		if !ok {
			continue
		}
		method, _ := f["method"].(string)
		if method == "" {
			method = "rrf"
		}
		out := &Fused{Method: strings.ToLower(method)}
		if names, ok := f["retrievers"].([]any); ok {
			for _, n := range names {
				if s, ok := n.(string); ok {
					out.Parts = append(out.Parts, s)
				}
			}
		}
		if len(out.Parts) == 0 {
			out.Parts = append(out.Parts, partName(m.Config))
			also, _ := m.Config["also"].([]any)
			for _, a := range also {
				if am, ok := a.(map[string]any); ok {
					out.Parts = append(out.Parts, partName(am))
				}
			}
		}
		if len(out.Parts) < 2 {
			continue
		}
		return out
	}
	return nil
}

// partName names one retriever of a fused run from its settings the way
// result files name it: the model of a dense retriever, "bm25-SCHEME" for
// a BM25 scheme other than R2MED's.
func partName(cfg map[string]any) string {
	str := func(k string) string { s, _ := cfg[k].(string); return s }
	switch r := str("retriever"); {
	case r == "bm25" && str("bm25_scheme") != "" && str("bm25_scheme") != "r2med":
		return "bm25-" + str("bm25_scheme")
	case r == "dense" && str("model") != "":
		return str("model")
	default:
		return r
	}
}

func extra(res *results.R2MED, k string) string {
	v, _ := res.Extra[k].(string)
	return v
}

// displayName is the system's name: the name the run was given (r2med run
// --name, a pipeline file's name:), else R2MED's naming of its result
// file, with a fused retriever named by its method and parts
// ("rrf(bm25,bge) → tei@top10").
func displayName(r results.Run) string {
	if n, ok := r.Manifest.Config["name"].(string); ok && n != "" {
		return n
	}
	name := results.SystemName(r.Result)
	f := FusionOf(r.Manifest)
	if f == nil {
		return name
	}
	plain := strings.Join(f.Parts, "+")
	switch {
	case name == plain:
		return f.Name()
	case strings.HasPrefix(name, plain+" → "):
		return f.Name() + strings.TrimPrefix(name, plain)
	case strings.HasSuffix(name, " → "+plain):
		return strings.TrimSuffix(name, plain) + f.Name()
	}
	return name // a name the user gave
}

func oursSystem(r results.Run) *System {
	s := &System{Name: displayName(r), Kind: RunKind(r), Config: Settings(r), Tasks: map[string]TaskResult{}}
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
	if f := FusionOf(r.Manifest); f != nil && s.Kind != Reranker && s.Kind != GAR {
		s.Retriever = f.Name()
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
