package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/reproduce"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/taskstats"
)

// ReproduceOptions say where a spec's runs go and what is at hand.
type ReproduceOptions struct {
	// Options are each run's; Out is the folder the specs' runs are kept
	// under, one directory per spec and task (Out/r2med_bm25/Biology), so
	// that a rerun reuses what it verified. Empty keeps runs in memory.
	Options
	// Hub reads the Hub suites' data; nil means hub.FromEnv(). With
	// Env.Offline it is only read from its cache.
	Hub *hub.Client
	// LocalData is the folder the local suite's directories are under
	// (the project's ../shared/data).
	LocalData string
	// Env says whether the run is offline and which servers, flags and
	// keys are given.
	Env reproduce.Env
	// Tasks, when set, runs only these of a spec's tasks (names as
	// tasks.Lookup takes them, or a local task's name).
	Tasks []string
	// Flags, from AddServerFlags, are laid over each spec's pipeline: the
	// servers and model folders the user named.
	Flags *config.Flags
}

// Reproduce runs a regression spec: for each of its tasks, the data at the
// spec's revision, its pipeline, and the comparison of the scores with the
// published ones. What the spec needs and the options lack (a server, a
// key, data not in the cache when offline) makes it, or the task, skipped
// with that said; a task whose run fails is reported failed and the others
// still run. The error is for a spec that cannot be read as a pipeline.
func Reproduce(ctx context.Context, s *reproduce.Spec, opt ReproduceOptions) (*reproduce.Report, error) {
	rep := &reproduce.Report{Spec: s}
	if rep.Unmet = s.Unmet(opt.Env); len(rep.Unmet) > 0 {
		return rep, nil
	}
	cfg, err := specConfig(s, opt.Flags)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", s.Name, err)
	}
	var todo []reproduce.TaskData
	for _, td := range s.Data.Tasks {
		if len(opt.Tasks) == 0 || slices.ContainsFunc(opt.Tasks, func(name string) bool { return namesTask(name, td.Task) }) {
			todo = append(todo, td)
		}
	}
	if len(todo) == 0 {
		rep.Unmet = []string{"one of the tasks asked for (it has " + strings.Join(s.TaskNames(), ", ") + ")"}
		return rep, nil
	}
	c := opt.Hub
	if c == nil {
		c = hub.FromEnv()
	}
	if opt.Env.Offline && !c.Offline {
		off := *c
		off.Offline = true
		c = &off
	}
	noData := 0
	for _, td := range todo {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, dataMissing := reproduceTask(ctx, s, cfg, td, c, opt)
		if dataMissing {
			noData++
		}
		rep.Tasks = append(rep.Tasks, tr)
	}
	if noData == len(todo) && s.Data.Suite != reproduce.SuiteLocal {
		// One reason for every task: said once.
		rep.Tasks, rep.Unmet = nil, []string{"its data cached (" + pullCommand(s, opt.Tasks) + ")"}
	}
	return rep, nil
}

// pullCommand is the command that puts a spec's data in the Hub cache:
// `r2med pull` takes the suite's tasks as arguments, all without any.
func pullCommand(s *reproduce.Spec, only []string) string {
	cmd := "r2med pull"
	if s.Data.Suite == reproduce.SuiteNano {
		cmd += " --suite nano"
	}
	for _, t := range only {
		cmd += " " + t
	}
	return cmd
}

// specConfig reads the spec's pipeline, with the user's server flags
// laid over a copy of it.
func specConfig(s *reproduce.Spec, flags *config.Flags) (Config, error) {
	doc := copyNode(&s.Pipeline)
	if flags != nil {
		var err error
		if doc, err = flags.Overlay(doc); err != nil {
			return Config{}, err
		}
	}
	cfg, err := config.FromYAML(doc)
	if err != nil {
		return Config{}, err
	}
	if s.Evaluate == reproduce.CandidateCard {
		if _, err := cardConfig(cfg); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = copyNode(ch)
	}
	return &c
}

// namesTask says whether a name the user gave names a spec's task.
func namesTask(given, task string) bool {
	if strings.EqualFold(given, task) {
		return true
	}
	a, errA := tasks.Lookup(given)
	b, errB := tasks.Lookup(task)
	return errA == nil && errB == nil && a.Name == b.Name
}

