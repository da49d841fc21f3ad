package expand

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
)

// How a generated output becomes hy_doc. The LLM label (the <llm>
// directory name) decides which of R2MED's rules apply when the file is
// read back, exactly as for published generations:
//
//   - A label R2MED lists as a reasoning model (IsReasoningLLM: qwq-32b,
//     r1-qwen-32b, qwen3-32b, …) stores the raw output: the reasoning, when
//     the model gave one, as a leading "<think>…</think>" block before the
//     answer (llm.Response.Raw). Split then keeps the answer and the
//     reasoning-model rules apply (BM25 on the answer alone; dense averages
//     query and answer for every method).
//   - Any other label stores the answer alone; reasoning, if the model
//     returned some, is kept in the line's extra "reasoning" field (readers
//     ignore it) and counted in the manifest, so the non-reasoning rules
//     (the query kept beside the generation) see no reasoning text.
//
// So to evaluate a new reasoning model under R2MED's reasoning rules, label
// it with one of R2MED's reasoning names of the same format (e.g.
// --llm-name qwq-32b for any <think> model).

// LLM answers a batch of chat requests; *llm.Client is one.
type LLM interface {
	GenerateAll(ctx context.Context, reqs []llm.Request, progress func(done, total int)) ([]llm.Result, error)
}

// GenerateConfig says what to generate.
type GenerateConfig struct {
	Method  string  // HyDE, Query2Doc or LameR
	LLM     string  // the label: directory name and R2MED rule name
	Subject Subject // how prompts address the task's queries
	Prompts *Prompts
	// Request carries the model and sampling parameters; its Messages are
	// set per query.
	Request llm.Request
	// Passages holds, for LameR, each query's top retrieved document texts
	// (R2MED: BM25 top 10), in Queries order.
	Passages [][]string
	// Settings, if set, are the client's settings for the manifest
	// (llm.Client.Describe).
	Settings map[string]any
}

// Fallback is a query whose generation was unusable, so its hy_doc is the
// query text itself.
type Fallback struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// GenerationManifest records how a generation file was made. It is
// written beside it as generation_manifest.json.
type GenerationManifest struct {
	Method string `json:"method"`
	LLM    string `json:"llm"`
	Model  string `json:"model"`
	// Served are the models the server said answered (its answers'
	// "model"; a cached answer's as recorded when made) where they are not
	// Model: a dated version of it, a gateway's routing. Empty when every
	// answer named Model, or none named any. A run manifest's usage names
	// them so too (usage.Line.Served).
	Served    []string          `json:"served"`
	Format    string            `json:"format"` // the Split format the label implies
	Task      string            `json:"task"`
	Style     Style             `json:"style"`
	Domain    string            `json:"domain,omitempty"`
	Settings  map[string]any    `json:"settings"`
	System    string            `json:"system_prompt"`
	Templates map[string]string `json:"templates"`
	// TemplateDigest is a SHA-256 of all template files.
	TemplateDigest string `json:"template_digest"`
	Queries        int    `json:"queries"`
	Cached         int    `json:"cached"`
	Requested      int    `json:"requested"`
	// ReasoningKept counts outputs stored with their reasoning (reasoning
	// labels); ReasoningDropped those whose reasoning went to the extra
	// "reasoning" field (other labels).
	ReasoningKept    int `json:"reasoning_kept"`
	ReasoningDropped int `json:"reasoning_dropped"`
	// Usage sums the answers' tokens (cached ones with the usage they had
	// when made). Where a server reported none they were estimated: then
	// Usage.Estimated names the estimator and EstimatedAnswers counts them.
	Usage            llm.Usage  `json:"usage"`
	EstimatedAnswers int        `json:"estimated_answers,omitempty"`
	Fallbacks        []Fallback `json:"fallbacks"`
	// Traces holds per-query logs of multi-turn methods (agent.Trace).
	Traces any `json:"traces,omitempty"`
}

// ManifestName is the generation manifest's file name.
const ManifestName = "generation_manifest.json"

// Generated is one query's generation and what went into it.
type Generated struct {
	Generation
	DocIDs    json.RawMessage // the query's doc_id list, written as R2MED does
	Prompt    string
	Reasoning string // set only when it was kept out of HyDoc
}

// GenerateResult is what Generate produced.
type GenerateResult struct {
	Items    []Generated
	Manifest GenerationManifest
}

