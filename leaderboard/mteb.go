package leaderboard

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/mteb"
)

// ReadMTEB reads a folder of MTEB results (mteb.ReadDir: MTEB's cache or
// the results repository's layout) as external rows, one per model and
// revision, with their provenance: the model and revision (model_meta.json,
// else the folders) in the reference, the file each task's numbers come
// from, the MTEB version that computed them as who evaluated them (an
// unknown tool where mteb_version is null), and a note when a file's dataset revision is
// not the one MTEB pins for the task, and when a folder has no
// model_meta.json (named by its folders, where MTEB's load_results would
// leave it out by default). Scores are taken under R2MED's keys
// where MTEB's mean the same (ndcg, map, recall and precision at k), as
// fractions (a file holding percentages is refused: mtebScores), its
// main_score as nDCG@10 where the file lacks that key, and its mrr_at_100
// as R2MED's MRR: MTEB ranks 1000 documents per query, and its MRR@100
// reads the top 100 of that ranking as R2MED's MRR reads a run's top 100
// (MTEB before 2.18.19 broke ties among them in the order its search
// returned them, where trec_eval and later MTEB break them by document
// id: mteb/testdata/FACTS.md). Other mrr_at_k are left out. Of a file's
// splits and subsets the test split's default subset is read, as MTEB
// reads R2MED's tasks; a model's revisions are rows of their own.
func ReadMTEB(dir string) ([]System, error) {
	found, err := mteb.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type key struct{ model, rev string }
	byKey := map[key]*System{}
	var order []key
	revisions := map[string]int{}
	for _, f := range found {
		k := key{f.Model, f.Revision}
		s, ok := byKey[k]
		if !ok {
			s = &System{Kind: Base, Retriever: f.Model, Tasks: map[string]TaskResult{}, External: &External{
				Reference: "MTEB results in " + dir, AverageComputed: true,
			}}
			byKey[k] = s
			order = append(order, k)
			revisions[f.Model]++
		}
		if first, dup := s.Tasks[f.Task.R2MED]; dup {
			return nil, fmt.Errorf("%s: a second result of %s for %s at %s, beside %s; a board shows one: move one of the two out of %s", f.Path, f.Task.Name, f.Model, f.Revision, first.Source, dir)
		}
		set, ok := defaultSet(f.TaskResult)
		if !ok {
			return nil, fmt.Errorf("%s: no %s scores of subset %s", f.Path, mteb.Split, mteb.Subset)
		}
		m, err := mtebScores(set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		s.Tasks[f.Task.R2MED] = TaskResult{Metrics: m, Style: StyleMTEB, Source: f.Path}
		version := "an unknown tool (mteb_version null: not computed by MTEB)"
		if f.MTEBVersion != nil {
			version = "MTEB " + *f.MTEBVersion
		}
		if !strings.Contains(s.External.EvaluatedBy, version) {
			s.External.EvaluatedBy = joinNote(s.External.EvaluatedBy, version)
		}
		if noMeta := "no model_meta.json: named by its folders, where MTEB's load_results leaves such results out unless require_model_meta=False"; f.NoMeta && !strings.Contains(s.External.Note, noMeta) {
			s.External.Note = joinNote(s.External.Note, noMeta)
		}
		if f.DatasetRevision != f.Task.Revision {
			s.External.Note = joinNote(s.External.Note, fmt.Sprintf("%s read %s at %s, not the revision MTEB pins (%s)", f.Task.R2MED, f.Task.Dataset, f.DatasetRevision, f.Task.Revision))
		}
	}
	var out []System
	for _, k := range order {
		s := byKey[k]
		s.Name = k.model
		if revisions[k.model] > 1 {
			s.Name += "@" + k.rev
		}
		s.ID = "mteb/" + k.model + "@" + k.rev
		s.External.Reference += ": " + k.model + " at revision " + k.rev
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b System) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// mtebScores are a score set's numbers under R2MED's keys: fractions, as
// MTEB's files hold them (a number outside 0 to 1 is a percentage or
// worse, and refused, naming the key); its main_score as ndcg_at_10 where
// that key is missing (R2MED's main score in MTEB), and refused where the
// two differ.
func mtebScores(set mteb.ScoreSet) (map[string]float64, error) {
	m := map[string]float64{}
	for _, k := range mteb.MetricOrder(set.Metrics) {
		if v := set.Metrics[k]; isR2MEDMetric(k) {
			if !(v >= 0 && v <= 1) {
				return nil, fmt.Errorf("%s is %v, outside 0 to 1: MTEB's files hold fractions (0.3 for 30%%)", k, v)
			}
			m[k] = v
		}
	}
	// MTEB ranks 1000 documents per query: its MRR over the top 100 is
	// R2MED's MRR, over a run's top 100.
	if v, ok := set.Metrics["mrr_at_100"]; ok {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("mrr_at_100 is %v, outside 0 to 1: MTEB's files hold fractions (0.3 for 30%%)", v)
		}
		m["mrr"] = v
	}
	main := set.MainScore
	if !(main >= 0 && main <= 1) {
		return nil, fmt.Errorf("main_score is %v, outside 0 to 1: MTEB's files hold fractions (0.3 for 30%%)", main)
	}
	if v, ok := m[mteb.MainScore]; !ok {
		m[mteb.MainScore] = main
	} else if math.Abs(v-main) > 1e-9 {
		return nil, fmt.Errorf("main_score %v is not its %s %v, which MTEB's R2MED tasks take as their main score", main, mteb.MainScore, v)
	}
	return m, nil
}

// StyleMTEB marks results read from MTEB's files.
const StyleMTEB = "mteb"

func defaultSet(r *mteb.TaskResult) (mteb.ScoreSet, bool) {
	for _, s := range r.Scores[mteb.Split] {
		if s.Subset == mteb.Subset {
			return s, true
		}
	}
	return mteb.ScoreSet{}, false
}

// isR2MEDMetric says whether an MTEB key means what R2MED's key of that
// name does: trec_eval's ndcg_cut, map_cut, recall and P at k.
func isR2MEDMetric(k string) bool {
	for _, f := range []string{"ndcg_at_", "map_at_", "recall_at_", "precision_at_"} {
		if rest, ok := strings.CutPrefix(k, f); ok {
			_, err := strconv.Atoi(rest)
			return err == nil
		}
	}
	return false
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
