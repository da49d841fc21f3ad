package tasks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/r2med/r2med/taskstats"
)

var r2medOrder = []string{"Biology", "Bioinformatics", "Medical-Sciences", "MedXpertQA-Exam", "MedQA-Diag", "PMC-Treatment", "PMC-Clinical", "IIYi-Clinical"}

func TestAll(t *testing.T) {
	ts := All()
	if len(ts) != len(r2medOrder) {
		t.Fatalf("%d tasks", len(ts))
	}
	commit := regexp.MustCompile(`^[0-9a-f]{40}$`)
	families := map[Family][]string{}
	queries := 0
	for i, task := range ts {
		if task.Name != r2medOrder[i] {
			t.Errorf("task %d is %s, want %s", i, task.Name, r2medOrder[i])
		}
		if task.Repo != "R2MED/"+task.Name || !commit.MatchString(task.Revision) {
			t.Errorf("%s: repo %q at %q", task.Name, task.Repo, task.Revision)
		}
		for _, o := range task.Older {
			if !commit.MatchString(o.Commit) || o.Note == "" {
				t.Errorf("%s: older revision %+v", task.Name, o)
			}
		}
		if task.NanoSplit != "NanoR2MED"+strings.ReplaceAll(task.Name, "-", "") {
			t.Errorf("%s: Nano split %q", task.Name, task.NanoSplit)
		}
		// NanoR2MED keeps every query (R2MED tasks have at most 150 of the
		// 200 a Nano set takes) and cuts the corpus to 10,000 documents.
		if task.NanoSize.Queries != task.Size.Queries || task.NanoSize.Documents != min(10000, task.Size.Documents) {
			t.Errorf("%s: Nano size %+v against %+v", task.Name, task.NanoSize, task.Size)
		}
		families[task.Family] = append(families[task.Family], task.Name)
		queries += task.Size.Queries
	}
	if queries != 876 {
		t.Errorf("%d queries in all, the paper says 876", queries)
	}
	want := map[Family][]string{
		QAReference:      {"Biology", "Bioinformatics", "Medical-Sciences"},
		ClinicalEvidence: {"MedXpertQA-Exam", "MedQA-Diag", "PMC-Treatment"},
		ClinicalCase:     {"PMC-Clinical", "IIYi-Clinical"},
	}
	if !reflect.DeepEqual(families, want) {
		t.Errorf("families %v", families)
	}
	if QAReference.Title() != "Q&A reference retrieval" || Family("x").Title() != "x" {
		t.Error("family titles")
	}
	ts[2].Older[0].Commit = "changed"
	ts[0].Name = "changed"
	if again := All(); again[2].Older[0].Commit == "changed" || again[0].Name == "changed" {
		t.Error("All hands out the registry itself")
	}
	med, _ := Lookup("Medical-Sciences")
	if len(med.Older) != 1 || med.Older[0].Commit != "7f11654e9aed0c6fa99784641c8880f87ad62930" || med.Revision != "1b48911514c80bf9182222d99752ad75e23b4b47" {
		t.Errorf("Medical-Sciences revisions %q, %+v", med.Revision, med.Older)
	}
}

func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"MedQA-Diag":           "MedQA-Diag",
		"medqa-diag":           "MedQA-Diag",
		"MedQADiag":            "MedQA-Diag",
		" medqa_diag ":         "MedQA-Diag",
		"NanoR2MEDMedQADiag":   "MedQA-Diag",
		"nanor2med-medqa-diag": "MedQA-Diag",
		"Stack-Biology":        "Biology",
		"stack-bioinformatics": "Bioinformatics",
		"Stack-Medical":        "Medical-Sciences",
		"MedicalSciences":      "Medical-Sciences",
		"PMC-Treat":            "PMC-Treatment",
		"PMCPatients":          "PMC-Clinical",
		"IIYiPatients-EN":      "IIYi-Clinical",
		"iiyi clinical":        "IIYi-Clinical",
		"MEDXPERTQAEXAM":       "MedXpertQA-Exam",
	} {
		task, err := Lookup(name)
		if err != nil || task.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %s", name, task.Name, err, want)
		}
	}
	for _, bad := range []string{"", "--", "all", "PMC", "Biology2", "NanoR2MED"} {
		_, err := Lookup(bad)
		if err == nil {
			t.Errorf("Lookup(%q) found a task", bad)
			continue
		}
		want := `unknown R2MED task "` + bad + `"; the tasks are Biology, Bioinformatics, Medical-Sciences, MedXpertQA-Exam, MedQA-Diag, PMC-Treatment, PMC-Clinical, IIYi-Clinical (or "all")`
		if err.Error() != want {
			t.Errorf("Lookup(%q): %v", bad, err)
		}
	}
}