// NewResult wraps generations made elsewhere (agentic runs) for WriteDir,
// giving each the task's doc_id list as Generate does.
func NewResult(task *ir.Task, gens []Generation, m GenerationManifest) *GenerateResult {
	ids := qrelDocIDs(task)
	byID := make(map[string]ir.Query, len(task.Queries))
	for _, q := range task.Queries {
		byID[q.ID] = q
	}
	r := &GenerateResult{Items: make([]Generated, len(gens)), Manifest: m}
	for i, g := range gens {
		q, ok := byID[g.ID]
		if !ok {
			q = ir.Query{ID: g.ID}
		}
		r.Items[i] = Generated{Generation: g, DocIDs: ids(q)}
	}
	return r
}

// Generations returns the generations alone.
func (r *GenerateResult) Generations() []Generation {
	out := make([]Generation, len(r.Items))
	for i, it := range r.Items {
		out[i] = it.Generation
	}
	return out
}

// Generate asks the LLM for every query of task and builds R2MED-layout
// generations. A query whose answer is unusable (an error after retries,
// or nothing left once reasoning is split off) gets its own text as
// hy_doc and a Fallback entry; the caller must report them. Only ctx's
// cancellation fails the whole call.
func Generate(ctx context.Context, c LLM, task *ir.Task, cfg GenerateConfig, progress func(done, total int)) (*GenerateResult, error) {
	if !slices.Contains(GenerationMethods(), cfg.Method) {
		return nil, fmt.Errorf("cannot generate for method %q; generation supports %s", cfg.Method, strings.Join(GenerationMethods(), ", "))
	}
	if err := checkSource(cfg.Method, cfg.LLM); err != nil {
		return nil, err
	}
	p := cfg.Prompts
	if p == nil {
		p = DefaultPrompts()
	}
	qs := task.Queries
	if cfg.Method == LameR && len(cfg.Passages) != len(qs) {
		return nil, fmt.Errorf("lamer: passages for %d queries, the task has %d", len(cfg.Passages), len(qs))
	}
	reqs := make([]llm.Request, len(qs))
	prompts := make([]string, len(qs))
	for i, q := range qs {
		var passages []string
		if cfg.Method == LameR {
			passages = cfg.Passages[i]
		}
		u, err := p.Render(cfg.Method, cfg.Subject, q.Text, passages)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		prompts[i] = u
		r := cfg.Request
		r.Messages = []llm.Message{llm.System(p.System()), llm.User(u)}
		reqs[i] = r
	}
	results, err := c.GenerateAll(ctx, reqs, progress)
	if err != nil {
		return nil, err
	}
	if len(results) != len(qs) {
		return nil, fmt.Errorf("the LLM returned %d results for %d requests", len(results), len(qs))
	}
	format := FormatOf(cfg.LLM)
	man := GenerationManifest{
		Method: cfg.Method, LLM: cfg.LLM, Model: cfg.Request.Model, Format: format.String(),
		Task: task.Name, Style: cfg.Subject.Style, Settings: cfg.Settings,
		System: p.System(), Templates: p.Sources, TemplateDigest: p.Digest(),
		Queries: len(qs), Fallbacks: []Fallback{}, Served: []string{},
	}
	if cfg.Subject.Style == StylePost {
		man.Domain = cfg.Subject.Domain
	}
	if man.Model == "" && cfg.Settings != nil {
		man.Model, _ = cfg.Settings["model"].(string)
	}
	docIDs := qrelDocIDs(task)
	out := &GenerateResult{Items: make([]Generated, len(qs))}
	for i, q := range qs {
		r := results[i]
		it := Generated{
			Generation: Generation{ID: q.ID, Text: q.Text, Method: cfg.Method, LLM: cfg.LLM},
			DocIDs:     docIDs(q), Prompt: prompts[i],
		}
		if r.Err == nil {
			if r.Cached {
				man.Cached++
			} else {
				man.Requested++
			}
			man.Usage.PromptTokens += r.Usage.PromptTokens
			man.Usage.CompletionTokens += r.Usage.CompletionTokens
			man.Usage.TotalTokens += r.Usage.TotalTokens
			if r.Usage.Estimated != "" {
				man.Usage.Estimated = r.Usage.Estimated
				man.EstimatedAnswers++
			}
		}
		var reason string
		switch {
		case r.Err != nil:
			reason = r.Err.Error()
		case format != Plain:
			it.HyDoc = r.Raw()
			if strings.TrimSpace(Split(cfg.LLM, it.HyDoc)) == "" || strings.TrimSpace(r.Content) == "" {
				reason = emptyReason(r.Response)
			} else if r.Reasoning != "" {
				man.ReasoningKept++
			}
		default:
			it.HyDoc = r.Content
			if strings.TrimSpace(r.Content) == "" {
				reason = emptyReason(r.Response)
			} else if r.Reasoning != "" {
				it.Reasoning = r.Reasoning
				man.ReasoningDropped++
			}
		}
		if reason != "" {
			it.HyDoc, it.Reasoning = q.Text, ""
			man.Fallbacks = append(man.Fallbacks, Fallback{ID: q.ID, Reason: reason})
		}
		out.Items[i] = it
	}
	out.Manifest = man
	return out, nil
}

