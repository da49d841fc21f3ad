// Package models is the registry of dense retrievers and the recipe each
// is evaluated with: checkpoint, pooling, maximum length, normalization,
// batch size, and the per-task query and document instructions, each with
// where it was published (Instruction.Source). It says which backend can
// serve each model; it computes nothing.
//
// R2MED's 14 recipes come from R2MED's src/eval_retrieval.py, src/utils.py
// and src/instrcution.py. That instruction table is keyed by the tasks'
// old names (Stack-Biology, PMC-Treat, PMCPatients, …) while the code
// indexes it with the new ones; the mapping is the tasks registry's
// OldName. The models that lead R2MED since (ReasonEmbed, ReasonIR, RaDeR,
// DIVER, Qwen3-Embedding, gte-Qwen2) carry the instructions of the
// evaluations that published their numbers (ReasonEmbed's R2MED code) and
// their authors' BRIGHT instructions, as Tables (leaders.go). A task
// outside every table gets the model's documented generic instruction
// (Model.Generic), never an empty one.
//
// Instructions are prefixes: the text a backend embeds is the instruction
// followed by the query or document, R2MED's '{}{}'.format(instr, text).
// INSTRUCTOR, GritLM and NV-Embed took the instruction as a separate
// prompt argument instead (SeparatePrompt): it conditions the embedding but
// is left out of the pooled tokens, and it applies to every text of the
// call, so in dense GAR the hypothetical document is embedded with the
// query instruction too (InstructHyDoc). A server that only takes text
// (OpenAI-compatible routes) pools over the prefix as well, which is close
// to, not identical with, those models' own encode.
package models

import (
	"fmt"
	"sort"
	"strings"

	"github.com/r2med/r2med/embed"
)

// Pooling names, as embed defines them: CLS, Mean and LastToken pool token
// vectors; Internal means the model or service pools itself (NV-Embed's
// latent attention, GritLM's and INSTRUCTOR's mean without the prompt,
// APIs).
const (
	CLS       = embed.PoolCLS
	Mean      = embed.PoolMean
	LastToken = embed.PoolLast
	Internal  = embed.PoolModel
)

// Backends, as `r2med run --backend` names them.
const (
	ONNX   = "onnx"   // local encoder through ONNX Runtime
	OpenAI = "openai" // any OpenAI-compatible POST /v1/embeddings (OpenAI, vLLM, Ollama, llama.cpp, TEI)
	TEI    = "tei"    // Text Embeddings Inference's POST /embed
	Voyage = "voyage" // Voyage AI
)

// Template is how a model's instruction is built from a task's wording.
type Template uint8

const (
	NoTemplate Template = iota
	// E5 is "Instruct: Given {X}, {G}\nQuery: " (e5-mistral, SFR, NV-Embed).
	E5
	// BMR is E5 without "Instruct: " (BMRetriever).
	BMR
	// Grit is "<|user|>\nGiven {X}, {G}\n<|embed|>\n" (GritLM).
	Grit
	// Instructor is "Represent the {…} for retrieving …: " for queries and
	// "Represent the {…} for retrieval: " for documents (INSTRUCTOR).
	Instructor
)

