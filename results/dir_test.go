package results

import "testing"

func TestDirName(t *testing.T) {
	for name, want := range map[string]string{
		"bm25":                             "bm25",
		"rrf(bm25,bge)":                    "rrf(bm25,bge)",
		"hyde/gpt4 → bm25":                 "hyde_gpt4→bm25",
		"bm25 → insertrank:deepseek-r1@20": "bm25→insertrank_deepseek-r1@20",
		"dense+bm25 / mine":                "dense+bm25 _ mine",
		" .. ":                             "_",
	} {
		if got := DirName(name); got != want {
			t.Errorf("DirName(%q) = %q, want %q", name, got, want)
		}
	}
}
