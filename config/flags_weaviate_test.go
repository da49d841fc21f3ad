package config

import (
	"reflect"
	"testing"

	// The weaviate kind registers itself when imported, as r2med's does;
	// its flags (and --model's reach to it, TestFlagsOverlayFile) come
	// with it.
	_ "github.com/r2med/r2med/retrieve/weaviatekind"
)

// TestFlagsWeaviate: --retriever weaviate:SEARCH is a mapping the weaviate
// flags fill, and the dense flags set the model of the dense and the
// weaviate entries alike (one embedding model for both).
func TestFlagsWeaviate(t *testing.T) {
	byFlags, err := flagConfig(t, "", "--retriever", "dense,weaviate:hybrid", "--model", "bge", "--backend", "openai",
		"--weaviate-url", "http://search:8080", "--collection", "Biology", "--alpha", "0.5", "--fusion", "rankedFusion",
		"--ef", "64", "--check-exact")
	if err != nil {
		t.Fatal(err)
	}
	byFile, err := ParseFile([]byte(`retrieve:
  - dense: {model: bge, backend: openai}
  - weaviate: {search: hybrid, url: "http://search:8080", collection: Biology, alpha: 0.5, fusion: rankedFusion, model: bge, backend: openai, ef: 64, check_exact: true}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byFlags, byFile) {
		t.Errorf("flags %+v\nfile  %+v", byFlags, byFile)
	}
	if got := byFlags.Retrievers[1].Name(); got != "weaviate:hybrid+bge" {
		t.Errorf("name %q", got)
	}
	if _, err := flagConfig(t, "", "--retriever", "weaviate:bm25", "--collection", "X"); err == nil {
		t.Error("a weaviate retriever without --weaviate-url validated")
	}
	if d := byFlags.Retrievers[1].Describe(); d["ef"] != 64 || d["check_exact"] != true {
		t.Errorf("ef and check_exact are not in the description (the manifest, the fingerprint): %v", d)
	}
	if _, err := flagConfig(t, "", "--retriever", "weaviate:vector", "--weaviate-url", "http://search:8080", "--collection", "X", "--model", "bge", "--ef", "0"); err == nil {
		t.Error("ef 0 validated")
	}
}