// Model is one retriever and R2MED's recipe for it.
type Model struct {
	Name    string   // R2MED's --retriever_name ("nv", "bge"), or our variant's name
	Aliases []string // other names Lookup takes; Hub ids are taken too
	// HubID is the checkpoint, or the API model name. Dual-encoder models
	// name their two checkpoints in QueryHubID and DocHubID instead.
	HubID, QueryHubID, DocHubID string
	// Hosted: the model is served only by its vendor's API (no public
	// weights), so it may have changed since a paper called it.
	Hosted  bool
	Pooling embed.Pooling
	// MaxLength is in tokens of the model's tokenizer (for openai, cl100k
	// tokens); DocMaxLength, when set, is the documents' own.
	MaxLength, DocMaxLength int
	// Normalize says whether the model L2-normalizes its output. Scoring
	// is cosine either way (BEIR's cos_sim normalizes both sides).
	Normalize bool
	// AppendEOS: the tokenizer cuts to MaxLength−1 tokens and appends EOS,
	// whose state is pooled (BMRetriever's "last-bmr"); e5 and sfr pool
	// the last token without appending one (R2MED quirk (b)).
	AppendEOS bool
	// DocAsPair: documents are the second text of a pair whose first is
	// empty, ("", text), as MedCPT's article encoder takes (title, abstract).
	DocAsPair bool
	// SeparatePrompt: the instruction is a prompt argument, left out of
	// pooling and applied to every text of the call (see the package
	// comment).
	SeparatePrompt bool
	Template       Template
	// QueryPrefix and DocPrefix are instructions that do not depend on the
	// task (bge's query prefix, BMRetriever's document prefix), published
	// in PrefixSource. A model has a Template or a QueryPrefix, not both.
	QueryPrefix, DocPrefix string
	PrefixSource           Source
	// Tables are per-task instructions as later evaluations publish them
	// (R2MED's tasks in ReasonEmbed's evaluation code, BRIGHT's in the
	// model authors'), each with its source; R2MED's own recipes build
	// theirs from Template instead.
	Tables []Table
	// Generic is the instruction for a task outside the published ones,
	// for models whose instructions name the task; its Source says where
	// it comes from (the model authors' default task, R2MED's NFCorpus
	// entry) or how it was derived.
	Generic Instruction
	// Backends can serve it, the preferred first.
	Backends []string
	// BatchSize is R2MED's encode batch.
	BatchSize int
	// R2MEDName is the directory of R2MED's published results that this
	// recipe reproduces, "" if none; NDCG10 is their 8-task mean nDCG@10
	// (×100) from R2MED's results/.
	R2MEDName string
	NDCG10    float64
	// Reported is the 8-task mean nDCG@10 (×100) a later evaluation
	// printed for this recipe (ReasonEmbed's Table 3), by ReportedBy.
	Reported   float64
	ReportedBy string
	Note       string
}

// InstructHyDoc says whether, in dense GAR's averaged form, the
// hypothetical document is embedded with the query instruction (INSTRUCTOR,
// GritLM, NV-Embed) rather than bare.
func (m Model) InstructHyDoc() bool { return m.SeparatePrompt }

// HubIDs lists the model's checkpoints: one, or a dual encoder's two
// (once each). API models list their model name.
func (m Model) HubIDs() []string {
	if m.HubID != "" {
		return []string{m.HubID}
	}
	if m.QueryHubID == m.DocHubID {
		return []string{m.QueryHubID}
	}
	return []string{m.QueryHubID, m.DocHubID}
}

// CheckpointFor is the checkpoint that embeds the given side.
func (m Model) CheckpointFor(side embed.Input) string {
	if m.HubID != "" {
		return m.HubID
	}
	if side == embed.Document {
		return m.DocHubID
	}
	return m.QueryHubID
}

// MaxLengthFor is the maximum length on the given side.
func (m Model) MaxLengthFor(side embed.Input) int {
	if side == embed.Document && m.DocMaxLength > 0 {
		return m.DocMaxLength
	}
	return m.MaxLength
}

// Local says whether the model can run on the local ONNX backend.
func (m Model) Local() bool { return m.Supports(ONNX) }

// Supports says whether backend can serve the model.
func (m Model) Supports(backend string) bool {
	for _, b := range m.Backends {
		if b == backend {
			return true
		}
	}
	return false
}

// Identity is the embedding cache identity of the model served by
// backend at revision (a checkpoint commit, "" if unknown). A dual
// encoder's identity names both checkpoints, so R2MED's article-for-both
// variant never shares entries with the proper pairing. MaxLength is the
// query side's; a separate document length, EOS appending, pair input and
// prompt handling go into Extra, since each changes vectors.
func (m Model) Identity(backend, revision string) embed.Identity {
	id := embed.Identity{
		Model:     m.HubID,
		Revision:  revision,
		Backend:   backend,
		Pooling:   m.Pooling.String(),
		MaxLength: m.MaxLength,
		Normalize: m.Normalize,
	}
	if m.HubID == "" {
		id.Model = m.QueryHubID + "+" + m.DocHubID
	}
	var extra []string
	if m.DocMaxLength > 0 {
		extra = append(extra, fmt.Sprintf("doc-max-length=%d", m.DocMaxLength))
	}
	if m.AppendEOS {
		extra = append(extra, "append-eos")
	}
	if m.DocAsPair {
		extra = append(extra, "doc-as-pair")
	}
	if m.SeparatePrompt {
		extra = append(extra, "separate-prompt")
	}
	id.Extra = strings.Join(extra, ",")
	return id
}

// wording is how R2MED's instruction table describes one task: the
// subject X and goal G of the e5-style templates and the objects of
// INSTRUCTOR's two templates.
type wording struct {
	subject, goal      string
	instQuery, instDoc string
}

