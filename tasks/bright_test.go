package tasks

import (
	"reflect"
	"strings"
	"testing"
)

var brightOrder = []string{"biology", "earth_science", "economics", "psychology", "robotics", "stackoverflow",
	"sustainable_living", "leetcode", "pony", "aops", "theoremqa_questions", "theoremqa_theorems"}

func TestBrightSuites(t *testing.T) {
	ts := Bright.Tasks()
	var got []string
	families := map[Family][]string{}
	for _, task := range ts {
		got = append(got, task.Name)
		families[task.Family] = append(families[task.Family], task.Name)
		if task.Suite != Bright || task.Repo != BrightRepo || task.Revision != BrightRevision || len(task.Older) != 1 || task.Older[0].Commit != BrightOlderRevision {
			t.Errorf("%s: suite %s, %s@%s, older %+v", task.Name, task.Suite, task.Repo, task.Revision, task.Older)
		}
		if task.HubURI(Bright) != "hf://datasets/xlangai/BRIGHT@"+BrightRevision || task.HubURI(BrightLong) != task.HubURI(Bright) {
			t.Errorf("%s: %s", task.Name, task.HubURI(Bright))
		}
		if task.Size.Queries == 0 || task.Size.Documents == 0 || task.Size.PositiveQrels == 0 || task.SizeIn(Bright) != task.Size || task.SizeIn(BrightLong) != task.LongSize {
			t.Errorf("%s: sizes %+v %+v", task.Name, task.Size, task.LongSize)
		}
		if task.LongSize.Documents > 0 && task.LongSize.Queries != task.Size.Queries {
			t.Errorf("%s: the long setting keeps the queries: %+v", task.Name, task.LongSize)
		}
		if !strings.HasPrefix(task.MTEBName, "Bright") || !strings.HasSuffix(task.MTEBName, "Retrieval") {
			t.Errorf("%s: MTEB name %q", task.Name, task.MTEBName)
		}
	}
	queries := 0
	for _, task := range ts {
		queries += task.Size.Queries
	}
	if queries != 1384 {
		t.Errorf("%d queries in all; the pinned snapshot has 1,384 (testdata/bright-sources.md)", queries)
	}
	if !reflect.DeepEqual(got, brightOrder) {
		t.Errorf("BRIGHT's tasks %v", got)
	}
	if want := map[Family][]string{
		StackExchange: brightOrder[:7], Coding: {"leetcode", "pony"}, TheoremBased: {"aops", "theoremqa_questions", "theoremqa_theorems"},
	}; !reflect.DeepEqual(families, want) {
		t.Errorf("families %v", families)
	}
	var long []string
	for _, task := range BrightLong.Tasks() {
		long = append(long, task.Name)
	}
	// BRIGHT's card: long_documents is "not applicable to theoremqa/aops/leetcode".
	if want := append(append([]string{}, brightOrder[:7]...), "pony"); !reflect.DeepEqual(long, want) {
		t.Errorf("long-document tasks %v", long)
	}
	if len(R2MED.Tasks()) != 8 || !reflect.DeepEqual(R2MED.Tasks(), Nano.Tasks()) || !reflect.DeepEqual(All(), R2MED.Tasks()) {
		t.Error("R2MED's and Nano's tasks")
	}
	for _, task := range All() {
		if task.Suite != R2MED {
			t.Errorf("%s: suite %q", task.Name, task.Suite)
		}
	}
	if StackExchange.Title() != "StackExchange" || TheoremBased.Title() != "Theorem-based" {
		t.Error("family titles")
	}
	ts[0].Older[0].Commit = "changed"
	if Bright.Tasks()[0].Older[0].Commit == "changed" {
		t.Error("Tasks hands out the registry itself")
	}
}

// TestSuiteTotal: a suite's documents count each corpus once. BRIGHT's
// data card (Dataset_documentation.md) lists one corpus of 188,177
// documents for AoPS and TheoremQA, so the twelve tasks search eleven
// corpora and the total is the tasks' documents without
// theoremqa_questions' (1,333,166 − 188,002), where the two were added;
// queries and judgments are the tasks' sums. A task sharing a corpus
// names a task of its suite with as many documents.
func TestSuiteTotal(t *testing.T) {
	for _, c := range []struct {
		suite   Suite
		corpora int
		shared  [][]string
		without string // the task whose documents are counted with another's
	}{
		{R2MED, 8, nil, ""}, {Nano, 8, nil, ""},
		{Bright, 11, [][]string{{"aops", "theoremqa_questions"}}, "theoremqa_questions"},
		{BrightLong, 8, nil, ""},
	} {
		var want Size
		for _, task := range c.suite.Tasks() {
			size := task.SizeIn(c.suite)
			want.Queries += size.Queries
			want.PositiveQrels += size.PositiveQrels
			if task.Name != c.without {
				want.Documents += size.Documents
			}
			if task.CorpusOf != "" {
				owner, err := LookupIn(c.suite, task.CorpusOf)
				if err != nil || owner.Name != task.CorpusOf || owner.SizeIn(c.suite).Documents != size.Documents {
					t.Errorf("%s: %s searches %s's corpus: %+v, %v", c.suite, task.Name, task.CorpusOf, owner.SizeIn(c.suite), err)
				}
			}
		}
		got := c.suite.Total()
		if got.Size != want || got.Corpora != c.corpora || !reflect.DeepEqual(got.Shared, c.shared) {
			t.Errorf("%s: total %+v, want %+v over %d corpora, shared %v", c.suite, got, want, c.corpora, c.shared)
		}
	}
	if tot := Bright.Total(); tot.Documents != 1145164 || tot.Note() != "documents of 11 corpora: aops and theoremqa_questions search one" {
		t.Errorf("BRIGHT's documents: %d (%s), want 1,145,164", tot.Documents, tot.Note())
	}
	if n := R2MED.Total().Note(); n != "" {
		t.Errorf("R2MED's note %q", n)
	}
}