func emptyReason(r llm.Response) string {
	switch {
	case strings.TrimSpace(r.Refusal) != "":
		return fmt.Sprintf("the model refused: %q", strings.TrimSpace(r.Refusal))
	case r.FinishReason == "content_filter":
		return "the server's content filter withheld the answer (finish_reason content_filter)"
	case r.FinishReason == "length" && r.Reasoning != "":
		return "empty answer: max_tokens was reached while the model was still reasoning; raise --max-tokens"
	case r.FinishReason == "length":
		return "empty answer: max_tokens was reached; raise --max-tokens"
	}
	return "empty answer"
}

// qrelDocIDs gives each query's doc_id: the query file's own list when it
// has one (R2MED's query.jsonl does), else its judged-relevant documents.
func qrelDocIDs(task *ir.Task) func(ir.Query) json.RawMessage {
	return func(q ir.Query) json.RawMessage {
		if raw, ok := q.Extra["doc_id"]; ok && len(raw) > 0 {
			return raw
		}
		var ids []string
		for d, g := range task.Qrels[q.ID] {
			if g > 0 {
				ids = append(ids, d)
			}
		}
		slices.Sort(ids)
		if ids == nil {
			ids = []string{}
		}
		b, _ := json.Marshal(ids)
		return b
	}
}

// Unusable is an error when every query fell back to its own text: such a
// set would evaluate the plain queries under the method's name, so callers
// refuse it. The first failure usually says why (a wrong model name, a
// server that is down).
func (m GenerationManifest) Unusable() error {
	if m.Queries == 0 || len(m.Fallbacks) < m.Queries {
		return nil
	}
	return fmt.Errorf("no query got a usable answer from %s; the first failure: %s", m.Model, m.Fallbacks[0].Reason)
}

// FallbackSummary reports the fallbacks by count and a few ids, for a
// warning; it is empty when there are none.
func (m GenerationManifest) FallbackSummary() string {
	if len(m.Fallbacks) == 0 {
		return ""
	}
	ids := make([]string, len(m.Fallbacks))
	for i, f := range m.Fallbacks {
		ids[i] = f.ID
	}
	return fmt.Sprintf("%d of %d queries got no usable %s output from %s and use their own text instead: %s (reasons in %s)",
		len(m.Fallbacks), m.Queries, m.Method, m.LLM, errtext.QuoteList(ids, 10), ManifestName)
}

// Dir is where a generation set lives under root, R2MED's
// <root>/<method>/<llm> (<root>/reasoning/<llm> for both query-reasoning
// modes); root is usually the task directory.
func Dir(root, method, llmName string) string {
	return filepath.Join(root, MethodDir(method), llmName)
}

type line struct {
	ID        string          `json:"id"`
	Text      string          `json:"text"`
	HyDoc     string          `json:"hy_doc"`
	DocID     json.RawMessage `json:"doc_id"`
	Reasoning string          `json:"reasoning,omitempty"`
}

// WriteDir writes <root>/<method>/<llm>/query_with_hydoc.jsonl and its
// manifest, each whole or not at all; the manifest goes last. LoadDir(root,
// method, llm) reads the generations back.
func (r *GenerateResult) WriteDir(root string) (string, error) {
	m := r.Manifest
	if err := checkSource(m.Method, m.LLM); err != nil {
		return "", err
	}
	dir := Dir(root, m.Method, m.LLM)
	path := filepath.Join(dir, FileName)
	err := fileio.WriteAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		for _, it := range r.Items {
			if err := enc.Encode(line{ID: it.ID, Text: it.Text, HyDoc: it.HyDoc, DocID: it.DocIDs, Reasoning: it.Reasoning}); err != nil {
				return fmt.Errorf("query %q: %w", it.ID, err)
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return "", err
	}
	err = fileio.WriteAtomic(filepath.Join(dir, ManifestName), func(w io.Writer) error {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return "", err
	}
	return path, nil
}
