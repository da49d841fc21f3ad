package analysis

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// These tests run real Lucene, when a developer machine has it, on inputs
// no fixed reference file covers: random strings over every character class
// the grammar distinguishes, long tokens, emoji, and whole corpora. Debian's
// liblucene8-java package provides it (Lucene 8.8, whose StandardTokenizer
// grammar, 255-unit splitting and Porter stemmer are Lucene 9's);
// R2MED_LUCENE_JARS may name other jars (core and analyzers, ':'-separated).
// They are skipped, saying so, where Java or the jars are missing, and with
// -short.

const debianLuceneJars = "/usr/share/maven-repo/org/apache/lucene/lucene-core/8.x/lucene-core-8.x.jar:" +
	"/usr/share/maven-repo/org/apache/lucene/lucene-analyzers-common/8.x/lucene-analyzers-common-8.x.jar"

// luceneOracle compiles testdata/lucene/LuceneOracle.java once per test
// binary and returns the class path to run it with.
func luceneOracle(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running Lucene")
	}
	jars := os.Getenv("R2MED_LUCENE_JARS")
	if jars == "" {
		jars = debianLuceneJars
	}
	for _, j := range filepath.SplitList(jars) {
		if _, err := os.Stat(j); err != nil {
			t.Skipf("Lucene jar %s not found (apt-get install liblucene8-java, or set R2MED_LUCENE_JARS): skipping the comparison with real Lucene", j)
		}
	}
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: skipping the comparison with real Lucene", tool)
		}
	}
	oracleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lucene-oracle-")
		if err != nil {
			oracleErr = err
			return
		}
		out, err := exec.Command("javac", "-cp", jars, "-d", dir, filepath.Join("testdata", "lucene", "LuceneOracle.java")).CombinedOutput()
		if err != nil {
			oracleErr = err
			oracleErrText = string(out)
			return
		}
		oracleCP = jars + string(filepath.ListSeparator) + dir
	})
	if oracleErr != nil {
		t.Fatalf("compiling LuceneOracle.java: %v %s", oracleErr, oracleErrText)
	}
	return oracleCP
}

var (
	oracleOnce    sync.Once
	oracleCP      string
	oracleErr     error
	oracleErrText string
)

// runLucene returns Lucene's tokens for each text in the given mode.
func runLucene(t *testing.T, mode string, texts []string) [][]string {
	t.Helper()
	cp := luceneOracle(t)
	var in bytes.Buffer
	for _, s := range texts {
		in.WriteString(hex.EncodeToString([]byte(s)))
		in.WriteByte('\n')
	}
	cmd := exec.Command("java", "-cp", cp, "LuceneOracle", mode)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("LuceneOracle %s: %v\n%s", mode, err, stderr.String())
	}
	var res [][]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		var toks []string
		for _, h := range strings.Fields(sc.Text()) {
			b, err := hex.DecodeString(h)
			if err != nil {
				t.Fatal(err)
			}
			toks = append(toks, string(b))
		}
		res = append(res, toks)
	}
	if len(res) != len(texts) {
		t.Fatalf("LuceneOracle %s: %d results for %d texts", mode, len(res), len(texts))
	}
	return res
}

