package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/slug"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/reproduce"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/taskstats"
)

// Registry finds a registry model for an external row by the name the
// paper printed (models.Lookup: names, aliases, checkpoints).
func Registry(name string) (models.Model, bool) { return models.Lookup(name) }

// Generate returns the spec files (slash paths under specs/) for the
// reference data in shared (../shared/data); lookup finds the recipe of
// an external row's model.
func Generate(shared string, lookup func(string) (models.Model, bool)) (map[string][]byte, error) {
	out := map[string][]byte{}
	add := func(name string, s spec) error {
		if _, dup := out[name+".yaml"]; dup {
			return fmt.Errorf("two specs named %s", name)
		}
		b, err := s.encode()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		// Whatever is written must read back as a spec.
		if _, err := reproduce.Parse(name, b); err != nil {
			return fmt.Errorf("%s: the generated spec does not read back: %w", name, err)
		}
		out[name+".yaml"] = b
		return nil
	}
	pub, err := publishedSpecs()
	if err != nil {
		return nil, err
	}
	nano, err := nanoSpecs(filepath.Join(shared, "nanor2med-metadata"))
	if err != nil {
		return nil, err
	}
	ext, err := externalSpecs(lookup)
	if err != nil {
		return nil, err
	}
	ref, err := referenceSpecs(filepath.Join(shared, "eval-reference"))
	if err != nil {
		return nil, err
	}
	for _, group := range []map[string]spec{pub, nano, ext, ref} {
		for name, s := range group {
			if err := add(name, s); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// spec is a spec as the generator writes it.
type spec struct {
	from     string // what the file is generated from, for its head comment
	title    string
	source   reproduce.Source
	suite    string
	tasks    []reproduce.TaskData
	pipeline *yaml.Node
	evaluate string
	needs    reproduce.Needs
	tol      float64
	expected []reproduce.ExpectedTask
	note     string
}

// publishedSpecs makes one spec per R2MED published system.
func publishedSpecs() (map[string]spec, error) {
	systems, err := leaderboard.Published()
	if err != nil {
		return nil, err
	}
	out := map[string]spec{}
	for _, s := range systems {
		r, err := retrieverRecipe(s.Retriever)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.ID, err)
		}
		name := s.Retriever
		switch s.Kind {
		case leaderboard.GAR:
			r = r.withGAR(s.GARMethod, s.GARLLM)
			name = s.GARMethod + "-" + s.GARLLM + "-" + s.Retriever
		case leaderboard.Reranker:
			if r, err = r.withRerank(s.Reranker, s.TopK); err != nil {
				return nil, fmt.Errorf("%s: %w", s.ID, err)
			}
			name = fmt.Sprintf("%s-%s-top%d", s.Retriever, s.Reranker, s.TopK)
		case leaderboard.Base:
		default:
			return nil, fmt.Errorf("%s: published system of kind %s has no recipe", s.ID, s.Kind)
		}
		if s.Retriever == "bm25" && s.Kind == leaderboard.Base {
			r.notes = append(r.notes, "R2MED's BM25: Lucene's English analyzer and gensim's LuceneBM25Model (k1 0.9, b 0.4), float32 scores, top 100; the same code gives R2MED's own run of NFCorpus list for list (reference/nfcorpus-bm25)")
		}
		sp := spec{
			from:     "R2MED's published result files (leaderboard/published.json)",
			title:    "R2MED's published " + s.Name,
			source:   reproduce.Source{Kind: reproduce.SourcePublished, Reference: leaderboard.PublishedSource, System: s.ID},
			suite:    reproduce.SuiteR2MED,
			pipeline: r.pipeline, needs: r.needs, tol: r.tolerance, note: strings.Join(r.notes, "; "),
		}
		for _, t := range tasks.All() {
			res, ok := s.Tasks[t.Name]
			if !ok {
				return nil, fmt.Errorf("%s: no published result for %s", s.ID, t.Name)
			}
			sp.tasks = append(sp.tasks, reproduce.TaskData{Task: t.Name, Repo: t.Repo, Revision: t.Revision})
			scores := map[string]float64{}
			for _, k := range []string{"ndcg_at_10", "recall_at_100", "mrr"} {
				if v, ok := res.Metrics[k]; ok {
					scores[k] = v
				}
			}
			sp.expected = append(sp.expected, reproduce.ExpectedTask{Task: t.Name, Source: res.Source, Scores: scores})
		}
		out["r2med/"+fileName(name)] = sp
	}
	return out, nil
}

// nanoSpecs makes one spec per NanoR2MED candidate config, its expected
// values the eight task cards'.
func nanoSpecs(dir string) (map[string]spec, error) {
	type card struct {
		TaskMetadata struct {
			DatasetID        string                                `json:"dataset_id"`
			SplitName        string                                `json:"split_name"`
			CandidateSubsets map[string]taskstats.CandidateMetrics `json:"candidate_subsets"`
		} `json:"task_metadata"`
	}
	out := map[string]spec{}
	for _, sub := range taskstats.NanoR2MEDCandidates {
		sp := spec{
			from:     "HAKARI-Bench's NanoR2MED task cards (../shared/data/nanor2med-metadata)",
			title:    "NanoR2MED's " + sub.Label + " candidate lists, as the task cards score them",
			source:   reproduce.Source{Kind: reproduce.SourceCard, Reference: "HAKARI-Bench's NanoR2MED task cards (task_metadata.candidate_subsets." + sub.Name + ")", System: sub.Name},
			suite:    reproduce.SuiteNano,
			pipeline: retrieveDoc(mapping("candidates", text(sub.Config))),
			evaluate: reproduce.CandidateCard,
			tol:      1e-10,
			note: "the card's nDCG@10 and hit@10 (binary gain, means over the queries with a positive) and micro recall@100 without the rank-101 safeguard, computed as HAKARI-Bench's script does and rounded to the card's ten decimals; " +
				"no revision of " + tasks.NanoRepo + " is pinned anywhere, so the data is read at " + tasks.NanoRevision + " and the run records the commit",
		}
		for _, t := range tasks.All() {
			path := filepath.Join(dir, t.NanoSplit+".json")
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			var c card
			if err := json.Unmarshal(data, &c); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			m, ok := c.TaskMetadata.CandidateSubsets[sub.Name]
			if !ok {
				return nil, fmt.Errorf("%s: no candidate subset %q", path, sub.Name)
			}
			if c.TaskMetadata.DatasetID != tasks.NanoRepo || c.TaskMetadata.SplitName != t.NanoSplit || m.Config != sub.Config || m.TopK != sub.TopK {
				return nil, fmt.Errorf("%s: the card describes %s split %s, config %s top %d; the registry says %s, %s, %s, %d",
					path, c.TaskMetadata.DatasetID, c.TaskMetadata.SplitName, m.Config, m.TopK, tasks.NanoRepo, t.NanoSplit, sub.Config, sub.TopK)
			}
			sp.tasks = append(sp.tasks, reproduce.TaskData{Task: t.Name, Repo: tasks.NanoRepo, Revision: tasks.NanoRevision, Split: t.NanoSplit})
			sp.expected = append(sp.expected, reproduce.ExpectedTask{
				Task: t.Name, Source: "nanor2med-metadata/" + t.NanoSplit + ".json",
				Scores: map[string]float64{"ndcg_at_10": m.NDCGAt10, "hit_at_10": m.HitAt10, "recall_at_100": m.RecallAt100},
			})
		}
		out["nano/"+fileName(sub.Name)+"-candidates"] = sp
	}
	return out, nil
}

// externalSpecs makes a spec for each row a later paper printed whose
// model has a recipe, except R2MED's own rows repeated there.
func externalSpecs(lookup func(string) (models.Model, bool)) (map[string]spec, error) {
	systems, err := leaderboard.Externals()
	if err != nil {
		return nil, err
	}
	out := map[string]spec{}
	for _, s := range systems {
		if s.External.AverageOnly || strings.HasPrefix(s.External.EvaluatedBy, "R2MED") {
			continue
		}
		m, ok := lookup(s.Name)
		if !ok {
			continue
		}
		r := denseRecipe(m)
		sp := spec{
			from:     "results later papers printed (leaderboard/external.json)",
			title:    s.Name + ", as " + strings.TrimSuffix(s.External.EvaluatedBy, ".") + " printed it",
			source:   reproduce.Source{Kind: reproduce.SourceExternal, Reference: s.External.Reference, System: s.Name},
			suite:    reproduce.SuiteR2MED,
			pipeline: r.pipeline, needs: r.needs, tol: closeTol,
			note: strings.Join(append([]string{"printed as nDCG@10 ×100 with two decimals, by a pipeline of the paper's own; r2med runs the registry's recipe for " + m.Name}, r.notes...), "; "),
		}
		if !leaderboard.PrintedAgrees(&s) {
			sp.source.PrintedAverage = s.External.PrintedAverage
		}
		for _, t := range tasks.All() {
			res, ok := s.Tasks[t.Name]
			if !ok {
				return nil, fmt.Errorf("external %s: no value for %s", s.Name, t.Name)
			}
			sp.tasks = append(sp.tasks, reproduce.TaskData{Task: t.Name, Repo: t.Repo, Revision: t.Revision})
			sp.expected = append(sp.expected, reproduce.ExpectedTask{Task: t.Name, Source: res.Source, Scores: map[string]float64{"ndcg_at_10": res.Metrics["ndcg_at_10"]}})
		}
		out["external/"+fileName(s.Name)] = sp
	}
	return out, nil
}

// trecEvalKeys maps trec_eval's measure names to R2MED's result keys.
var trecEvalKeys = []struct{ trec, key string }{
	{"ndcg_cut_10", "ndcg_at_10"}, {"recall_100", "recall_at_100"}, {"map_cut_100", "map_at_100"}, {"P_10", "precision_at_10"}, {"recip_rank", "mrr"},
}

// referenceSpecs makes the NFCorpus spec from trec_eval's output on
// R2MED's own BM25 run.
func referenceSpecs(dir string) (map[string]spec, error) {
	const file = "nfcorpus.bm25.trec_eval"
	path := filepath.Join(dir, file)
	all, err := readTrecEvalAll(path)
	if err != nil {
		return nil, err
	}
	scores := map[string]float64{}
	for _, k := range trecEvalKeys {
		v, ok := all[k.trec]
		if !ok {
			return nil, fmt.Errorf("%s: no %s line for all queries", path, k.trec)
		}
		scores[k.key] = v
	}
	return map[string]spec{"reference/nfcorpus-bm25": {
		from:   "trec_eval's output on R2MED's BM25 run of NFCorpus (../shared/data/eval-reference)",
		title:  "R2MED's BM25 pipeline on NFCorpus test",
		source: reproduce.Source{Kind: reproduce.SourceReference, Reference: "trec_eval 9.0.8 on the run R2MED's own Python BM25 pipeline made of NFCorpus test (../shared/data/eval-reference)", System: "bm25"},
		suite:  reproduce.SuiteLocal,
		tasks:  []reproduce.TaskData{{Task: "NFCorpus", Dir: "nfcorpus", Split: "test"}},
		// The default pipeline, spelt out.
		pipeline: retrieveDoc(entry("bm25", mapping("scheme", text("r2med")))),
		tol:      0.0001,
		expected: []reproduce.ExpectedTask{{Task: "NFCorpus", Source: "eval-reference/" + file, Scores: scores}},
		note:     "trec_eval prints four decimals and R2MED's result keys hold five, hence the tolerance of one unit of trec_eval's last digit; the same run is compared list by list in pipeline.TestNFCorpusMatchesR2MEDBM25",
	}}, nil
}

// readTrecEvalAll reads the "all" lines of trec_eval output.
func readTrecEvalAll(path string) (map[string]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[1] != "all" {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		out[f[0]] = v
	}
	return out, sc.Err()
}

// fileName is a name as a spec's file name: lower case, a slug.
func fileName(name string) string { return slug.Make(strings.ToLower(name)) }

// encode writes the spec as YAML, its keys in the order people read them.
func (s spec) encode() ([]byte, error) {
	src := mapping("kind", text(s.source.Kind), "reference", text(s.source.Reference))
	if s.source.System != "" {
		src.Content = append(src.Content, text("system"), text(s.source.System))
	}
	if p := s.source.PrintedAverage; p != 0 {
		src.Content = append(src.Content, text("printed_average"), number(floatText(p)))
	}
	data := seq()
	for _, t := range s.tasks {
		m := mapping("task", text(t.Task))
		for _, kv := range [][2]string{{"repo", t.Repo}, {"revision", t.Revision}, {"split", t.Split}, {"dir", t.Dir}} {
			if kv[1] != "" {
				m.Content = append(m.Content, text(kv[0]), text(kv[1]))
			}
		}
		data.Content = append(data.Content, flow(m))
	}
	doc := mapping(
		"title", text(s.title),
		"source", src,
		"data", mapping("suite", text(s.suite), "tasks", data),
		"pipeline", s.pipeline,
	)
	if s.evaluate != "" {
		doc.Content = append(doc.Content, text("evaluate"), text(s.evaluate))
	}
	doc.Content = append(doc.Content, text("needs"), needsNode(s.needs))
	exp := seq()
	for _, e := range s.expected {
		scores := flow(mapping())
		for _, m := range e.Metrics() {
			scores.Content = append(scores.Content, text(m), number(floatText(e.Scores[m])))
		}
		exp.Content = append(exp.Content, mapping("task", text(e.Task), "source", text(e.Source), "scores", scores))
	}
	doc.Content = append(doc.Content, text("expected"), mapping("tolerance", number(floatText(s.tol)), "tasks", exp))
	if s.note != "" {
		doc.Content = append(doc.Content, text("note"), text(s.note))
	}
	doc.HeadComment = "Generated by go generate ./reproduce from " + s.from + ".\nDo not edit: change the generator (reproduce/internal/gen) or the data it reads."
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func needsNode(n reproduce.Needs) *yaml.Node {
	m := mapping()
	if len(n.Models) > 0 {
		m.Content = append(m.Content, text("models"), flow(texts(n.Models)))
	}
	if len(n.Weights) > 0 {
		ws := seq()
		for _, w := range n.Weights {
			e := mapping("model", text(w.Model))
			if w.Pull != "" {
				e.Content = append(e.Content, text("pull"), text(w.Pull))
			}
			if w.Flag != "" {
				e.Content = append(e.Content, text("flag"), text(w.Flag))
			}
			ws.Content = append(ws.Content, flow(e))
		}
		m.Content = append(m.Content, text("weights"), ws)
	}
	if len(n.Servers) > 0 {
		ss := seq()
		for _, sv := range n.Servers {
			e := mapping("what", text(sv.What), "serves", text(sv.Serves), "flag", text(sv.Flag))
			if sv.Env != "" {
				e.Content = append(e.Content, text("env"), text(sv.Env))
			}
			ss.Content = append(ss.Content, e)
		}
		m.Content = append(m.Content, text("servers"), ss)
	}
	if len(n.Keys) > 0 {
		m.Content = append(m.Content, text("keys"), flow(texts(n.Keys)))
	}
	if n.GPU {
		m.Content = append(m.Content, text("gpu"), boolean(true))
	}
	if len(m.Content) == 0 {
		return flow(m)
	}
	return m
}

// floatText prints a value with the digits it has, without an exponent.
func floatText(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
