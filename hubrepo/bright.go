package hubrepo

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/table"
)

// BRIGHT's repository (xlangai/BRIGHT) holds its twelve tasks as the
// splits of every config:
//
//   - documents: id, content — the corpus;
//   - long_documents: id, content — the whole pages the documents were cut
//     from, for the StackExchange tasks and Pony (Spec.Long);
//   - examples: id, query, gold_ids (judged relevant in documents),
//     gold_ids_long (in long_documents), excluded_ids (documents the query
//     must not retrieve; ["N/A"] for none), reasoning and gold_answer
//     (kept in Query.Extra);
//   - <llm>_reason (gpt4_reason, claude-3-opus_reason, …): the same rows
//     with query replaced by that LLM's reasoning about it, which BRIGHT's
//     run.py --reasoning retrieves with (ReadReasoning).
//
// Judgments are binary (grade 1), as run.py builds them; a gold id listed
// twice is one judgment, as there. A query whose gold list is empty (one of
// TheoremQA-Questions') is judged with no relevant document (an empty
// entry in Qrels) and evaluated, every measure 0, as run.py evaluates it:
// it passes pytrec_eval ground_truth[qid] = {}, which pytrec_eval scores
// like any other query, and averages over every query scored.
const (
	brightDocs      = "documents"
	brightLongDocs  = "long_documents"
	brightExamples  = "examples"
	reasoningSuffix = "_reason"
)

var brightIDs = dataset.IDKeys{ID: "id", AltID: "_id", Hint: `BRIGHT names its id fields "id"`}

// brightRow reads a row's id and its text field (what names the row in
// messages), as every BRIGHT config has them.
func brightRow(m map[string]json.RawMessage, at table.At, what, textField string) (id, text string, err error) {
	if id, err = dataset.ID(m, brightIDs, what); err != nil {
		return "", "", at.Errorf("%v", err)
	}
	if text, err = dataset.Text(m, textField, true); err != nil {
		return "", "", at.Errorf("%v", err)
	}
	return id, text, nil
}

