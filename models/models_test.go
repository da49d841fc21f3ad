package models

import (
	"strings"
	"testing"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/tasks"
)

// The expected instructions are R2MED's instruction table (src/
// instrcution.py, dicts e5_q, bmr_q, grit, inst_q, inst_d) as the
// reference notes (§1.4) give it, written out here for every task under
// its old key's new name.
var (
	e5Want = map[string]string{
		"Biology":          "Instruct: Given a Biology post, retrieve relevant passages that help answer the post\nQuery: ",
		"Medical-Sciences": "Instruct: Given a Medical Science post, retrieve relevant passages that help answer the post\nQuery: ",
		"Bioinformatics":   "Instruct: Given a Bioinformatics post, retrieve relevant passages that help answer the post\nQuery: ",
		"MedXpertQA-Exam":  "Instruct: Given a Medical Exam, retrieve relevant passages that help answer the exam\nQuery: ",
		"MedQA-Diag":       "Instruct: Given a Medical Exam, retrieve relevant passages that help answer the exam\nQuery: ",
		"PMC-Treatment":    "Instruct: Given a Clinical Case, retrieve relevant passages that help answer the case\nQuery: ",
		"PMC-Clinical":     "Instruct: Given a Clinical Case, retrieve similar cases that help diagnose the case\nQuery: ",
		"IIYi-Clinical":    "Instruct: Given a Clinical Case, retrieve similar cases that help diagnose the case\nQuery: ",
	}
	bmrWant = map[string]string{
		"Biology":          "Given a Biology post, retrieve relevant passages that help answer the post\nQuery: ",
		"Medical-Sciences": "Given a Medical Science post, retrieve relevant passages that help answer the post\nQuery: ",
		"Bioinformatics":   "Given a Bioinformatics post, retrieve relevant passages that help answer the post\nQuery: ",
		"MedXpertQA-Exam":  "Given a Medical Exam, retrieve relevant passages that help answer the exam\nQuery: ",
		"MedQA-Diag":       "Given a Medical Exam, retrieve relevant passages that help answer the exam\nQuery: ",
		"PMC-Treatment":    "Given a Clinical Case, retrieve relevant passages that help answer the case\nQuery: ",
		"PMC-Clinical":     "Given a Clinical Case, retrieve similar cases that help diagnose the case\nQuery: ",
		"IIYi-Clinical":    "Given a Clinical Case, retrieve similar cases that help diagnose the case\nQuery: ",
	}
	gritWant = map[string]string{
		"Biology":          "<|user|>\nGiven a Biology post, retrieve relevant passages that help answer the post\n<|embed|>\n",
		"Medical-Sciences": "<|user|>\nGiven a Medical Science post, retrieve relevant passages that help answer the post\n<|embed|>\n",
		"Bioinformatics":   "<|user|>\nGiven a Bioinformatics post, retrieve relevant passages that help answer the post\n<|embed|>\n",
		"MedXpertQA-Exam":  "<|user|>\nGiven a Medical Exam, retrieve relevant passages that help answer the exam\n<|embed|>\n",
		"MedQA-Diag":       "<|user|>\nGiven a Medical Exam, retrieve relevant passages that help answer the exam\n<|embed|>\n",
		"PMC-Treatment":    "<|user|>\nGiven a Clinical Case, retrieve relevant passages that help answer the case\n<|embed|>\n",
		"PMC-Clinical":     "<|user|>\nGiven a Clinical Case, retrieve similar cases that help diagnose the case\n<|embed|>\n",
		"IIYi-Clinical":    "<|user|>\nGiven a Clinical Case, retrieve similar cases that help diagnose the case\n<|embed|>\n",
	}
	instQWant = map[string]string{
		"Biology":          "Represent the Biology post for retrieving relevant paragraphs: ",
		"Medical-Sciences": "Represent the Medical Science post for retrieving relevant paragraphs: ",
		"Bioinformatics":   "Represent the Bioinformatics post for retrieving relevant paragraphs: ",
		"MedXpertQA-Exam":  "Represent the Medical Exam for retrieving relevant paragraphs that help answer the exam: ",
		"MedQA-Diag":       "Represent the Medical Exam for retrieving relevant paragraphs that help answer the exam: ",
		"PMC-Treatment":    "Represent the Clinical Case for retrieving relevant paragraphs that help answer the case: ",
		"PMC-Clinical":     "Represent the Clinical Case for retrieving similar cases that help diagnose the case: ",
		"IIYi-Clinical":    "Represent the Clinical Case for retrieving similar cases that help diagnose the case: ",
	}
	instDWant = map[string]string{
		"Biology":          "Represent the Biology paragraph for retrieval: ",
		"Medical-Sciences": "Represent the Medical Science paragraph for retrieval: ",
		"Bioinformatics":   "Represent the Bioinformatics paragraph for retrieval: ",
		"MedXpertQA-Exam":  "Represent the Medical paragraph for retrieval: ",
		"MedQA-Diag":       "Represent the Medical paragraph for retrieval: ",
		"PMC-Treatment":    "Represent the Medical paragraph for retrieval: ",
		"PMC-Clinical":     "Represent the Clinical Case for retrieval: ",
		"IIYi-Clinical":    "Represent the Clinical Case for retrieval: ",
	}
)