// reproduceTask runs one task of a spec; dataMissing says it did not run
// because its data is not in the Hub cache while offline.
func reproduceTask(ctx context.Context, s *reproduce.Spec, cfg Config, td reproduce.TaskData, c *hub.Client, opt ReproduceOptions) (tr reproduce.TaskReport, dataMissing bool) {
	tr = reproduce.TaskReport{Task: td.Task}
	fail := func(err error) (reproduce.TaskReport, bool) {
		if errors.Is(err, hub.ErrOffline) {
			// A model's files (weights, a tokenizer) the Hub cache lacks.
			tr.Unmet = "files not in the Hub cache while offline: " + oneLine(err.Error())
		} else {
			tr.Err = err.Error()
		}
		return tr, false
	}
	task, err := specTask(ctx, s, td, c, opt.LocalData)
	var missing *missingLocal
	switch {
	case errors.As(err, &missing):
		tr.Unmet = missing.Error()
		return tr, false
	case errors.Is(err, hub.ErrOffline):
		tr.Unmet = fmt.Sprintf("%s at %s, not in the Hub cache (%s)", td.Repo, td.Revision, pullCommand(s, []string{td.Task}))
		return tr, true
	case err != nil:
		return fail(err)
	}
	tr.Revision = HubCommit(task.Dir)
	if s.Data.Suite == reproduce.SuiteR2MED && tr.Revision != td.Revision {
		return fail(fmt.Errorf("read %s at %s, and the spec's scores are for revision %s", td.Repo, orUnknown(tr.Revision), td.Revision))
	}
	var got func(string) (float64, bool)
	switch s.Evaluate {
	case reproduce.CandidateCard:
		scores, err := cardScores(task, cfg)
		if err != nil {
			return fail(err)
		}
		got = func(m string) (float64, bool) { v, ok := scores[m]; return v, ok }
	default:
		o := opt.Options
		if opt.Out != "" {
			tr.Dir = filepath.Join(opt.Out, results.DirName(s.Name), results.DirName(td.Task))
			o.Out = tr.Dir
		}
		out, err := Run(ctx, task, cfg, o)
		if err != nil {
			return fail(err)
		}
		got = out.Result.Metric
	}
	checks, err := s.Check(td.Task, got)
	if err != nil {
		return fail(err)
	}
	tr.Checks = checks
	return tr, false
}

// missingLocal is a local data set that is not in the local data folder.
type missingLocal struct{ dir, root string }

func (m *missingLocal) Error() string {
	return fmt.Sprintf("the local data set %s, not in %s (--local-data: the project's reference data is ../shared/data)", m.dir, m.root)
}

// specTask reads a spec's task: a Hub suite's through the task registry,
// whose repository and revision must be the spec's; a local one from the
// local data folder.
func specTask(ctx context.Context, s *reproduce.Spec, td reproduce.TaskData, c *hub.Client, local string) (*ir.Task, error) {
	if s.Data.Suite == reproduce.SuiteLocal {
		dir := filepath.Join(local, filepath.FromSlash(td.Dir))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, &missingLocal{dir: td.Dir, root: orUnknown(local)}
		}
		opts := dataset.Options{Name: td.Task}
		if td.Split != "" {
			opts.Split = td.Split
		} else {
			opts.Split = dataset.DefaultSplit
		}
		return Source{Data: dir, Options: opts, Hub: c}.Load(ctx)
	}
	suite := tasks.R2MED
	if s.Data.Suite == reproduce.SuiteNano {
		suite = tasks.Nano
	}
	t, err := tasks.Lookup(td.Task)
	if err != nil {
		return nil, err
	}
	repo, rev := t.HubRepo(suite)
	if repo != td.Repo || rev != td.Revision || (suite == tasks.Nano && td.Split != t.NanoSplit) {
		return nil, fmt.Errorf("the spec reads %s at %s, and the task registry has %s at %s: regenerate the specs (go generate ./reproduce)", td.Repo, td.Revision, repo, rev)
	}
	return Source{Task: t.Name, Suite: suite, Hub: c}.Load(ctx)
}

// cardConfig is the candidates retriever a card-scored spec reads.
func cardConfig(cfg Config) (retrieve.Candidates, error) {
	if len(cfg.Retrievers) == 1 && cfg.GAR.Method == "" && cfg.Rerank.Kind == "" {
		if c, ok := cfg.Retrievers[0].(retrieve.Candidates); ok {
			return c, nil
		}
	}
	return retrieve.Candidates{}, errors.New("a spec scored as a task card (evaluate: candidate-card) reads one candidates: retriever and nothing else")
}

// cardScores scores the spec's candidate lists as the task cards do,
// rounded as they print.
func cardScores(task *ir.Task, cfg Config) (map[string]float64, error) {
	c, err := cardConfig(cfg)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(taskstats.NanoR2MEDCandidates, func(s taskstats.CandidateSubset) bool { return s.Config == c.Config })
	if i < 0 {
		return nil, fmt.Errorf("no task card scores candidate config %q", c.Config)
	}
	lists, err := hubrepo.LoadCandidates(task.Dir, c.Config, task.Split)
	if err != nil {
		return nil, err
	}
	m, err := taskstats.ScoreCandidates(task.Qrels, lists.Lists, taskstats.NanoR2MEDCandidates[i])
	if err != nil {
		return nil, err
	}
	m = m.Rounded()
	return map[string]float64{"ndcg_at_10": m.NDCGAt10, "hit_at_10": m.HitAt10, "recall_at_100": m.RecallAt100}, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown revision"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