func (s repo) loadBright(hc *Configs, dir, defaultName string, spec Spec) (*ir.Task, error) {
	docsConfig := brightDocs
	goldField := "gold_ids"
	if spec.Long {
		docsConfig, goldField = brightLongDocs, "gold_ids_long"
	}
	if spec.CorpusConfig != "" {
		docsConfig = spec.CorpusConfig
	}
	queriesConfig := brightExamples
	if spec.QueriesConfig != "" {
		queriesConfig = spec.QueriesConfig
	}
	split, err := hc.nanoSplit(queriesConfig, spec.Split)
	if err != nil {
		return nil, err
	}
	t := &ir.Task{Name: spec.Name, Dir: dir, Layout: ir.LayoutBrightHub, Split: split}
	if t.Name == "" {
		t.Name = split
	}
	if hc.Readme != "" {
		t.Files = append(t.Files, hc.Readme)
	}

	c, err := hc.Config(docsConfig)
	if err != nil {
		if spec.Long {
			return nil, fmt.Errorf("%w (the long-document setting reads it)", err)
		}
		return nil, err
	}
	if _, err := c.Split(split); err != nil {
		if spec.Long {
			return nil, fmt.Errorf("%s: %w; BRIGHT has long documents for its StackExchange tasks and Pony only", hc.where(), err)
		}
		return nil, fmt.Errorf("%s: %w", hc.where(), err)
	}
	corpusFiles, err := hc.Files(docsConfig, split)
	if err != nil {
		return nil, err
	}
	docs := make(map[string]int)
	for _, rel := range corpusFiles {
		name := s.Show(rel)
		t.Files = append(t.Files, name)
		err := table.Each(s.Dir, rel, []string{"id", "content"}, func(m map[string]json.RawMessage, at table.At) error {
			id, text, err := brightRow(m, at, "document", "content")
			if err != nil {
				return err
			}
			if prev, dup := docs[id]; dup {
				return at.Errorf("document id %q already appeared as document %d; ids must be unique, remove or rename one of the two", id, prev)
			}
			t.Corpus = append(t.Corpus, ir.Doc{ID: id, Text: text})
			docs[id] = len(t.Corpus)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	corpusName := s.showFiles(corpusFiles)
	if len(t.Corpus) == 0 {
		return nil, fmt.Errorf("%s: no documents", corpusName)
	}

	exampleFiles, err := hc.Files(queriesConfig, split)
	if err != nil {
		return nil, err
	}
	examplesName := s.showFiles(exampleFiles)
	var queries []ir.Query
	var excluded []dataset.Exclusion
	seen := make(map[string]table.At)
	t.Qrels = make(ir.Qrels)
	for _, rel := range exampleFiles {
		t.Files = append(t.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, nil, func(m map[string]json.RawMessage, at table.At) error {
			id, text, err := brightRow(m, at, "query", "query")
			if err != nil {
				return err
			}
			if prev, dup := seen[id]; dup {
				return at.Errorf("query id %q already appeared at %s; ids must be unique, remove or rename one of the two", id, prev)
			}
			seen[id] = at
			raw, ok := m[goldField]
			if !ok || errtext.JSONKind(raw) != "an array" {
				what := "missing"
				if ok {
					what = "is " + errtext.JSONKind(raw)
				}
				return at.Errorf("%q %s, want the list of the query's relevant document ids (BRIGHT's examples have gold_ids and gold_ids_long)", goldField, what)
			}
			gold, err := idsField(m, dataset.IDKeys{ID: goldField}, "gold document")
			if err != nil {
				return at.Errorf("%v", err)
			}
			for _, did := range gold {
				t.Qrels.Add(id, did, 1)
			}
			if len(gold) == 0 {
				// Judged, none relevant: evaluated, every measure 0.
				t.Qrels[id] = map[string]int{}
			}
			ex, err := dataset.ExcludedIDs(m)
			if err != nil {
				return at.Errorf("%v", err)
			}
			if len(ex) > 0 {
				excluded = append(excluded, dataset.Exclusion{QueryID: id, DocIDs: ex, At: at.String()})
			}
			for _, k := range []string{"id", "query", "gold_ids", "gold_ids_long", dataset.ExcludedField} {
				delete(m, k)
			}
			if len(m) == 0 {
				m = nil
			}
			queries = append(queries, ir.Query{ID: id, Text: text, Extra: m})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if t.Qrels.Len() == 0 {
		return nil, fmt.Errorf("%s: no query has a %s entry; a task needs at least one judgment to be evaluated", examplesName, goldField)
	}
	if !spec.AllowMissingDocs {
		locate := s.firstJudgment(exampleFiles, []string{"id", goldField}, func(m table.Row) (string, []string) {
			qid, err := dataset.ID(m, brightIDs, "query")
			if err != nil {
				return "", nil
			}
			gold, err := idsField(m, dataset.IDKeys{ID: goldField}, "gold document")
			if err != nil {
				return "", nil
			}
			return qid, gold
		})
		if err := dataset.CheckKnown(t.Qrels, nil, docs, examplesName+" ("+goldField+")", corpusName, locate); err != nil {
			return nil, err
		}
	}
	if spec.Exclude != "" {
		more, err := dataset.ReadExclusionsFile(spec.Exclude)
		if err != nil {
			return nil, err
		}
		excluded = append(excluded, more...)
		t.Files = append(t.Files, spec.Exclude)
	}
	if err := dataset.Exclude(t, excluded, func(id string) bool { _, ok := seen[id]; return ok }); err != nil {
		return nil, err
	}
	dataset.KeepJudged(t, queries)
	return t, nil
}

// ReadReasoning reads the reasoning one LLM wrote about the queries of a
// BRIGHT task, as BRIGHT publishes it for its --reasoning runs: the config
// <llm>_reason (llm may carry the suffix), split the task. Each row's
// query is the reasoning; the query it is about is the examples config's
// row with the same id, which Generation.Text holds (for
// reasoning-append). split may be empty when the config has one split.
func ReadReasoning(dir, llm, split string) (*Generations, error) {
	src, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	return src.readReasoning(llm, split)
}

// ReasoningLLMs lists the LLMs whose reasoning a BRIGHT repository
// publishes (its <llm>_reason configs), sorted.
func (h *Configs) ReasoningLLMs() []string {
	var out []string
	for _, c := range h.Configs {
		if llm, ok := strings.CutSuffix(c.Name, reasoningSuffix); ok && llm != "" {
			out = append(out, llm)
		}
	}
	slices.Sort(out)
	return out
}

func (s repo) readReasoning(llm, split string) (*Generations, error) {
	hc, err := s.hubConfigs()
	if err != nil {
		return nil, err
	}
	config := strings.TrimSuffix(llm, reasoningSuffix) + reasoningSuffix
	if _, err := hc.Config(config); err != nil {
		have := hc.ReasoningLLMs()
		if len(have) == 0 {
			return nil, fmt.Errorf("%s has no config %q: it publishes no LLM reasoning (configs named <llm>%s)", hc.where(), config, reasoningSuffix)
		}
		return nil, fmt.Errorf("%s has no config %q; it publishes the reasoning of %s", hc.where(), config, strings.Join(have, ", "))
	}
	split, err = hc.nanoSplit(config, split)
	if err != nil {
		return nil, err
	}
	// The queries the reasoning is about.
	exampleFiles, err := hc.Files(brightExamples, split)
	if err != nil {
		return nil, err
	}
	queries := make(map[string]string)
	g := &Generations{Config: config, Split: split}
	for _, rel := range exampleFiles {
		g.Files = append(g.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, []string{"id", "query"}, func(m map[string]json.RawMessage, at table.At) error {
			id, text, err := brightRow(m, at, "query", "query")
			queries[id] = text
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	files, err := hc.Files(config, split)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]table.At)
	for _, rel := range files {
		g.Files = append(g.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, []string{"id", "query"}, func(m map[string]json.RawMessage, at table.At) error {
			id, reasoning, err := brightRow(m, at, "reasoning", "query")
			if err != nil {
				return err
			}
			if prev, dup := seen[id]; dup {
				return at.Errorf("query id %q already has reasoning at %s; keep one per query", id, prev)
			}
			seen[id] = at
			text, ok := queries[id]
			if !ok {
				return at.Errorf("query id %q is not in %s; the reasoning must be about the task's queries", id, s.showFiles(exampleFiles))
			}
			g.Rows = append(g.Rows, Generation{ID: id, Text: text, HyDoc: reasoning})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(g.Rows) == 0 {
		return nil, errors.New(s.showFiles(files) + ": no reasoning; the split is empty")
	}
	return g, nil
}
