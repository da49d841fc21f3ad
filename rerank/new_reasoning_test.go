package rerank

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestNewReasoning(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	base := "http://localhost:8000/v1"
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "insertrank", BaseURL: base, Model: "r1", Scores: "percent", Decimals: 1, MaxTokens: 99}, "insertrank percent 1 99"},
		{Spec{Kind: "Rank1", BaseURL: base, Model: "r1", TextOnly: true, Concurrency: 3}, "rank1 true 3"},
		{Spec{Kind: "reasonrank", BaseURL: base, Model: "r1"}, "reasonrank"},
		{Spec{Kind: "rank1", BaseURL: base}, "needs the model name"},
		{Spec{Kind: "insertrank", BaseURL: base, Model: "r1", Scores: "zscore"}, `unknown InsertRank score scale "zscore"`},
		{Spec{Kind: "insertrank", BaseURL: base, Model: "r1", Decimals: -1}, "decimals must be positive"},
		{Spec{Kind: "reasonrank", BaseURL: "ftp://x", Model: "r1"}, "must start with http"},
	} {
		s, err := New(tc.spec)
		got := ""
		switch s := s.(type) {
		case *InsertRank:
			got = strings.Join([]string{"insertrank", string(s.Scores), strconv.Itoa(s.Decimals), strconv.Itoa(s.MaxTokens)}, " ")
		case *Rank1:
			got = "rank1 " + map[bool]string{true: "true", false: "false"}[s.TextOnly] + " " + strconv.Itoa(s.Concurrency)
		case *ReasonRank:
			got = "reasonrank"
		}
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.spec, got, tc.want)
		}
	}
	for kind, want := range map[string]bool{"insertrank": true, "RANK1": true, "reasonrank": true, "llm-listwise": true, "tei": false, "onnx": false} {
		if UsesLLM(kind) != want {
			t.Errorf("UsesLLM(%q) = %v", kind, !want)
		}
	}
}

// Settings change with everything that changes a templated reranker's
// answers, so a checkpoint keyed by them is never reused across prompts.
func TestSpecSettings(t *testing.T) {
	if m, err := (Spec{Kind: "tei"}).Settings(); m != nil || err != nil {
		t.Errorf("tei settings %v %v", m, err)
	}
	base := Spec{Kind: "insertrank"}
	m, err := base.Settings()
	if err != nil || m["scores"] != ScoresRaw || m["decimals"] != 2 || m["prompts_sha256"] != DefaultPrompts().Digest() {
		t.Fatalf("%v %v", m, err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "insertrank.user.tmpl"), []byte("{{.Query}}"), 0o644)
	edited, _ := Spec{Kind: "insertrank", Templates: dir}.Settings()
	if edited["prompts_sha256"] == m["prompts_sha256"] {
		t.Error("an edited template keeps the digest")
	}
	if r, _ := (Spec{Kind: "rank1", TextOnly: true}).Settings(); r["logprobs"] != false {
		t.Errorf("rank1 settings %v", r)
	}
	if _, err := (Spec{Kind: "reasonrank", Templates: filepath.Join(dir, "absent")}).Settings(); err == nil {
		t.Error("missing templates directory accepted")
	}
}
