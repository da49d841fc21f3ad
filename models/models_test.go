package models

import (
	"strings"
	"testing"

	"github.com/r2med/r2med/embed"
)

// See sources_test.go for the instructions, checked against the sources.

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
