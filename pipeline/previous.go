package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

// fingerprint hashes what determines a run's numbers: settings, input
// checksums and the rules r2med ranks by (plan.Spec.Rules), not times or
// paths.
func fingerprint(m *results.Manifest, rules map[string]any) string {
	f := reuse.NewFingerprint().Add(m.Config, m.Task.Name, m.Task.Split, rules)
	for _, in := range m.Inputs {
		f.Add(in.SHA256)
	}
	return f.String()
}

// sameInputs reports whether two manifests record the same input files
// with the same checksums.
func sameInputs(a, b *results.Manifest) bool {
	return slices.EqualFunc(a.Inputs, b.Inputs, func(x, y results.FileDigest) bool { return x.SHA256 == y.SHA256 })
}

// previous decides what to do with the run already in opt.Out: its
// outcome when it is this run (same fingerprint) and its outputs are
// verified; nothing when there is none, or when it may be redone (the
// same settings on changed data, outputs that no longer match their
// manifest) or replaced (other settings, with Overwrite or Replace, which
// replaced reports); an error when it holds other settings and nothing
// allows replacing them.
func previous(opt Options, m *results.Manifest, fp string) (out *Outcome, replaced bool, err error) {
	dir := opt.Out
	if removed, err := reuse.Sweep(dir); err != nil {
		return nil, false, err
	} else if len(removed) > 0 {
		logf(opt.Log, "%s: removed %d temporary %s an interrupted run left (%s)", dir, len(removed), errtext.Plural(len(removed), "file", "files"), strings.Join(removed, ", "))
	}
	if _, err := reuse.SweepTree(filepath.Join(dir, StagesDir)); err != nil {
		return nil, false, err
	}
	prev, err := results.ReadManifest(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		if opt.Overwrite {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("%v; --overwrite replaces it, or give another --out", err)
	}
	prevFP, _ := prev.Config["fingerprint"].(string)
	check := reuse.Record{Fingerprint: prevFP, SHA256: prev.OutputSHA256}.Check(dir, fp, RunFile, ResultsFile)
	switch {
	case check == nil && !opt.Overwrite:
		res, err1 := results.ReadR2MED(filepath.Join(dir, ResultsFile))
		run, err2 := trec.ReadRunFile(filepath.Join(dir, RunFile))
		if err := errors.Join(err1, err2); err != nil {
			logf(opt.Log, "%s: the outputs cannot be read back (%v); redoing the run", dir, err)
			return nil, false, nil
		}
		if qid, ok := tied(run); ok {
			// Written before runs were ranked (ir.Rank): trec_eval reads
			// its ties in another order than the one its numbers were
			// computed in.
			logf(opt.Log, "%s: %s lists equal scores (query %s), written by an older r2med, whose evaluation may not be the file's; redoing the run", dir, RunFile, qid)
			return nil, false, nil
		}
		logf(opt.Log, "%s: outputs in %s are up to date (same data and settings, checksums verified); --overwrite to redo", m.Task.Name, dir)
		return &Outcome{Run: run, Result: res, Manifest: prev, Skipped: true}, false, nil
	case check == nil || opt.Overwrite && prevFP == fp:
		return nil, false, nil // --overwrite of the same run
	case prevFP == fp:
		logf(opt.Log, "%s: the outputs in %s are not the ones its manifest describes (%v); redoing the run", m.Task.Name, dir, check)
		return nil, false, nil
	}
	diff := settingsDiff(prev, m)
	if diff == "" {
		if sameInputs(prev, m) {
			// Only the fingerprint's rules differ (plan.Spec.Rules).
			logf(opt.Log, "%s: the run in %s was made by an r2med that ranks otherwise (same data and settings); redoing it", m.Task.Name, dir)
		} else {
			logf(opt.Log, "%s: the data changed since the run in %s (same settings); redoing it", m.Task.Name, dir)
		}
		return nil, false, nil
	}
	if !opt.Overwrite && !opt.Replace {
		return nil, false, fmt.Errorf("%s holds a run of %s on %s with other settings (%s); --overwrite replaces it, or keep both with another --out (or --name)",
			dir, systemOf(dir, prev), prev.Task.Name, diff)
	}
	logf(opt.Log, "%s: replacing the run of %s in %s, made with other settings (%s)", m.Task.Name, systemOf(dir, prev), dir, diff)
	return nil, true, nil
}

// tied reports the first query (in byte order) whose hits' float32
// scores do not strictly decrease.
func tied(run ir.Run) (string, bool) {
	for _, qid := range trec.QueryIDs(run) {
		if ir.TieAt(run[qid]) >= 0 {
			return qid, true
		}
	}
	return "", false
}

// systemOf names the system of the run in dir for messages.
func systemOf(dir string, m *results.Manifest) string {
	if m.Name != "" {
		return m.Name
	}
	if res, err := results.ReadR2MED(filepath.Join(dir, ResultsFile)); err == nil {
		return results.SystemName(res)
	}
	if r, ok := m.Config["retriever"].(string); ok {
		return r
	}
	return "another system"
}

// settingsDiff lists the settings and task fields in which two manifests
// differ, "" when they agree: "k1 0.9 → 1.2, top_k 100 → 10".
func settingsDiff(old, cur *results.Manifest) string {
	canon := func(m *results.Manifest) map[string]any {
		c := maps.Clone(m.Config)
		delete(c, "fingerprint")
		c["task"], c["split"] = m.Task.Name, m.Task.Split
		data, _ := json.Marshal(c)
		var out map[string]any
		json.Unmarshal(data, &out)
		return out
	}
	a, b := canon(old), canon(cur)
	all := maps.Clone(a)
	maps.Copy(all, b)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && reflect.DeepEqual(va, vb) {
			continue
		}
		show := func(v any, ok bool) string {
			if !ok {
				return "unset"
			}
			data, _ := json.Marshal(v)
			return string(data)
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", k, show(va, oka), show(vb, okb)))
	}
	return strings.Join(parts, ", ")
}
