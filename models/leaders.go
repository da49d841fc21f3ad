package models

// The models that lead R2MED since the paper, with the recipes of the
// evaluations that published their numbers: ReasonEmbed's R2MED code
// (VectorSpaceLab/agentic-search, ReasonEmbed/evaluation_r2med) for R2MED,
// which ran every decoder embedder through FlagEmbedding with
// 'Instruct: {}\nQuery: {}', last-token pooling, normalized vectors and
// 512 tokens per side, documents bare; and each model's authors' BRIGHT
// code for BRIGHT. models/testdata/instruction-sources.json quotes every
// source these tables were read from, and the tests check the tables
// against those quotes.
//
// Lengths are the R2MED evaluation's. Over --backend openai each request
// asks the server to cut texts there (vLLM's truncate_prompt_tokens; vLLM
// refuses a text longer than --max-model-len without it); TEI's /embed
// cuts at its --max-input-length, so start TEI with the recipe's length.

const agenticSearch = "VectorSpaceLab/agentic-search"

// Commits of the sources, read 2026-11-27.
const (
	agenticR2MEDCode    = "344179f953921ac3e12b5ad521aa5c57adedc111" // evaluation_r2med/code and scripts/baselines
	agenticR2MEDOurs    = "d9438d60edd36f1a7a603666380e45db0efe4938" // evaluation_r2med/scripts/ours (Qwen3 and Llama ReasonEmbed)
	agenticR2MEDOursOld = "d73843db5aa4c50c1569bfd497627ad6f933495a" // eval_reason_embed_basic_llama_3.1_8b.sh, evaluation_bright baselines
	flagEmbeddingBright = "971236c869b98578854525c02a625a51d17a62b1" // FlagEmbedding/evaluation/bright/prompts.py
	reasonIRCommit      = "0aac96269e455965949df16520fab72da68ffc22"
	raderCommit         = "3a127e47a419bcda878cddef9c86f7dfbaca81f3"
	diverCommit         = "95b111b0adad85bf388e628b9073552055f6f408"
	brightCommit        = "d99e8391d967d4c2b3a74732530d2309e2fc92b6"
	qwen3EmbedCommit    = "f4ad0c434c0e3534494e26a4a6bdfd8ab1431968"
)

// reasonEmbedR2MED is ReasonEmbed's R2MEDInstructions (evaluation_r2med/
// code/prompts.py): R2MED's own e5 wording of each task with a final
// period.
func reasonEmbedR2MED() map[string]string {
	out := make(map[string]string, len(wordings))
	for task, w := range wordings {
		out[task] = "Given " + w.subject + ", " + w.goal + "."
	}
	return out
}

// flagEmbeddingBRIGHT is FlagEmbedding's BrightShortInstructions, which
// ReasonEmbed's BRIGHT scripts select (--task_type short
// --use_special_instructions True).
var flagEmbeddingBRIGHT = map[string]string{
	"biology":             "Given a Biology post, retrieve relevant passages that help answer the post.",
	"earth_science":       "Given an Earth Science post, retrieve relevant passages that help answer the post.",
	"economics":           "Given an Economics post, retrieve relevant passages that help answer the post.",
	"psychology":          "Given a Psychology post, retrieve relevant passages that help answer the post.",
	"robotics":            "Given a Robotics post, retrieve relevant passages that help answer the post.",
	"stackoverflow":       "Given a Stack Overflow post, retrieve relevant passages that help answer the post.",
	"sustainable_living":  "Given a Sustainable Living post, retrieve relevant passages that help answer the post.",
	"leetcode":            "Given a Coding problem, retrieve relevant examples that help answer the problem.",
	"pony":                "Given a Pony question, retrieve relevant passages that help answer the question.",
	"aops":                "Given a Math problem, retrieve relevant examples that help answer the problem.",
	"theoremqa_questions": "Given a Math problem, retrieve relevant examples that help answer the problem.",
	"theoremqa_theorems":  "Given a Math problem, retrieve relevant theorems that help answer the problem.",
}