func compareWithLucene(t *testing.T, mode string, texts []string, ours func([]string, string) []string) {
	t.Helper()
	want := runLucene(t, mode, texts)
	bad := 0
	for i, text := range texts {
		got := ours(nil, text)
		if !slices.Equal(got, want[i]) && !(len(got) == 0 && len(want[i]) == 0) {
			bad++
			if bad <= 15 {
				t.Errorf("%s %+q\n  got %+q\n want %+q", mode, text, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d texts differ from Lucene", mode, bad, len(texts))
	}
}

// lucene8Alphabet is grammarAlphabet less the skin-tone modifiers: Lucene 8
// compiles its grammar against Unicode 9, where they were not yet Extend
// (Word_Break=E_Modifier), so a modifier after a letter or a pictograph
// that is no Emoji_Modifier_Base starts a token of its own there. Lucene 9
// (Unicode 12.1) and this package (15.0) attach it.
var lucene8Alphabet = slices.DeleteFunc(slices.Clone(grammarAlphabet), func(s string) bool { return s == "🏽" })

func TestLuceneOracleStandardTokenizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for i := range 30000 {
		s := randomTextFrom(rng, lucene8Alphabet, 1+rng.IntN(12))
		if i%300 == 0 {
			s = strings.Repeat(s, 1+rng.IntN(80))
		}
		texts = append(texts, s)
	}
	// Every short string over the class representatives, as in
	// TestTokenizerMatchesGrammarSpecExhaustive, checks the transcribed
	// grammar itself against Lucene's.
	emoji := slices.DeleteFunc(slices.Clone(emojiClassAlphabet), func(s string) bool { return s == "🏽" })
	for _, c := range []struct {
		alphabet []string
		maxLen   int
	}{{wordClassAlphabet, 4}, {emoji, 3}} {
		var walk func(prefix string, depth int)
		walk = func(prefix string, depth int) {
			if depth > 0 {
				texts = append(texts, prefix)
			}
			if depth < c.maxLen {
				for _, s := range c.alphabet {
					walk(prefix+s, depth+1)
				}
			}
		}
		walk("", 0)
	}
	texts = append(texts, longTokenTexts()...)
	compareWithLucene(t, "standard", texts, StandardTokenizer{}.Tokenize)
}

// longTokenTexts exercise the 255-unit scan window at every alignment.
func longTokenTexts() []string {
	var out []string
	for _, unit := range []string{"b", "ab.", "1,2", "𝐀", "a𝐀", "ก", "a\u0301", "x_", "中", "カ"} {
		for _, n := range []int{84, 85, 86, 127, 128, 254, 255, 256, 300, 511, 600} {
			s := strings.Repeat(unit, n)
			out = append(out, s, "x "+s+" y", s+"."+s)
		}
	}
	return out
}

func TestLuceneOracleEnglishAnalyzer(t *testing.T) {
	var texts []string
	for _, c := range loadReference(t) {
		texts = append(texts, c.Text)
	}
	texts = append(texts, benchCorpora(t)["nfcorpus"]...)
	texts = append(texts, longTokenTexts()...)
	compareWithLucene(t, "english", texts, LuceneEnglish().Analyze)
}

func TestLuceneOraclePorter(t *testing.T) {
	seen := map[string]bool{}
	var words []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	a := &Chain{Tokenizer: StandardTokenizer{}, Filters: []Filter{LowerCaseFilter{}}}
	for _, text := range benchCorpora(t)["nfcorpus"] {
		for _, w := range a.Analyze(nil, text) {
			add(w)
		}
	}
	// A fifth of the suffix combinations keeps the run short; the rest are
	// checked against the transcription of Lucene's stemmer, which these
	// confirm.
	for _, w := range porterEdgeWords([]string{"", "a", "b", "y", "ss", "𝐚"}) {
		add(w)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50000 {
		add(randomWord(rng))
	}
	want := runLucene(t, "porter", words)
	bad := 0
	for i, w := range words {
		got, _ := PorterStemFilter{}.Filter(w)
		if len(want[i]) != 1 || got != want[i][0] {
			bad++
			if bad <= 20 {
				t.Errorf("stem(%q) = %q, Lucene %q", w, got, want[i])
			}
		}
	}
	t.Logf("%d words", len(words))
}

func TestLuceneOracleWhitespace(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	alphabet := []string{"a", "Z", " ", "\t", "\n", "\u00a0", "\u2007", "\u202f", "\u0085", "\u2003", "\u3000", "\u2028", "\u001c", "\u180e", "\u200b", "𝐀", "é"}
	var texts []string
	for range 5000 {
		texts = append(texts, randomTextFrom(rng, alphabet, 1+rng.IntN(20)))
	}
	texts = append(texts, longTokenTexts()...)
	texts = append(texts, strings.Repeat("x", 254)+"𝐀y", strings.Repeat("x", 253)+"𝐀y")
	compareWithLucene(t, "whitespace", texts, WhitespaceTokenizer{}.Tokenize)
}