const (
	goalPost  = "retrieve relevant passages that help answer the post"
	goalExam  = "retrieve relevant passages that help answer the exam"
	goalCase  = "retrieve relevant passages that help answer the case"
	goalCases = "retrieve similar cases that help diagnose the case"
)

// wordings is keyed by today's task names (tasks.Task.Name); R2MED keyed
// them by the old ones (tasks.Task.OldName).
var wordings = map[string]wording{
	"Biology":          {"a Biology post", goalPost, "Biology post for retrieving relevant paragraphs", "Biology paragraph"},
	"Medical-Sciences": {"a Medical Science post", goalPost, "Medical Science post for retrieving relevant paragraphs", "Medical Science paragraph"},
	"Bioinformatics":   {"a Bioinformatics post", goalPost, "Bioinformatics post for retrieving relevant paragraphs", "Bioinformatics paragraph"},
	"MedXpertQA-Exam":  {"a Medical Exam", goalExam, "Medical Exam for retrieving relevant paragraphs that help answer the exam", "Medical paragraph"},
	"MedQA-Diag":       {"a Medical Exam", goalExam, "Medical Exam for retrieving relevant paragraphs that help answer the exam", "Medical paragraph"},
	"PMC-Treatment":    {"a Clinical Case", goalCase, "Clinical Case for retrieving relevant paragraphs that help answer the case", "Medical paragraph"},
	"PMC-Clinical":     {"a Clinical Case", goalCases, "Clinical Case for retrieving similar cases that help diagnose the case", "Clinical Case"},
	"IIYi-Clinical":    {"a Clinical Case", goalCases, "Clinical Case for retrieving similar cases that help diagnose the case", "Clinical Case"},
}

var (
	localOrServer = []string{ONNX, TEI, OpenAI}
	serverOnly    = []string{OpenAI, TEI}
)

const bmrDocPrefix = "Represent this passage\npassage: "

// r2medInstructions is R2MED's instruction table, which R2MED's own
// recipes (Template, QueryPrefix, DocPrefix) are read from.
var r2medInstructions = Source{Repo: "R2MED/R2MED", Path: "src/instrcution.py", Commit: "45cbac534475a0f66fec190cba752b5dc452839d"}

// R2MED's generic instructions: its BEIR_NFCorpus entries (nv is the
// same dict as e5_q, so e5 and sfr share nv's), and for the templates
// R2MED gives none, nv's wording in theirs.
var (
	e5Generic = Instruction{
		Query:  "Instruct: Given a question, retrieve relevant documents that answer the question\nQuery: ",
		Source: withEntry(r2medInstructions, `nv["BEIR_NFCorpus"] (nv is e5_q, the dict e5 and sfr read)`),
	}
	bmrGeneric = Instruction{
		Query: "Given a question, retrieve relevant documents that best answer the question\nQuery: ", Doc: bmrDocPrefix,
		Source: withEntry(r2medInstructions, `bmr_q["BEIR_NFCorpus"]`),
	}
	gritGeneric = Instruction{
		Query: "<|user|>\nGiven a question, retrieve relevant documents that answer the question\n<|embed|>\n", Doc: "<|embed|>\n",
		Source: derived(r2medInstructions, `nv["BEIR_NFCorpus"]'s wording in grit's template; R2MED gives grit no generic entry`),
	}
	instructorGeneric = Instruction{
		Query: "Represent the question for retrieving relevant documents: ", Doc: "Represent the document for retrieval: ",
		Source: derived(r2medInstructions, "inst_q's and inst_d's templates with a task-neutral object; R2MED gives INSTRUCTOR no generic entry"),
	}
)

// bare is the source of the recipes R2MED gives no instruction.
var bare = withEntry(r2medInstructions, "no entry for the model: texts go bare")

func withEntry(s Source, entry string) Source { s.Entry = entry; return s }
func derived(s Source, how string) Source     { s.Derived = how; return s }

// all is the registry: R2MED's recipes, then the leaders since.
var all = append(append([]Model(nil), r2medRecipes...), leaders...)