func same(s string) map[string]string {
	m := make(map[string]string)
	for _, t := range tasks.All() {
		m[t.Name] = s
	}
	return m
}

func TestInstructionsEveryModelEveryTask(t *testing.T) {
	bmrDoc := same("Represent this passage\npassage: ")
	want := map[string][2]map[string]string{
		"contriever":   {same(""), same("")},
		"medcpt":       {same(""), same("")},
		"medcpt-r2med": {same(""), same("")},
		"bge":          {same("Represent this sentence for searching relevant passages: "), same("")},
		"inst-l":       {instQWant, instDWant},
		"inst-xl":      {instQWant, instDWant},
		"bmr-410m":     {bmrWant, bmrDoc},
		"bmr-2b":       {bmrWant, bmrDoc},
		"bmr-7b":       {bmrWant, bmrDoc},
		"e5":           {e5Want, same("")},
		"sfr":          {e5Want, same("")},
		"grit":         {gritWant, same("<|embed|>\n")},
		"nv":           {e5Want, same("")},
		"openai":       {same(""), same("")},
		"voyage":       {same(""), same("")},
	}
	if len(want) != len(All()) {
		t.Fatalf("the test covers %d models, the registry has %d", len(want), len(All()))
	}
	for _, m := range All() {
		w, ok := want[m.Name]
		if !ok {
			t.Errorf("no expected instructions for %s", m.Name)
			continue
		}
		for _, task := range tasks.All() {
			// Old names (R2MED's instruction keys) and Nano splits reach
			// the same wording.
			for _, name := range task.Names() {
				q, err := m.QueryInstruction(name)
				if err != nil || q != w[0][task.Name] {
					t.Errorf("%s query instruction for %s (as %q) = %q, %v; want %q", m.Name, task.Name, name, q, err, w[0][task.Name])
				}
				d, err := m.DocInstruction(name)
				if err != nil || d != w[1][task.Name] {
					t.Errorf("%s doc instruction for %s (as %q) = %q, %v; want %q", m.Name, task.Name, name, d, err, w[1][task.Name])
				}
			}
		}
	}
}

