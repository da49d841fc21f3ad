package tasks

// BRIGHT (Su et al. 2024, arXiv 2407.12883; ICLR 2025) is R2MED's sibling
// benchmark: 12 tasks, each a split of one Hugging Face repository,
// xlangai/BRIGHT, whose configs hold every task's queries ("examples":
// id, query, reasoning, gold_ids, gold_ids_long, excluded_ids,
// gold_answer), documents ("documents": id, content), the complete web
// pages they were cut from ("long_documents", for the seven StackExchange
// tasks and Pony only) and LLM reasoning about each query
// ("<llm>_reason", e.g. gpt4_reason). Names and order are BRIGHT's (run.py
// --task; the paper's tables), families its three groups.
//
// Sizes are counted from the data by MTEB (mteb/descriptive_stats:
// BrightRetrieval.json and BrightLongRetrieval.json), not the paper's
// table, which predates later fixes (Earth Science lists 118 queries, the
// data has 116). TheoremQA-Questions has 205 queries, one of them with no
// gold document: it is evaluated, every measure 0, and counts in the mean,
// as BRIGHT's run.py (through pytrec_eval) counts it. The sources are
// recorded in testdata/bright-sources.md.

// BRIGHT's families, as its paper groups the tasks.
const (
	StackExchange Family = "stackexchange"
	Coding        Family = "coding"
	TheoremBased  Family = "theorem-based"
)

// BrightRepo is BRIGHT's repository; BrightRevision the commit pinned for
// it, the one MTEB's per-task BRIGHT tasks (bright_v1_1_retrieval.py)
// pinned from their start (mteb PR 3285) until mteb PR 4144 (2026-02-24)
// moved them to MTEB's own copy (mteb.BrightRepo). MTEB's older
// BrightRetrieval and BrightLongRetrieval pin BrightOlderRevision.
const (
	BrightRepo          = "xlangai/BRIGHT"
	BrightRevision      = "3066d29c9651a576c8aba4832d249807b181ecae"
	BrightOlderRevision = "a75a0eb483f6a5233a6efc2d63d71540a4443dfb"
)

func brightTask(name, mteb string, f Family, short, long Size, aliases ...string) Task {
	return Task{
		Name: name, Family: f, Suite: Bright,
		Repo: BrightRepo, Revision: BrightRevision,
		Older: []Revision{{Commit: BrightOlderRevision, Note: "pinned by MTEB's BrightRetrieval and BrightLongRetrieval"}},
		Size:  short, LongSize: long, MTEBName: mteb, aliases: aliases,
	}
}

// sharing is t searching the corpus of task owner: theoremqa_questions
// searches aops's STEM problems (BRIGHT's data card lists one corpus of
// 188,177 documents for AoPS and TheoremQA; MTEB counts 188,002 in both
// tasks), which a suite's total counts once.
func sharing(owner string, t Task) Task {
	t.CorpusOf = owner
	return t
}

var bright = []Task{
	brightTask("biology", "BrightBiologyRetrieval", StackExchange,
		Size{Queries: 103, Documents: 57359, PositiveQrels: 374}, Size{Queries: 103, Documents: 524, PositiveQrels: 134}, "bio"),
	brightTask("earth_science", "BrightEarthScienceRetrieval", StackExchange,
		Size{Queries: 116, Documents: 121249, PositiveQrels: 609}, Size{Queries: 116, Documents: 601, PositiveQrels: 187}, "earth"),
	brightTask("economics", "BrightEconomicsRetrieval", StackExchange,
		Size{Queries: 103, Documents: 50220, PositiveQrels: 823}, Size{Queries: 103, Documents: 516, PositiveQrels: 109}, "econ"),
	brightTask("psychology", "BrightPsychologyRetrieval", StackExchange,
		Size{Queries: 101, Documents: 52835, PositiveQrels: 742}, Size{Queries: 101, Documents: 512, PositiveQrels: 116}, "psy"),
	brightTask("robotics", "BrightRoboticsRetrieval", StackExchange,
		Size{Queries: 101, Documents: 61961, PositiveQrels: 553}, Size{Queries: 101, Documents: 508, PositiveQrels: 106}, "rob"),
	brightTask("stackoverflow", "BrightStackoverflowRetrieval", StackExchange,
		Size{Queries: 117, Documents: 107081, PositiveQrels: 819}, Size{Queries: 117, Documents: 1858, PositiveQrels: 129}, "stack"),
	brightTask("sustainable_living", "BrightSustainableLivingRetrieval", StackExchange,
		Size{Queries: 108, Documents: 60792, PositiveQrels: 604}, Size{Queries: 108, Documents: 554, PositiveQrels: 129}, "sus"),
	brightTask("leetcode", "BrightLeetcodeRetrieval", Coding,
		Size{Queries: 142, Documents: 413932, PositiveQrels: 262}, Size{}, "leet"),
	brightTask("pony", "BrightPonyRetrieval", Coding,
		Size{Queries: 112, Documents: 7894, PositiveQrels: 2519}, Size{Queries: 112, Documents: 577, PositiveQrels: 769}),
	brightTask("aops", "BrightAopsRetrieval", TheoremBased,
		Size{Queries: 111, Documents: 188002, PositiveQrels: 524}, Size{}),
	sharing("aops", brightTask("theoremqa_questions", "BrightTheoremQAQuestionsRetrieval", TheoremBased,
		Size{Queries: 205, Documents: 188002, PositiveQrels: 469}, Size{}, "theoq")),
	brightTask("theoremqa_theorems", "BrightTheoremQATheoremsRetrieval", TheoremBased,
		Size{Queries: 65, Documents: 23839, PositiveQrels: 126}, Size{}, "theot"),
}

// brightKey maps BRIGHT's spellings, folded, to their task's index.
var brightKey = func() map[string]int {
	m := make(map[string]int)
	for i, t := range bright {
		for _, name := range t.Names() {
			k := fold(name)
			if j, dup := m[k]; dup && j != i {
				panic("tasks: " + name + " names two BRIGHT tasks")
			}
			m[k] = i
		}
	}
	return m
}()

// BrightPrefix starts the name a BRIGHT task's data carries (NameIn), so
// that BRIGHT's biology and R2MED's Biology never share a name in results.
const BrightPrefix = "BRIGHT-"

// LongSuffix ends the name of a task's data in the long-document setting.
const LongSuffix = "-long"
