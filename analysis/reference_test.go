package analysis

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// referencePath is Lucene 8.7 EnglishAnalyzer output for 3,318 texts, kept
// beside the repository (see shared/data/README.md).
var referencePath = filepath.Join("..", "..", "shared", "data", "analyzer-reference", "lucene-english.jsonl")

type referenceCase struct {
	ID     string   `json:"id"`
	Text   string   `json:"text"`
	Tokens []string `json:"tokens"`
}

func loadReference(tb testing.TB) []referenceCase {
	tb.Helper()
	f, err := os.Open(referencePath)
	if os.IsNotExist(err) {
		if _, err := os.Stat(filepath.Join("..", "..", "shared", "data")); os.IsNotExist(err) {
			tb.Skipf("shared test data not found at %s: skipping the Lucene reference comparison", filepath.Dir(filepath.Dir(referencePath)))
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []referenceCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		var c referenceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s:%d: %v", referencePath, line, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(cases) == 0 {
		tb.Fatalf("%s: no cases", referencePath)
	}
	return cases
}

// TestLuceneEnglishReference demands token-for-token agreement with Lucene
// 8.7's EnglishAnalyzer on every reference text, compared as they are: the
// file was made with the StandardTokenizer grammar Lucene 9 and Pyserini
// use, so emoji and pictographs such as ® are tokens in both.
func TestLuceneEnglishReference(t *testing.T) {
	cases := loadReference(t)
	a := LuceneEnglish()
	var got []string
	bad, emoji := 0, 0
	for _, c := range cases {
		got = a.Analyze(got[:0], c.Text)
		if !slices.Equal(got, c.Tokens) && !(len(got) == 0 && len(c.Tokens) == 0) {
			bad++
			if bad <= 10 {
				t.Errorf("%s: text %q\n want %q\n  got %q", c.ID, c.Text, c.Tokens, got)
			}
		}
		for _, tok := range c.Tokens {
			if scanEmoji(tok, 0) == len(tok) && scanWord(tok, 0) < len(tok) {
				emoji++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d reference texts differ", bad, len(cases))
	}
	// The file holds emoji tokens (the ® of four NFCorpus queries); were
	// there none, this test would not be checking the emoji rule at all.
	if emoji == 0 {
		t.Error("no reference token is an emoji token; is this the Lucene 8.7 reference file?")
	}
}