var r2medRecipes = []Model{
	{
		Name: "contriever", Aliases: []string{"contriever-msmarco"},
		HubID: "facebook/contriever-msmarco", Pooling: Mean, MaxLength: 512,
		Backends: localOrServer, BatchSize: 512, R2MEDName: "contriever", NDCG10: 11.76, PrefixSource: bare,
	},
	{
		Name: "medcpt", Aliases: []string{"MedCPT"},
		QueryHubID: "ncbi/MedCPT-Query-Encoder", DocHubID: "ncbi/MedCPT-Article-Encoder",
		Pooling: CLS, MaxLength: 512, DocAsPair: true,
		Backends: []string{ONNX}, PrefixSource: bare, BatchSize: 512,
		Note: "MedCPT as its authors pair it: the query encoder for queries, the article encoder for documents. R2MED's script loaded the article encoder for both; that is medcpt-r2med",
	},
	{
		Name: "medcpt-r2med", Aliases: []string{"medcpt-article"},
		QueryHubID: "ncbi/MedCPT-Article-Encoder", DocHubID: "ncbi/MedCPT-Article-Encoder",
		Pooling: CLS, MaxLength: 512, DocAsPair: true,
		Backends: []string{ONNX}, PrefixSource: bare, BatchSize: 512, R2MEDName: "medcpt", NDCG10: 7.87,
		Note: "R2MED's medcpt as its code ran it (quirk (a)): the article encoder embeds queries too. Its published medcpt numbers come from this (inferred)",
	},
	{
		Name: "bge", Aliases: []string{"bge-large-en-v1.5", "bge-large"},
		HubID: "BAAI/bge-large-en-v1.5", Pooling: CLS, MaxLength: 512, Normalize: true,
		QueryPrefix: "Represent this sentence for searching relevant passages: ", PrefixSource: withEntry(r2medInstructions, `query_instruction["bge"]`),
		Backends: localOrServer, BatchSize: 512, R2MEDName: "bge", NDCG10: 17.02,
	},
	{
		Name: "inst-l", Aliases: []string{"instructor-large"},
		HubID: "hkunlp/instructor-large", Pooling: Internal, MaxLength: 512, Normalize: true,
		SeparatePrompt: true, Template: Instructor, Generic: instructorGeneric,
		Backends: serverOnly, BatchSize: 64, R2MEDName: "inst-l", NDCG10: 16.21,
		Note: "T5 encoder: served over HTTP only. R2MED left the length at the model's default (512)",
	},
	{
		Name: "inst-xl", Aliases: []string{"instructor-xl"},
		HubID: "hkunlp/instructor-xl", Pooling: Internal, MaxLength: 512, Normalize: true,
		SeparatePrompt: true, Template: Instructor, Generic: instructorGeneric,
		Backends: serverOnly, BatchSize: 32, R2MEDName: "inst-xl", NDCG10: 18.13,
		Note: "T5 encoder: served over HTTP only. R2MED left the length at the model's default (512)",
	},
	{
		Name: "bmr-410m", Aliases: []string{"BMRetriever-410M"},
		HubID: "BMRetriever/BMRetriever-410M", Pooling: LastToken, MaxLength: 512, AppendEOS: true,
		Template: BMR, DocPrefix: bmrDocPrefix, Generic: bmrGeneric,
		Backends: serverOnly, BatchSize: 32, R2MEDName: "bmr-410m", NDCG10: 18.10,
		Note: "not normalized (quirk (c)); cosine at scoring",
	},
	{
		Name: "bmr-2b", Aliases: []string{"BMRetriever-2B"},
		HubID: "BMRetriever/BMRetriever-2B", Pooling: LastToken, MaxLength: 1024, AppendEOS: true,
		Template: BMR, DocPrefix: bmrDocPrefix, Generic: bmrGeneric,
		Backends: serverOnly, BatchSize: 32, R2MEDName: "bmr-2b", NDCG10: 24.69,
		Note: "not normalized (quirk (c)); cosine at scoring",
	},
	{
		Name: "bmr-7b", Aliases: []string{"BMRetriever-7B"},
		HubID: "BMRetriever/BMRetriever-7B", Pooling: LastToken, MaxLength: 2048, AppendEOS: true,
		Template: BMR, DocPrefix: bmrDocPrefix, Generic: bmrGeneric,
		Backends: serverOnly, BatchSize: 64, R2MEDName: "bmr-7b", NDCG10: 30.18,
		Note: "not normalized (quirk (c)); cosine at scoring",
	},
	{
		Name: "e5", Aliases: []string{"e5-mistral-7b-instruct", "e5-mistral"},
		HubID: "intfloat/e5-mistral-7b-instruct", Pooling: LastToken, MaxLength: 2048, Normalize: true,
		Template: E5, Generic: e5Generic, Backends: serverOnly, BatchSize: 32, R2MEDName: "e5", NDCG10: 24.92,
		Note: "R2MED pooled the last token without appending EOS, unlike the official recipe (quirk (b))",
	},
	{
		Name: "sfr", Aliases: []string{"SFR-Embedding-Mistral"},
		HubID: "Salesforce/SFR-Embedding-Mistral", Pooling: LastToken, MaxLength: 2048, Normalize: true,
		Template: E5, Generic: e5Generic, Backends: serverOnly, BatchSize: 32, R2MEDName: "sfr", NDCG10: 30.65,
		Note: "R2MED pooled the last token without appending EOS (quirk (b))",
	},
	{
		Name: "grit", Aliases: []string{"GritLM-7B", "gritlm"},
		HubID: "GritLM/GritLM-7B", Pooling: Internal, MaxLength: 512, DocMaxLength: 2048, Normalize: true,
		SeparatePrompt: true, Template: Grit, DocPrefix: "<|embed|>\n", Generic: gritGeneric,
		Backends: serverOnly, BatchSize: 64, R2MEDName: "grit", NDCG10: 31.12,
	},
	{
		Name: "nv", Aliases: []string{"NV-Embed-v2", "nv-embed"},
		HubID: "nvidia/NV-Embed-v2", Pooling: Internal, MaxLength: 4096, Normalize: true,
		SeparatePrompt: true, Template: E5, Generic: e5Generic,
		Backends: serverOnly, BatchSize: 16, R2MEDName: "nv", NDCG10: 31.43,
		Note: "R2MED ran it in fp16; missing from R2MED's --retriever_name choices although its results ship",
	},
	{
		Name: "openai", Aliases: []string{"text-embedding-3-large"},
		HubID: "text-embedding-3-large", Hosted: true, Pooling: Internal, MaxLength: 6000, Normalize: true,
		Backends: []string{OpenAI}, PrefixSource: bare, BatchSize: 64, R2MEDName: "openai", NDCG10: 28.57,
		Note: "R2MED cut inputs to 6000 cl100k tokens and sent them JSON-quoted with newlines as spaces (quirk (d))",
	},
	{
		Name: "voyage", Aliases: []string{"voyage-3"},
		HubID: "voyage-3", Hosted: true, Pooling: Internal, MaxLength: 16000, Normalize: true,
		Backends: []string{Voyage}, PrefixSource: bare, BatchSize: 64, R2MEDName: "voyage", NDCG10: 27.34,
		Note: "input_type query/document; R2MED cut inputs to 16000 tokens and sent them JSON-quoted (quirk (d))",
	},
}

