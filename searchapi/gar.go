package searchapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/retrieve"
)

// GAR is how the service expands queries with an LLM: the settings of
// `r2med run --gar METHOD --gar-model MODEL`, so that a query of a task
// gets the prompt, the request and so the (cached) answer run got, and
// R2MED's rules combine it with the query.
type GAR struct {
	// LLM answers the prompts: an *llm.Client, with the r2med cache so
	// a query asked twice (here or by run) is answered once.
	LLM expand.LLM
	// Request is the model and sampling (run's defaults: R2MED's);
	// messages are set per query.
	Request llm.Request
	// Label names the LLM in system names and picks R2MED's rules for
	// its output (a reasoning model's label keeps its reasoning apart).
	Label   string
	Prompts *expand.Prompts // nil: the built-in templates
	// Subject is how prompts address a task's queries (the task's style,
	// or the one the service was started with).
	Subject func(task string) (expand.Subject, error)
}

// checkGAR refuses an expansion the service cannot make.
func (s *Service) checkGAR(method string, c *corpus) error {
	g := s.opt.GAR
	if g == nil {
		return badRequest("this service has no LLM for expansions; start it with --gar-model MODEL (and --gar-base-url)")
	}
	if !slices.Contains(expand.GenerationMethods(), method) {
		return badRequest("gar %q: the methods are %s", method, strings.Join(expand.GenerationMethods(), ", "))
	}
	if method == expand.LameR && c.lamer == nil {
		return badRequest("gar lamer shows the LLM R2MED's BM25 top %d, and no index of %s's corpus holds R2MED's BM25 (r2med index build with the default --bm25 r2med)", expand.LameRDepth, c.name)
	}
	if _, err := g.Subject(c.task); err != nil {
		return badRequest("gar: %v", err)
	}
	return nil
}

// checkSubjects refuses a service whose expansions cannot work: every
// corpus it serves needs a prompt subject (its task's style, or the one
// the service was started with), or every expansion request would fail.
func (s *Service) checkSubjects(st *state) error {
	for _, c := range st.corpora {
		if _, err := s.opt.GAR.Subject(c.task); err != nil {
			task := c.task
			if task == "" {
				task = "none recorded"
			}
			return fmt.Errorf("expansions (--gar-model) cannot prompt for index %s (task: %s): %v", c.name, task, err)
		}
	}
	return nil
}

// expand asks the LLM for q's generation, exactly as run's expansion
// stage asks for each query of the task, and combines it with q by
// R2MED's rules.
func (s *Service) expand(ctx context.Context, c *corpus, method string, q ir.Query) (retrieve.Query, *Expansion, error) {
	g := s.opt.GAR
	subject, err := g.Subject(c.task)
	if err != nil {
		return retrieve.Query{}, nil, badRequest("gar: %v", err)
	}
	cfg := expand.GenerateConfig{Method: method, LLM: g.Label, Subject: subject, Prompts: g.Prompts, Request: g.Request}
	if method == expand.LameR {
		hits, err := retrieve.SearchOne(ctx, c.lamer.r, retrieve.Query{ID: q.ID, Text: q.Text}, expand.LameRDepth)
		if err != nil {
			return retrieve.Query{}, nil, err
		}
		passages := make([]string, len(hits))
		for i, h := range hits {
			t, ok, err := c.doc(h.DocID)
			if err != nil || !ok {
				return retrieve.Query{}, nil, fmt.Errorf("lamer: document %q: %v", h.DocID, err)
			}
			passages[i] = t
		}
		cfg.Passages = [][]string{passages}
	}
	task := &ir.Task{Name: c.task, Queries: []ir.Query{q}}
	res, err := expand.Generate(ctx, g.LLM, task, cfg, nil)
	if err != nil {
		return retrieve.Query{}, nil, err
	}
	man := res.Manifest
	s.metrics.cacheHit("generate", man.Cached > 0)
	if err := man.Unusable(); err != nil {
		// run refuses a generation set in which no query got an answer;
		// for one query that is this one.
		return retrieve.Query{}, nil, &Error{Status: http.StatusBadGateway, Msg: "gar: " + err.Error()}
	}
	gen := res.Items[0].Generation
	qs, err := retrieve.Expand(task.Queries, []expand.Generation{gen})
	if err != nil {
		return retrieve.Query{}, nil, err
	}
	return qs[0], &Expansion{Method: method, LLM: g.Label, Generation: gen.HyDoc, Text: qs[0].Text, Cached: man.Cached > 0}, nil
}