// brightConfigs is the query instruction BRIGHT's configs/<model>/<task>.json
// give (BRIGHT's own qwen2 and the copies ReasonIR and RaDeR keep), with
// "{task}" already replaced by the task's name as BRIGHT's code does
// (instruction.format(task=task)): "Given a earth_science post, …".
func brightConfigs() map[string]string {
	out := make(map[string]string, len(BRIGHTTasks))
	for _, t := range BRIGHTTasks {
		switch t {
		case "leetcode":
			out[t] = "Given a coding problem, retrieve relevant examples that help answer the problem"
		case "pony":
			out[t] = "Given a " + t + " question, retrieve relevant passages that help answer the question"
		case "aops", "theoremqa_questions":
			out[t] = "Given a Math problem, retrieve relevant examples that help answer the problem"
		case "theoremqa_theorems":
			out[t] = "Given a Math problem, retrieve relevant theorems that help answer the problem"
		default:
			out[t] = "Given a " + t + " post, retrieve relevant passages that help answer the post"
		}
	}
	return out
}

// flagFormat is the query_instruction_format ReasonEmbed's scripts pass to
// FlagEmbedding ('Instruct: {}\nQuery: {}', the \n a newline), less the
// query.
const flagFormat = "Instruct: {}\nQuery: "

// webSearchTask is the task Qwen3-Embedding's README instructs with in its
// examples; the generic instruction of the Qwen-based recipes.
const webSearchTask = "Given a web search query, retrieve relevant passages that answer the query"

// r2medTable is an R2MED table of ReasonEmbed's evaluation: its
// instructions in FlagEmbedding's format, documents bare, from the script
// at path.
func r2medTable(path, commit string) Table {
	return Table{
		Benchmark: BenchR2MED, Query: wrap(flagFormat, reasonEmbedR2MED()),
		Source: Source{Repo: agenticSearch, Path: path, Commit: commit,
			Entry: "--query_instruction_format_for_retrieval 'Instruct: {}\\nQuery: {}' with R2MEDInstructions of ReasonEmbed/evaluation_r2med/code/prompts.py@" + agenticR2MEDCode[:12]},
	}
}

// flagBRIGHTTable is ReasonEmbed's BRIGHT table: FlagEmbedding's short
// instructions in the same format, 8192 tokens, from the script at path.
func flagBRIGHTTable(path, commit string) Table {
	return Table{
		Benchmark: BenchBRIGHT, Query: wrap(flagFormat, flagEmbeddingBRIGHT), MaxLength: 8192,
		Source: Source{Repo: agenticSearch, Path: path, Commit: commit,
			Entry: "BrightShortInstructions of FlagOpen/FlagEmbedding FlagEmbedding/evaluation/bright/prompts.py@" + flagEmbeddingBright[:12] + " in 'Instruct: {}\\nQuery: {}'"},
	}
}

// qwenGeneric is the generic instruction of the recipes evaluated in
// FlagEmbedding's format: Qwen3-Embedding's example task in that format.
var qwenGeneric = Instruction{
	Query: "Instruct: " + webSearchTask + "\nQuery: ",
	Source: Source{Repo: "QwenLM/Qwen3-Embedding", Path: "README.md", Commit: qwen3EmbedCommit,
		Entry:   "the task of get_detailed_instruct's example",
		Derived: "in the R2MED evaluation's 'Instruct: {}\\nQuery: ' format; the README writes 'Query:' without the space"},
}

