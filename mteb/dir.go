package mteb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/slug"
)

// NoRevision is what MTEB records for a model whose revision is unknown.
const NoRevision = "no_revision_available"

// Cutoffs are the k of MTEB's retrieval metrics (ndcg_at_k, mrr_at_k, …).
var Cutoffs = []int{1, 3, 5, 10, 20, 100, 1000}

// RunScores is one task's result of a run, in R2MED's terms.
type RunScores struct {
	Task string // an R2MED task name
	// Revision is the commit of the task's data the run read.
	Revision string
	// Scores are R2MED's result keys in lower case (ndcg_at_10,
	// recall_at_100, map_at_100, precision_at_10, mrr), as
	// leaderboard.Normalize gives them.
	Scores map[string]float64
	// Depth is the most documents the run ranked for a query; Documents
	// the documents of the corpus it ranked them from (0: unknown).
	Depth, Documents int
	// Excluded counts the (query, document) pairs the run excluded
	// (r2med run --exclude).
	Excluded int
	// Unanswered of the Judged queries got no results (they count 0).
	Unanswered, Judged int
	Seconds            float64
	// Evaluated are MTEB's scores of the run's file (Evaluate), when its
	// judgments were at hand: FromRun writes them, after checking them
	// against Scores where both have a key. Nil writes Scores alone.
	Evaluated map[string]float64
}

// FromRun converts a run's scores into MTEB's results file for the task,
// and says what it left out that MTEB's files hold. MTEB's evaluator
// (mteb/_evaluators/retrieval_metrics.py) takes ndcg_cut, map_cut, recall
// and P at k from pytrec_eval, means over the queries rounded to five
// decimals: R2MED's numbers under the same keys, computed and rounded
// alike. With the run's file evaluated as MTEB evaluates it
// (RunScores.Evaluated) every key MTEB writes is the file's, at MTEB's
// cutoffs, mrr_at_k included; the file and the run's scores must agree
// where both have a key. Without it, R2MED's keys are written as they are
// (k 1, 10, 25, 50, 100), and of MTEB's mrr_at_k only what R2MED's MRR
// (trec_eval's reciprocal rank over the run, to five decimals where MTEB
// writes six) is: k equal to the run's depth, and every k beyond it when
// the run ranks the whole corpus. MTEB retrieves 1000 documents per query,
// so a metric at a k deeper than the run's depth would be a shallower
// list's, not the model's: it is left out and said, and a run shallower
// than the main score's 10 is an error. A run that excluded documents is
// not MTEB's task, which excludes none: an error. A run on another
// revision of the data than MTEB's task pins is written with the revision
// it read, and said. main_score is
// ndcg_at_10; mteb_version is null: MTEB did not compute these.
func FromRun(r RunScores) (*TaskResult, []string, error) {
	t, err := ForR2MED(r.Task)
	if err != nil {
		return nil, nil, err
	}
	if r.Revision == "" {
		return nil, nil, fmt.Errorf("%s: the run does not record which revision of %s it read (it was not read from the Hub); MTEB's results record the dataset revision, so run it with --task %s", r.Task, t.Dataset, t.R2MED)
	}
	if r.Excluded > 0 {
		return nil, nil, fmt.Errorf("%s: the run excluded %d (query, document) %s; MTEB's %s excludes none, so the run's numbers are not its task's", r.Task, r.Excluded, errtext.Plural(r.Excluded, "pair", "pairs"), t.Name)
	}
	main, ok := r.Scores[MainScore]
	if !ok {
		return nil, nil, fmt.Errorf("%s: the run has no %s, MTEB's main score for R2MED", r.Task, MainScore)
	}
	whole := r.Documents > 0 && r.Depth >= r.Documents
	holds := func(k int) bool { return r.Depth <= 0 || whole || k <= r.Depth }
	if !holds(10) {
		return nil, nil, fmt.Errorf("%s: the run ranks at most %d documents per query, fewer than the 10 of MTEB's main score %s", r.Task, r.Depth, MainScore)
	}
	found := map[string]float64{}
	if r.Evaluated != nil {
		for _, key := range slices.Sorted(maps.Keys(r.Scores)) {
			if e, ok := r.Evaluated[key]; ok && e != r.Scores[key] {
				return nil, nil, fmt.Errorf("%s: the run's file gives %s %v where its results gave %v: they are not one run's; run it again", r.Task, key, e, r.Scores[key])
			}
		}
		maps.Copy(found, r.Evaluated)
	} else {
		for key, v := range r.Scores {
			if _, f := cutoff(key); f < len(families)-1 {
				found[key] = v
			}
		}
		if mrr, ok := r.Scores["mrr"]; ok && r.Depth > 0 {
			for _, k := range Cutoffs {
				if k >= r.Depth {
					found["mrr_at_"+strconv.Itoa(k)] = mrr
				}
			}
		}
	}
	set := ScoreSet{Subset: Subset, Languages: []string{Language}, MainScore: main, Metrics: map[string]float64{}}
	left := map[string]float64{}
	for key, v := range found {
		k, f := cutoff(key)
		switch {
		case f == len(families):
		case holds(k):
			set.Metrics[key] = v
		default:
			left[key] = v
		}
	}
	var notes []string
	if r.Revision != t.Revision {
		notes = append(notes, fmt.Sprintf("the run read %s at %s, not the revision MTEB's %s pins (%s); the file's dataset_revision says which it read", t.Dataset, r.Revision, t.Name, t.Revision))
	}
	if r.Unanswered > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d judged queries got no results and count 0 in every mean, as in results.json; MTEB's runs rank documents for every query", r.Unanswered, r.Judged))
	}
	if len(left) > 0 {
		keys := MetricOrder(left)
		list := strings.Join(keys[:len(keys)-1], ", ")
		if len(keys) > 1 {
			list += " and "
		}
		list += keys[len(keys)-1]
		notes = append(notes, fmt.Sprintf("%s left out: the run ranks at most %d documents per query, and MTEB's metric at k reads the model's ranking to k (it retrieves %d per query; a run kept that deep, r2med run --top-k %[3]d, has them)", list, r.Depth, Cutoffs[len(Cutoffs)-1]))
	}
	secs := r.Seconds
	return &TaskResult{DatasetRevision: r.Revision, TaskName: t.Name, Scores: map[string][]ScoreSet{Split: {set}}, EvaluationTime: &secs}, notes, nil
}

