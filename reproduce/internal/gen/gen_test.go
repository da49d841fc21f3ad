package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/reproduce"
)

const shared = "../../../../shared/data"

func needShared(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared reference data not found at %s but R2MED_CI=1: %v", shared, err)
		}
		t.Skipf("shared reference data not found at %s: %v", shared, err)
	}
}

// TestSpecsAreFresh regenerates the specs from the data they cite and
// requires the committed ones byte for byte, with none missing or extra.
func TestSpecsAreFresh(t *testing.T) {
	needShared(t)
	files, err := Generate(shared, Registry)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", reproduce.SpecsDir)
	var committed []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		committed = append(committed, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range committed {
		want, ok := files[name]
		if !ok {
			t.Errorf("%s is committed but no longer generated; run go generate ./reproduce", name)
			continue
		}
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s differs from what the generator writes; run go generate ./reproduce", name)
		}
	}
	for name := range files {
		if !slices.Contains(committed, name) {
			t.Errorf("%s is generated but not committed; run go generate ./reproduce", name)
		}
	}
	if len(files) < 75 {
		t.Errorf("%d specs generated; want R2MED's 71, 3 NanoR2MED and the NFCorpus reference at least", len(files))
	}
}

// TestExternalRowsWithRecipe: a later paper's row gets a spec once the
// registry has a recipe for its model, with the printed values; R2MED's
// own rows repeated in that paper do not.
func TestExternalRowsWithRecipe(t *testing.T) {
	qwen := models.Model{Name: "qwen3-embedding-8b", HubID: "Qwen/Qwen3-Embedding-8B", Backends: []string{models.OpenAI, models.TEI}}
	lookup := func(name string) (models.Model, bool) {
		switch name {
		case "Qwen3-Embedding-8B":
			return qwen, true
		case "GritLM-7B", "NV-Embed-v2": // R2MED's rows, which the registry knows
			return models.Lookup(name)
		}
		return models.Model{}, false // a registry without the later papers' models
	}
	specs, err := externalSpecs(lookup)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range specs {
		names = append(names, n)
	}
	if len(names) != 1 || names[0] != "external/qwen3-embedding-8b" {
		t.Fatalf("external specs %v; want only external/qwen3-embedding-8b (GritLM-7B and NV-Embed-v2 are R2MED's rows)", names)
	}
	b, err := specs[names[0]].encode()
	if err != nil {
		t.Fatal(err)
	}
	s, err := reproduce.Parse(names[0], b)
	if err != nil {
		t.Fatal(err)
	}
	// ReasonEmbed's Table 3 prints Qwen3-Embedding-8B at 21.37 on Biology
	// and 23.60 on IIYi-Clinical.
	bio, _ := s.Expected.Task("Biology")
	iiyi, _ := s.Expected.Task("IIYi-Clinical")
	if bio.Scores["ndcg_at_10"] != 0.2137 || iiyi.Scores["ndcg_at_10"] != 0.236 || !strings.HasPrefix(bio.Source, "reasonembed-table3.csv:") {
		t.Errorf("expected %+v, %+v", bio, iiyi)
	}
	if s.Source.Kind != reproduce.SourceExternal || s.Expected.Tolerance != closeTol || len(s.Needs.Servers) != 1 || !strings.Contains(s.Title, "ReasonEmbed authors") {
		t.Errorf("spec %+v", s)
	}
	if !strings.Contains(string(b), "- dense: {model: qwen3-embedding-8b}") {
		t.Errorf("pipeline does not run the registry's model:\n%s", b)
	}
}