func TestParseSuite(t *testing.T) {
	for in, want := range map[string]Suite{"r2med": R2MED, "NANO": Nano, " bright ": Bright, "Bright-Long": BrightLong} {
		if got, err := ParseSuite(in); err != nil || got != want {
			t.Errorf("ParseSuite(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseSuite("beir"); err == nil || !strings.Contains(err.Error(), `"bright-long"`) {
		t.Errorf("unknown suite: %v", err)
	}
	for s, b := range map[Suite]Suite{R2MED: R2MED, Nano: R2MED, Bright: Bright, BrightLong: Bright} {
		if s.Benchmark() != b {
			t.Errorf("%s.Benchmark() = %s", s, s.Benchmark())
		}
	}
}

func TestLookupIn(t *testing.T) {
	for _, c := range []struct {
		suite     Suite
		name, got string
	}{
		{Bright, "biology", "biology"},
		{Bright, "Earth Science", "earth_science"},
		{Bright, "earth-science", "earth_science"},
		{Bright, "BrightEarthScienceRetrieval", "earth_science"},
		{Bright, "BRIGHT-sustainable_living", "sustainable_living"},
		{Bright, "TheoQ", "theoremqa_questions"},
		{Bright, "theoremqa_theorems", "theoremqa_theorems"},
		{BrightLong, "pony", "pony"},
		{BrightLong, "BrightPonyLongRetrieval", "pony"},
		{BrightLong, "BrightEconomicsRetrieval", "economics"},
		{R2MED, "biology", "Biology"},
		{Nano, "NanoR2MEDBiology", "Biology"},
	} {
		task, err := LookupIn(c.suite, c.name)
		if err != nil || task.Name != c.got {
			t.Errorf("LookupIn(%s, %q) = %s, %v", c.suite, c.name, task.Name, err)
		}
	}
	if _, err := LookupIn(BrightLong, "leetcode"); err == nil || !strings.Contains(err.Error(), "no long documents") || !strings.Contains(err.Error(), "pony") {
		t.Errorf("leetcode has no long documents: %v", err)
	}
	if _, err := LookupIn(Bright, "BrightBiologyLongRetrieval"); err == nil || !strings.Contains(err.Error(), "long documents") || !strings.Contains(err.Error(), "bright-long") {
		t.Errorf("MTEB's long-document name in the short setting: %v", err)
	}
	if _, err := LookupIn(BrightLong, "BrightLeetcodeLongRetrieval"); err == nil {
		t.Error("a long-document name MTEB does not have (leetcode has no long documents) was taken")
	}
	if _, err := LookupIn(Bright, "MedQA-Diag"); err == nil || !strings.Contains(err.Error(), "unknown BRIGHT task") || !strings.Contains(err.Error(), "theoremqa_theorems") {
		t.Errorf("an R2MED name in BRIGHT: %v", err)
	}
	// R2MED's lookup is unchanged: BRIGHT's names are not R2MED's.
	if _, err := Lookup("BRIGHT-biology"); err == nil {
		t.Error("Lookup took BRIGHT's data name as an R2MED task")
	}
	ts, err := ExpandIn(Bright, "pony,biology", "all")
	if err != nil || len(ts) != 12 || ts[0].Name != "pony" || ts[1].Name != "biology" || ts[2].Name != "earth_science" {
		t.Errorf("ExpandIn: %v %v", ts, err)
	}
	if ts, err := ExpandIn(BrightLong, "all"); err != nil || len(ts) != 8 {
		t.Errorf("ExpandIn long: %d %v", len(ts), err)
	}
}

func TestNameInResolve(t *testing.T) {
	bio, _ := LookupIn(Bright, "biology")
	r2, _ := Lookup("Biology")
	for _, c := range []struct {
		task  Task
		suite Suite
		name  string
	}{
		{bio, Bright, "BRIGHT-biology"},
		{bio, BrightLong, "BRIGHT-biology-long"},
		{r2, R2MED, "Biology"},
		{r2, Nano, "NanoR2MEDBiology"},
	} {
		if got := c.task.NameIn(c.suite); got != c.name {
			t.Errorf("%s in %s: %q, want %q", c.task.Name, c.suite, got, c.name)
		}
		task, suite, err := Resolve(c.name)
		if err != nil || task.Name != c.task.Name || suite != c.suite {
			t.Errorf("Resolve(%q) = %s %s %v", c.name, task.Name, suite, err)
		}
	}
	for name, want := range map[string]string{"bright_earth_science": "earth_science", "BrightPonyRetrieval": "pony", "biology": "Biology"} {
		if task, _, err := Resolve(name); err != nil || task.Name != want {
			t.Errorf("Resolve(%q) = %s %v", name, task.Name, err)
		}
	}
	if task, suite, err := Resolve("BrightEarthScienceLongRetrieval"); err != nil || task.Name != "earth_science" || suite != BrightLong {
		t.Errorf("Resolve of MTEB's long-document name = %s %s %v, want earth_science in %s", task.Name, suite, err, BrightLong)
	}
	for _, bad := range []string{"BRIGHT-leetcode-long", "BRIGHT-nothing", "BRIGHT"} {
		if _, _, err := Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) succeeded", bad)
		}
	}
}