func TestOldNamesAreR2MEDKeys(t *testing.T) {
	// R2MED's instruction dicts are keyed by these; the wordings must be
	// reached through them.
	old := map[string]string{
		"Stack-Biology": "Biology", "Stack-Medical": "Medical-Sciences", "Stack-Bioinformatics": "Bioinformatics",
		"MedXpertQA-Exam": "MedXpertQA-Exam", "MedQA-Diag": "MedQA-Diag", "PMC-Treat": "PMC-Treatment",
		"PMCPatients": "PMC-Clinical", "IIYiPatients-EN": "IIYi-Clinical",
	}
	nv, _ := Lookup("nv")
	for key, task := range old {
		got, err := nv.QueryInstruction(key)
		if err != nil || got != e5Want[task] {
			t.Errorf("nv instruction for R2MED key %s = %q, %v; want %q", key, got, err, e5Want[task])
		}
	}
}

func TestUnknownTask(t *testing.T) {
	nv, _ := Lookup("nv")
	_, err := nv.QueryInstruction("demo")
	if err == nil || !strings.Contains(err.Error(), "--query-prefix") {
		t.Errorf("nv on an unknown task: %v", err)
	}
	if _, err := nv.DocInstruction("demo"); err != nil {
		t.Errorf("nv's document instruction does not depend on the task: %v", err)
	}
	bge, _ := Lookup("bge")
	if q, err := bge.QueryInstruction("demo"); err != nil || q == "" {
		t.Errorf("bge's prefix holds for any task: %q %v", q, err)
	}
}

func TestRecipes(t *testing.T) {
	cases := []struct {
		name            string
		query, doc      string // checkpoints per side
		pool            embed.Pooling
		qLen, dLen      int
		normalize       bool
		instructHyDoc   bool
		local           bool
		batch           int
		r2med           string
		ndcg            float64
		appendEOS, pair bool
	}{
		{"contriever", "facebook/contriever-msmarco", "facebook/contriever-msmarco", Mean, 512, 512, false, false, true, 512, "contriever", 11.76, false, false},
		{"medcpt", "ncbi/MedCPT-Query-Encoder", "ncbi/MedCPT-Article-Encoder", CLS, 512, 512, false, false, true, 512, "", 0, false, true},
		{"medcpt-r2med", "ncbi/MedCPT-Article-Encoder", "ncbi/MedCPT-Article-Encoder", CLS, 512, 512, false, false, true, 512, "medcpt", 7.87, false, true},
		{"bge", "BAAI/bge-large-en-v1.5", "BAAI/bge-large-en-v1.5", CLS, 512, 512, true, false, true, 512, "bge", 17.02, false, false},
		{"inst-l", "hkunlp/instructor-large", "hkunlp/instructor-large", Internal, 512, 512, true, true, false, 64, "inst-l", 16.21, false, false},
		{"inst-xl", "hkunlp/instructor-xl", "hkunlp/instructor-xl", Internal, 512, 512, true, true, false, 32, "inst-xl", 18.13, false, false},
		{"bmr-410m", "BMRetriever/BMRetriever-410M", "BMRetriever/BMRetriever-410M", LastToken, 512, 512, false, false, false, 32, "bmr-410m", 18.10, true, false},
		{"bmr-2b", "BMRetriever/BMRetriever-2B", "BMRetriever/BMRetriever-2B", LastToken, 1024, 1024, false, false, false, 32, "bmr-2b", 24.69, true, false},
		{"bmr-7b", "BMRetriever/BMRetriever-7B", "BMRetriever/BMRetriever-7B", LastToken, 2048, 2048, false, false, false, 64, "bmr-7b", 30.18, true, false},
		{"e5", "intfloat/e5-mistral-7b-instruct", "intfloat/e5-mistral-7b-instruct", LastToken, 2048, 2048, true, false, false, 32, "e5", 24.92, false, false},
		{"sfr", "Salesforce/SFR-Embedding-Mistral", "Salesforce/SFR-Embedding-Mistral", LastToken, 2048, 2048, true, false, false, 32, "sfr", 30.65, false, false},
		{"grit", "GritLM/GritLM-7B", "GritLM/GritLM-7B", Internal, 512, 2048, true, true, false, 64, "grit", 31.12, false, false},
		{"nv", "nvidia/NV-Embed-v2", "nvidia/NV-Embed-v2", Internal, 4096, 4096, true, true, false, 16, "nv", 31.43, false, false},
		{"openai", "text-embedding-3-large", "text-embedding-3-large", Internal, 6000, 6000, true, false, false, 64, "openai", 28.57, false, false},
		{"voyage", "voyage-3", "voyage-3", Internal, 16000, 16000, true, false, false, 64, "voyage", 27.34, false, false},
	}
	for _, c := range cases {
		m, ok := Lookup(c.name)
		if !ok {
			t.Errorf("%s not in the registry", c.name)
			continue
		}
		got := []any{m.CheckpointFor(embed.Query), m.CheckpointFor(embed.Document), m.Pooling, m.MaxLengthFor(embed.Query), m.MaxLengthFor(embed.Document),
			m.Normalize, m.InstructHyDoc(), m.Local(), m.BatchSize, m.R2MEDName, m.NDCG10, m.AppendEOS, m.DocAsPair}
		want := []any{c.query, c.doc, c.pool, c.qLen, c.dLen, c.normalize, c.instructHyDoc, c.local, c.batch, c.r2med, c.ndcg, c.appendEOS, c.pair}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s field %d = %v, want %v", c.name, i, got[i], want[i])
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"nv": "nv", "NV-Embed-v2": "nv", "nvidia/nv-embed-v2": "nv", " BGE ": "bge",
		"BAAI/bge-large-en-v1.5": "bge", "hkunlp/instructor-xl": "inst-xl",
		// The article encoder alone names the proper recipe, not R2MED's.
		"ncbi/MedCPT-Article-Encoder": "medcpt", "ncbi/MedCPT-Query-Encoder": "medcpt",
		"medcpt-r2med": "medcpt-r2med", "text-embedding-3-large": "openai", "voyage-3": "voyage",
	} {
		m, ok := Lookup(name)
		if !ok || m.Name != want {
			t.Errorf("Lookup(%q) = %s %v, want %s", name, m.Name, ok, want)
		}
	}
	if _, ok := Lookup("bm25"); ok {
		t.Error("bm25 is not a dense model")
	}
	if err := Unknown("x"); !strings.Contains(err.Error(), "nv") {
		t.Errorf("Unknown: %v", err)
	}
	// Lookup returns copies.
	m, _ := Lookup("nv")
	m.Aliases[0] = "changed"
	if again, _ := Lookup("nv"); again.Aliases[0] == "changed" {
		t.Error("Lookup shares the registry's slices")
	}
}