// leaders are the recipes added after R2MED's own, in the order
// `r2med models` lists them.
var leaders = func() []Model {
	reasonEmbed := func(name, hub string, aliases []string, script, commit string, reported float64, note string) Model {
		return Model{
			Name: name, Aliases: aliases, HubID: hub, Pooling: LastToken, MaxLength: 512, Normalize: true,
			Tables: []Table{
				r2medTable("ReasonEmbed/evaluation_r2med/scripts/ours/"+script, commit),
				flagBRIGHTTable("ReasonEmbed/evaluation_bright/scripts/ours/"+script, agenticR2MEDOurs),
			},
			Generic:  qwenGeneric,
			Backends: serverOnly, BatchSize: 256, Reported: reported, ReportedBy: reasonEmbedTable3, Note: note,
		}
	}
	qwen3 := func(size string, reported float64, published bool) Model {
		m := Model{
			Name:    "qwen3-embedding-" + size,
			HubID:   "Qwen/Qwen3-Embedding-" + map[string]string{"0.6b": "0.6B", "4b": "4B", "8b": "8B"}[size],
			Pooling: LastToken, MaxLength: 512, Normalize: true,
			Generic: Instruction{
				Query:  "Instruct: " + webSearchTask + "\nQuery:",
				Source: Source{Repo: "QwenLM/Qwen3-Embedding", Path: "README.md", Commit: qwen3EmbedCommit, Entry: "get_detailed_instruct ('Instruct: {task_description}\\nQuery:{query}') with its example task"},
			},
			Backends: serverOnly, BatchSize: 256, Reported: reported, ReportedBy: reasonEmbedTable3,
		}
		script := "eval_qwen3_embedding_" + size + ".sh"
		if published {
			m.Tables = []Table{
				r2medTable("ReasonEmbed/evaluation_r2med/scripts/baselines/"+script, agenticR2MEDCode),
				flagBRIGHTTable("ReasonEmbed/evaluation_bright/scripts/baselines/"+script, agenticR2MEDOursOld),
			}
			return m
		}
		// No evaluation of 0.6B publishes its instructions: its siblings'.
		for _, t := range []Table{
			r2medTable("ReasonEmbed/evaluation_r2med/scripts/baselines/eval_qwen3_embedding_4b.sh", agenticR2MEDCode),
			flagBRIGHTTable("ReasonEmbed/evaluation_bright/scripts/baselines/eval_qwen3_embedding_4b.sh", agenticR2MEDOursOld),
		} {
			t.Source.Derived = "Qwen3-Embedding-4B's recipe; no evaluation of 0.6B publishes one"
			m.Tables = append(m.Tables, t)
		}
		m.Note = "no published R2MED or BRIGHT run: its 4B and 8B siblings' recipe"
		return m
	}
	brightEach := func(format string) map[string]string {
		return wrap(format, brightConfigs())
	}
	diverBRIGHT := Instruction{
		Query: "Instruct: " + webSearchTask + "\nQuery:", Doc: "Represent this text:",
		Source: Source{Repo: "AQ-MedAI/Diver", Path: "Retriever/retrievers.py", Commit: diverCommit,
			Entry: "Qwen3EmbeddingModel.embed_queries and embed_docs (the same for every task)"},
	}
	diverTask := make(map[string]string, len(BRIGHTTasks))
	for _, t := range BRIGHTTasks {
		diverTask[t] = diverBRIGHT.Query
	}
	return []Model{
		reasonEmbed("reasonembed-qwen3-8b", "hanhainebula/reason-embed-qwen3-8b-0928",
			[]string{"ReasonEmbed-Qwen3-8B", "reason-embed-qwen3-8b", "bge-reasoner-embed-0928"},
			"eval_reason_embed_qwen3_8b.sh", agenticR2MEDOurs, 43.18,
			"ReasonEmbed's RI-InfoNCE model on Qwen3-8B, also called BGE-Reasoner-Embed-0928"),
		reasonEmbed("reasonembed-qwen3-4b", "hanhainebula/reason-embed-qwen3-4b-0928",
			[]string{"ReasonEmbed-Qwen3-4B", "reason-embed-qwen3-4b"},
			"eval_reason_embed_qwen3_4b.sh", agenticR2MEDOurs, 41.16, ""),
		reasonEmbed("reasonembed-llama-3.1-8b", "hanhainebula/reason-embed-llama-3.1-8b-0928",
			[]string{"ReasonEmbed-Llama-3.1-8B", "reason-embed-llama-3.1-8b"},
			"eval_reason_embed_llama_3.1_8b.sh", agenticR2MEDOurs, 42.76, ""),
		reasonEmbed("reasonembed-basic-qwen3-8b", "hanhainebula/reason-embed-basic-qwen3-8b-0928",
			[]string{"ReasonEmbed-Basic-Qwen3-8B", "reason-embed-basic-qwen3-8b", "bge-reasoner-embed-0923", "BAAI/bge-reasoner-embed-qwen3-8b-0923"},
			"eval_reason_embed_basic_qwen3_8b.sh", agenticR2MEDOurs, 42.36,
			"basic InfoNCE; BGE-Reasoner's README names it BGE-Reasoner-Embed-0923, the same weights as BAAI/bge-reasoner-embed-qwen3-8b-0923"),
		reasonEmbed("reasonembed-basic-qwen3-4b", "hanhainebula/reason-embed-basic-qwen3-4b-0928",
			[]string{"ReasonEmbed-Basic-Qwen3-4B", "reason-embed-basic-qwen3-4b"},
			"eval_reason_embed_basic_qwen3_4b.sh", agenticR2MEDOurs, 39.94, "basic InfoNCE"),
		reasonEmbed("reasonembed-basic-llama-3.1-8b", "hanhainebula/reason-embed-basic-llama-3.1-8b-0928",
			[]string{"ReasonEmbed-Basic-Llama-3.1-8B", "reason-embed-basic-llama-3.1-8b"},
			"eval_reason_embed_basic_llama_3.1_8b.sh", agenticR2MEDOursOld, 41.98, "basic InfoNCE"),
		{
			Name: "reasonir-8b", Aliases: []string{"ReasonIR-8B", "reasonir"},
			HubID: "reasonir/ReasonIR-8B", Pooling: Internal, MaxLength: 512, Normalize: true, SeparatePrompt: true,
			Tables: []Table{
				{
					Benchmark: BenchR2MED, Query: wrap("<|user|>\n{}\n<|embed|>\n", reasonEmbedR2MED()), Doc: "<|embed|>\n",
					Source: Source{Repo: agenticSearch, Path: "ReasonEmbed/evaluation_r2med/code/reasonir_models.py", Commit: agenticR2MEDCode,
						Entry: "ReasonIREncoder's prompts ('<|user|>\\n{}\\n<|embed|>\\n' for queries, '<|embed|>\\n' for documents) with R2MEDInstructions of code/prompts.py; scripts/baselines/eval_reasonir_8b.sh: 512 tokens, batch 8"},
				},
				{
					Benchmark: BenchBRIGHT, Query: brightEach("<|user|>\n{}\n<|embed|>\n"), Doc: "<|embed|>\n", MaxLength: 32768,
					Source: Source{Repo: "facebookresearch/ReasonIR", Path: "evaluation/bright/configs/reasonir/<task>.json", Commit: reasonIRCommit,
						Entry: "instructions.query with {task} replaced by the task's name, instructions.document; retrievers.py's default 32768 tokens"},
				},
			},
			Generic: Instruction{
				Query: "<|user|>\n" + webSearchTask + "\n<|embed|>\n", Doc: "<|embed|>\n",
				Source: Source{Repo: "QwenLM/Qwen3-Embedding", Path: "README.md", Commit: qwen3EmbedCommit, Entry: "the task of get_detailed_instruct's example",
					Derived: "in ReasonIR's '<|user|>\\n{}\\n<|embed|>\\n' prompt; ReasonIR's README instructs with \"\""},
			},
			Backends: []string{OpenAI}, BatchSize: 8, Reported: 27.94, ReportedBy: reasonEmbedTable3,
			Note: "its own bidirectional architecture and pooling (trust_remote_code, per its README): encode takes the instruction as a prompt; serve it with that encode behind an OpenAI-compatible route",
		},
		{
			Name: "rader-gte-qwen2-7b", Aliases: []string{"RaDeR-gte-Qwen2-7B", "rader", "RaDeR_gte_Qwen2-7B_MATH_LLMq_CoT_lexical"},
			HubID: "Raderspace/RaDeR_gte_Qwen2-7B_MATH_LLMq_CoT_lexical", Pooling: LastToken, MaxLength: 512, Normalize: true,
			Tables: []Table{
				r2medTable("ReasonEmbed/evaluation_r2med/scripts/baselines/eval_rader_gte_qwen2_7b.sh", agenticR2MEDCode),
				{
					Benchmark: BenchBRIGHT, Query: brightEach("query: Instruct: {}\nQuery: "), Doc: "document: ",
					Source: Source{Repo: "Debrup-61/RaDeR", Path: "BRIGHT_configs/configs/trained_model/<task>.json", Commit: raderCommit,
						Entry: "instructions.query with {task} replaced, inside retrievers.py's retrieval_trainedmodel texts 'query: {text}' and 'document: {text}', each followed by the tokenizer's EOS"},
				},
			},
			Generic:  qwenGeneric,
			Backends: serverOnly, BatchSize: 256, Reported: 35.19, ReportedBy: reasonEmbedTable3,
			Note: "RaDeR's own BRIGHT code appends the tokenizer's EOS to every text and cuts nothing; a server must do the same",
		},
		{
			Name: "diver-retriever-4b", Aliases: []string{"DIVER-Retriever", "diver-retriever", "Diver-Retriever-4B"},
			HubID: "AQ-MedAI/Diver-Retriever-4B", Pooling: LastToken, MaxLength: 512, Normalize: true,
			Tables: []Table{
				r2medTable("ReasonEmbed/evaluation_r2med/scripts/baselines/eval_diver_retriever_4b.sh", agenticR2MEDCode),
				{Benchmark: BenchBRIGHT, Query: diverTask, Doc: diverBRIGHT.Doc, Source: diverBRIGHT.Source, MaxLength: 16384},
			},
			Generic:  diverBRIGHT,
			Backends: serverOnly, BatchSize: 256, Reported: 32.23, ReportedBy: reasonEmbedTable3,
			Note: "DIVER's BRIGHT code (Qwen3EmbeddingModel on vLLM, 16384 tokens) instructs every task alike and prefixes documents with 'Represent this text:'",
		},
		qwen3("0.6b", 0, false),
		qwen3("4b", 31.75, true),
		qwen3("8b", 34.22, true),
		{
			Name: "gte-qwen2-7b", Aliases: []string{"gte-Qwen2-7B-instruct"},
			HubID: "Alibaba-NLP/gte-Qwen2-7B-instruct", Pooling: LastToken, MaxLength: 512, Normalize: true,
			Tables: []Table{
				func() Table {
					t := r2medTable("ReasonEmbed/evaluation_r2med/scripts/baselines/eval_qwen3_embedding_8b.sh", agenticR2MEDCode)
					t.Source.Derived = "ReasonEmbed publishes no script for gte-Qwen2-7B-instruct; the one its other decoder baselines share"
					return t
				}(),
				{
					Benchmark: BenchBRIGHT, Query: brightEach("Instruct: {}\nQuery: "), MaxLength: 8192,
					Source: Source{Repo: "xlang-ai/BRIGHT", Path: "configs/qwen2/<task>.json", Commit: brightCommit,
						Entry: "instructions.query with {task} replaced; retrievers.py retrieval_sf_qwen_e5: 8192 tokens, last token, normalized"},
				},
			},
			Generic:  qwenGeneric,
			Backends: serverOnly, BatchSize: 256, Reported: 32.56, ReportedBy: reasonEmbedTable3,
		},
	}
}()

const reasonEmbedTable3 = "ReasonEmbed Table 3 (arXiv 2510.08252)"