// cutoff reads an MTEB metric key: its k and its family's index in
// families; len(families) for a key of none.
func cutoff(key string) (k, family int) {
	for i, f := range families {
		if rest, ok := strings.CutPrefix(key, f); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 {
				return n, i
			}
		}
	}
	return 0, len(families)
}

// ModelMeta is a model's model_meta.json. MTEB's ModelMeta forbids keys
// it does not define, so only its keys are written, null where unknown.
type ModelMeta struct {
	Name     string // "org/model"
	Revision string // a commit, or NoRevision
	// MaxTokens, OpenWeights, Similarity ("cosine"), Reference (a URL)
	// and UseInstructions are written when known.
	MaxTokens       int
	OpenWeights     *bool
	Similarity      string
	Reference       string
	UseInstructions *bool
}

// Marshal writes model_meta.json as MTEB's cache writes it (json.dump,
// indent 4), every key ModelMeta requires present.
func (m ModelMeta) Marshal() []byte {
	null := func(ok bool, v string) string {
		if !ok {
			return "null"
		}
		return v
	}
	boolText := func(b *bool) string {
		if b == nil {
			return "null"
		}
		return strconv.FormatBool(*b)
	}
	fields := [][2]string{
		{"name", jsonText(m.Name)},
		{"revision", jsonText(m.Revision)},
		{"release_date", "null"},
		{"languages", "null"},
		{"loader", "null"},
		{"n_parameters", "null"},
		{"memory_usage_mb", "null"},
		{"max_tokens", null(m.MaxTokens > 0, strconv.Itoa(m.MaxTokens))},
		{"embed_dim", "null"},
		{"license", "null"},
		{"open_weights", boolText(m.OpenWeights)},
		{"public_training_code", "null"},
		{"public_training_data", "null"},
		{"framework", "[]"},
		{"reference", null(m.Reference != "", jsonText(m.Reference))},
		{"similarity_fn_name", null(m.Similarity != "", jsonText(m.Similarity))},
		{"use_instructions", boolText(m.UseInstructions)},
		{"training_datasets", "null"},
	}
	var b bytes.Buffer
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    %q: %s", f[0], f[1])
	}
	b.WriteString("\n}")
	return b.Bytes()
}

// LocalName names a system of ours as an MTEB model: "r2med/" and the
// system's name as a slug ("hyde/gpt4 → bm25" → r2med/hyde-gpt4-bm25).
func LocalName(system string) string { return "r2med/" + slug.Make(system) }

// FolderName is the folder MTEB keeps a model's results in: its name with
// "/" as "__" and spaces as "_".
func FolderName(model string) string {
	return strings.ReplaceAll(strings.ReplaceAll(model, "/", "__"), " ", "_")
}

