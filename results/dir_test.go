package results

import "testing"

// TestDirName: a system's directory is one name a shell takes as it is:
// no brackets, commas, colons, spaces, slashes or quotes, nothing that
// starts like a flag or a hidden file; the arrows between stages stay,
// without their spaces, as in run tags.
func TestDirName(t *testing.T) {
	for in, want := range map[string]string{
		"bm25":                                "bm25",
		"rrf(bm25,bge)":                       "rrf_bm25_bge",
		"rrf(bm25,run:bm25)":                  "rrf_bm25_run_bm25",
		"rrf(bm25,run:run.trec)":              "rrf_bm25_run_run.trec",
		"bm25 → insertrank:deepseek-r1@20":    "bm25→insertrank_deepseek-r1@20",
		"hyde/gpt4 → bm25":                    "hyde_gpt4→bm25",
		"hyde/gpt4 → rrf(bm25,bge) → tei@10":  "hyde_gpt4→rrf_bm25_bge→tei@10",
		"bm25→tei@10":                         "bm25→tei@10",
		"bm25 #3f2a":                          "bm25_3f2a",
		"bm25 [k1=1.2 b=0.75]":                "bm25_k1=1.2_b=0.75",
		"combsum(bm25-lucene,nv) → tei@top10": "combsum_bm25-lucene_nv→tei@top10",
		"dense+bm25 / mine":                   "dense+bm25_mine",
		"run:<tag>":                           "run_tag",
		"-rf":                                 "rf",
		"..":                                  "_",
		" .. ":                                "_",
		"":                                    "_",
		`a\b"c*d?e|f`:                         "a_b_c_d_e_f",
		"médecine 医学":                         "médecine_医学",
		"MedQA-Diag":                          "MedQA-Diag",
	} {
		if got := DirName(in); got != want {
			t.Errorf("DirName(%q) = %q, want %q", in, got, want)
		}
	}
}