// byKey maps every name, alias and checkpoint, folded, to its model.
// A checkpoint two entries share (the MedCPT article encoder) maps to the
// first, the proper recipe.
var byKey = func() map[string]int {
	m := make(map[string]int)
	for i, mod := range all {
		for _, n := range append([]string{mod.Name}, mod.Aliases...) {
			k := strings.ToLower(n)
			if j, dup := m[k]; dup && j != i {
				panic(fmt.Sprintf("models: %q names both %s and %s", n, all[j].Name, mod.Name))
			}
			m[k] = i
		}
	}
	for i, mod := range all {
		for _, id := range mod.HubIDs() {
			if _, dup := m[strings.ToLower(id)]; !dup {
				m[strings.ToLower(id)] = i
			}
		}
	}
	return m
}()

// All returns the registry in R2MED's order, with our medcpt-r2med
// variant after medcpt.
func All() []Model {
	out := make([]Model, len(all))
	for i, m := range all {
		out[i] = m.clone()
	}
	return out
}

func (m Model) clone() Model {
	m.Aliases = append([]string(nil), m.Aliases...)
	m.Backends = append([]string(nil), m.Backends...)
	m.Tables = append([]Table(nil), m.Tables...)
	for i, t := range m.Tables {
		q := make(map[string]string, len(t.Query))
		for k, v := range t.Query {
			q[k] = v
		}
		m.Tables[i].Query = q
	}
	return m
}

// Lookup finds a model by name, alias or checkpoint id, ignoring case.
func Lookup(name string) (Model, bool) {
	i, ok := byKey[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Model{}, false
	}
	return all[i].clone(), true
}

// Names lists the models' names in registry order.
func Names() []string {
	out := make([]string, len(all))
	for i, m := range all {
		out[i] = m.Name
	}
	return out
}

// Unknown is the error for a name Lookup does not know.
func Unknown(name string) error {
	names := Names()
	sort.Strings(names)
	return fmt.Errorf("unknown model %q; the registry has %s (or give a Hub id for an HTTP backend)", name, strings.Join(names, ", "))
}