// WriteModel writes a model's results in MTEB's layout under dir:
// dir/results/<FolderName>/<revision>/<task_name>.json, then
// model_meta.json beside them, each file whole or not at all. It returns
// the files written. A file of another R2MED task in the folder (an
// earlier export's), which MTEB would read as this model's, is an error
// before anything is written; other tasks' files are left alone.
func WriteModel(dir string, meta ModelMeta, rs []*TaskResult) ([]string, error) {
	if meta.Name == "" || meta.Revision == "" {
		return nil, errors.New("an MTEB model needs a name and a revision")
	}
	if strings.ContainsAny(meta.Revision, `/\`) || meta.Revision == "." || meta.Revision == ".." {
		return nil, fmt.Errorf("revision %q is not a folder name", meta.Revision)
	}
	if f := FolderName(meta.Name); f == "." || f == ".." || strings.Contains(f, `\`) {
		return nil, fmt.Errorf("model name %q is not a folder name", meta.Name)
	}
	folder := filepath.Join(dir, "results", FolderName(meta.Name), meta.Revision)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, err
	}
	// An R2MED task's file left by an earlier export would read in MTEB as
	// this one's: refused before anything is written.
	names, err := fs.Glob(os.DirFS(folder), "*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		task := strings.TrimSuffix(name, ".json")
		if _, ours := Lookup(task); ours && !slices.ContainsFunc(rs, func(r *TaskResult) bool { return r.TaskName == task }) {
			return nil, fmt.Errorf("%s is not written by this export (an earlier one's?), and MTEB would read it as %s's result at %s: remove it, or give another folder", filepath.Join(folder, name), meta.Name, meta.Revision)
		}
	}
	var written []string
	seen := map[string]bool{}
	write := func(name string, data []byte) error {
		p := filepath.Join(folder, name)
		if err := fileio.WriteAtomic(p, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	for _, r := range rs {
		if seen[r.TaskName] {
			return nil, fmt.Errorf("two results of %s for %s", r.TaskName, meta.Name)
		}
		seen[r.TaskName] = true
	}
	for _, r := range rs {
		data := r.Marshal()
		if err := Validate(data); err != nil {
			return written, fmt.Errorf("%s: %w (a bug: the file would not load in MTEB)", r.TaskName, err)
		}
		if err := write(r.TaskName+".json", data); err != nil {
			return written, err
		}
	}
	return written, write("model_meta.json", meta.Marshal())
}

// Result is an R2MED task's results file found in an MTEB results folder.
type Result struct {
	// Model and Revision are model_meta.json's name and revision, else
	// the folders' names ("__" read as "/"), as MTEB's cache takes them.
	Model, Revision string
	// Path is the file.
	Path string
	Task Task
	// NoMeta: the folder has no model_meta.json, which MTEB's
	// load_results requires by default (require_model_meta=True).
	NoMeta bool
	*TaskResult
}

// ReadDir reads the results of R2MED's tasks in an MTEB results folder:
// dir itself in MTEB's layout (<model>/<revision>/<task_name>.json), or
// with it under dir/results (the results repository, a cache's local
// results) and dir/remote/results (the results repository as MTEB's cache
// downloads it), both read when both are there, as MTEB's ResultCache
// reads both. Files of other tasks are not read. A file of an R2MED task
// that MTEB would not load, or whose task_name is not its file's, is an
// error naming it; so is a folder holding none.
func ReadDir(dir string) ([]Result, error) {
	var roots []string
	for _, sub := range []string{"results", filepath.Join("remote", "results")} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			roots = append(roots, filepath.Join(dir, sub))
		}
	}
	if len(roots) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		roots = []string{dir}
	}
	var paths []string
	for _, root := range roots {
		files, err := fs.Glob(os.DirFS(root), "*/*/*.json")
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			paths = append(paths, filepath.Join(root, filepath.FromSlash(f)))
		}
	}
	var out []Result
	metas := map[string]*ModelMeta{}
	for _, path := range paths {
		task, ok := Lookup(strings.TrimSuffix(filepath.Base(path), ".json"))
		if !ok {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		r, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if r.TaskName != task.Name {
			return nil, fmt.Errorf("%s: task_name is %q; MTEB finds a task's results by file name, so this file says two things", path, r.TaskName)
		}
		revDir := filepath.Dir(path)
		meta, ok := metas[revDir]
		if !ok {
			if meta, err = readMeta(filepath.Join(revDir, "model_meta.json")); err != nil {
				return nil, err
			}
			metas[revDir] = meta
		}
		res := Result{Path: path, Task: task, TaskResult: r}
		if meta != nil {
			res.Model, res.Revision = meta.Name, meta.Revision
		} else {
			res.Model, res.Revision = strings.ReplaceAll(filepath.Base(filepath.Dir(revDir)), "__", "/"), filepath.Base(revDir)
			res.NoMeta = true
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no results of R2MED's tasks in MTEB's layout (<model>/<revision>/%s.json, or under results/ or remote/results/)", dir, Tasks()[0].Name)
	}
	slices.SortFunc(out, func(a, b Result) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// readMeta reads a model_meta.json's name and revision; nil when there is
// none.
func readMeta(path string) (*ModelMeta, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m struct {
		Name     *string `json:"name"`
		Revision *string `json:"revision"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %s", path, errtext.JSONMsg(err))
	}
	if m.Name == nil || *m.Name == "" || m.Revision == nil || *m.Revision == "" {
		return nil, fmt.Errorf("%s: no name or revision; MTEB names the model's results by them", path)
	}
	return &ModelMeta{Name: *m.Name, Revision: *m.Revision}, nil
}