func TestIdentitiesDiffer(t *testing.T) {
	seen := make(map[string]string)
	for _, m := range All() {
		for _, b := range m.Backends {
			id := m.Identity(b, "")
			k := string(id.Key(embed.Query, "x"))
			if prev, dup := seen[k]; dup {
				t.Errorf("%s on %s has the cache identity of %s", m.Name, b, prev)
			}
			seen[k] = m.Name + "/" + b
		}
	}
	p, _ := Lookup("medcpt")
	r, _ := Lookup("medcpt-r2med")
	if p.Identity(ONNX, "").Model == r.Identity(ONNX, "").Model {
		t.Error("medcpt and medcpt-r2med share a cache label")
	}
}

func TestBackends(t *testing.T) {
	for _, m := range All() {
		if len(m.Backends) == 0 {
			t.Errorf("%s has no backend", m.Name)
		}
		for _, b := range m.Backends {
			switch b {
			case ONNX, OpenAI, TEI, Voyage:
			default:
				t.Errorf("%s: unknown backend %q", m.Name, b)
			}
		}
	}
	// INSTRUCTOR is a T5 encoder: our ONNX backend runs BERT-shaped ones.
	for _, n := range []string{"inst-l", "inst-xl", "e5", "nv", "grit", "bmr-7b"} {
		if m, _ := Lookup(n); m.Local() {
			t.Errorf("%s should be served over HTTP only", n)
		}
	}
}