func TestExpand(t *testing.T) {
	got, err := Expand("all")
	if err != nil || len(got) != 8 {
		t.Fatalf("Expand(all): %d, %v", len(got), err)
	}
	for i, task := range got {
		if task.Name != r2medOrder[i] {
			t.Errorf("all[%d] = %s", i, task.Name)
		}
	}
	got, err = Expand("pmc-clinical, Biology", "biology", "ALL")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, task := range got {
		names = append(names, task.Name)
	}
	if strings.Join(names, " ") != "PMC-Clinical Biology Bioinformatics Medical-Sciences MedXpertQA-Exam MedQA-Diag PMC-Treatment IIYi-Clinical" {
		t.Errorf("order %v", names)
	}
	if _, err := Expand("Biology,nope"); err == nil || !strings.Contains(err.Error(), `unknown R2MED task "nope"`) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := Expand(" , "); err == nil || !strings.HasPrefix(err.Error(), "no task named") {
		t.Errorf("nothing named: %v", err)
	}
}

func TestHub(t *testing.T) {
	task, _ := Lookup("MedQA-Diag")
	if got := task.HubURI(R2MED); got != "hf://datasets/R2MED/MedQA-Diag@78b585990279cc01a493f876c1b0cf09557fba57" {
		t.Errorf("R2MED URI %s", got)
	}
	if got := task.HubURI(Nano); got != "hf://datasets/hakari-bench/NanoR2MED@main" {
		t.Errorf("Nano URI %s", got)
	}
	if task.SizeIn(Nano).PositiveQrels != 522 || task.SizeIn(R2MED).Documents != 56250 {
		t.Errorf("sizes %+v %+v", task.SizeIn(Nano), task.SizeIn(R2MED))
	}
	for in, want := range map[string]Suite{"r2med": R2MED, " NANO ": Nano} {
		if s, err := ParseSuite(in); err != nil || s != want {
			t.Errorf("ParseSuite(%q) = %q, %v", in, s, err)
		}
	}
	if _, err := ParseSuite("beir"); err == nil {
		t.Error("ParseSuite took beir")
	}
}

// TestNanoSizesMatchCards reads HAKARI-Bench's NanoR2MED task cards and its
// hub config from the shared data.
func TestNanoSizesMatchCards(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "nanor2med-metadata")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data %s is not available (%v)", dir, err)
	}
	for _, task := range All() {
		data, err := os.ReadFile(filepath.Join(dir, task.NanoSplit+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			TaskMetadata struct {
				DatasetID string `json:"dataset_id"`
				SplitName string `json:"split_name"`
				Counts    struct {
					Queries, Documents int
					PositiveQrels      int `json:"positive_qrels"`
				}
				CandidateSubsets map[string]struct {
					Config string
					TopK   int `json:"top_k"`
				} `json:"candidate_subsets"`
			} `json:"task_metadata"`
		}
		if err := json.Unmarshal(data, &card); err != nil {
			t.Fatal(err)
		}
		m := card.TaskMetadata
		if m.DatasetID != NanoRepo || m.SplitName != task.NanoSplit {
			t.Errorf("%s: card of %s/%s", task.Name, m.DatasetID, m.SplitName)
		}
		if got := (Size{m.Counts.Queries, m.Counts.Documents, m.Counts.PositiveQrels}); got != task.NanoSize {
			t.Errorf("%s: card says %+v, registry %+v", task.Name, got, task.NanoSize)
		}
		// The card metrics' subsets are the ones dataset scores by default.
		for _, sub := range taskstats.NanoR2MEDCandidates {
			c, ok := m.CandidateSubsets[sub.Name]
			if !ok || c.Config != sub.Config || c.TopK != sub.TopK {
				t.Errorf("%s: card subset %s is %+v, dataset has %+v", task.Name, sub.Name, c, sub)
			}
		}
	}
	yml, err := os.ReadFile(filepath.Join(dir, "nanor2med.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range All() {
		if !strings.Contains(string(yml), "\n- "+task.NanoSplit+"\n") {
			t.Errorf("nanor2med.yaml does not list %s", task.NanoSplit)
		}
	}
	if !strings.Contains(string(yml), "dataset_id: "+NanoRepo+"\n") {
		t.Error("nanor2med.yaml names another repository")
	}
}
