package leaderboard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/sysname"
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
	named := systemNames(l.Runs)
	for _, key := range order {
		g := groups[key]
		for task, r := range g.latest {
			m, style := Normalize(r.Result.Test)
			tr := TaskResult{Metrics: m, Style: style, EvaluationTime: r.Result.EvaluationTime, Source: r.Dir, Usage: r.Manifest.Usage, MRRLabel: mrrLabel(r)}
			tr.Unanswered, tr.Queries = r.Manifest.Unanswered()
			tr.Depth = r.Manifest.ShallowDepth()
			g.sys.Tasks[task] = tr
		}
		g.sys.Name = named[key]
		g.sys.ID = "ours/" + g.sys.Name
		systems = append(systems, *g.sys)
	}
	slices.SortFunc(systems, func(a, b System) int { return strings.Compare(a.ID, b.ID) })
	return systems, superseded
}

// systemNames names the systems behind runs, by SystemKey: the name
// its stages give (and its suite, where not R2MED's), and where systems
// that differ in settings share one, a short hash of their key: the same
// on every rerun, never a dump of the settings (those are SettingsText,
// on hover and in exports; Apart says which differ).
func systemNames(runs []results.Run) map[string]string {
	var keys, names []string
	seen := map[string]bool{}
	for _, r := range runs {
		key := SystemKey(r)
		if seen[key] {
			continue
		}
		seen[key] = true
		keys = append(keys, key)
		names = append(names, oursSystem(r).Name)
	}
	names = sysname.Disambiguate(names, keys)
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		out[k] = names[i]
	}
	return out
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
func (f *Fused) Name() string {
	return sysname.Stages{Retrievers: f.Parts, Fusion: f.Method}.Retrieval()
}

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
// --name, a pipeline file's name:), else its stages named by sysname's
// rule, read from its result file and completed from its manifest where
// a result file of an earlier version said less: a fused retriever's
// method and parts where the file joined the parts with "+", the
// reranker's kind where the file named only its model.
func displayName(r results.Run) string {
	if n, ok := r.Manifest.Config["name"].(string); ok && n != "" {
		return n
	}
	st := results.Stages(r.Result)
	if f := FusionOf(r.Manifest); f != nil && len(st.Retrievers) == 1 && st.Retrievers[0] == strings.Join(f.Parts, "+") {
		st.Retrievers, st.Fusion = f.Parts, f.Method
	}
	if rr, ok := r.Manifest.Config["rerank"].(map[string]any); ok && st.Reranker != "" {
		kind, _ := rr["kind"].(string)
		model, _ := rr["model"].(string)
		if kind != "" && st.Reranker != kind && !strings.HasPrefix(st.Reranker, kind+":") {
			st.Reranker = sysname.Reranker(kind, model)
		}
	}
	return st.Name()
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

// mrrLabel is TaskResult.MRRLabel of a run: its manifest's MRRLabel
// where that is not plain "MRR".
func mrrLabel(r results.Run) string {
	if l := r.Manifest.MRRLabel(); l != "MRR" {
		return l
	}
	return ""
}
