package analysis

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Analyzer turns text into index terms. Implementations must be safe for
// concurrent use by many goroutines.
type Analyzer interface {
	// Analyze appends the terms of text to dst and returns the extended
	// slice (lets hot loops reuse one slice).
	Analyze(dst []string, text string) []string
}

// Chain is an Analyzer built the way Lucene builds one: a tokenizer followed
// by filters, each applied to every token in order. It is safe for
// concurrent use when its parts are, as all of this package's are. Use it by
// pointer: it must not be copied after first use.
type Chain struct {
	Tokenizer Tokenizer
	Filters   []Filter

	// MemoSize, when positive, lets the chain remember the filtered form of
	// up to MemoSize distinct tokens, which requires every filter to be a
	// pure function of its input (this package's are). Token frequencies
	// are Zipfian, so a modest memo turns almost every Porter stemming, by
	// far the costliest step, into one lookup; the bound keeps a huge
	// corpus's long tail of rare tokens from growing it without end.
	MemoSize int

	memoOnce sync.Once
	memo     *memo
}

// Analyze implements Analyzer.
func (c *Chain) Analyze(dst []string, text string) []string {
	start := len(dst)
	dst = c.Tokenizer.Tokenize(dst, text)
	if len(c.Filters) == 0 {
		return dst
	}
	out := start
	for _, t := range dst[start:] {
		if t, keep := c.filter(t); keep {
			dst[out] = t
			out++
		}
	}
	clear(dst[out:]) // let dropped substrings' texts be collected
	return dst[:out]
}

// Term returns the index term one token becomes, exactly as Analyze would
// turn it (memo included), and false when a filter drops it. With the
// chain's Tokenizer it lets an indexer filter each distinct token once and
// remember the result by the raw token.
func (c *Chain) Term(tok string) (string, bool) {
	if len(c.Filters) == 0 {
		return tok, true
	}
	return c.filter(tok)
}

func (c *Chain) filter(tok string) (string, bool) {
	if c.MemoSize <= 0 {
		return c.apply(tok)
	}
	c.memoOnce.Do(func() { c.memo = &memo{max: c.MemoSize} })
	if e, ok := c.memo.get(tok); ok {
		return e.term, e.keep
	}
	term, keep := c.apply(tok)
	c.memo.put(tok, term, keep)
	return term, keep
}

func (c *Chain) apply(term string) (string, bool) {
	for _, f := range c.Filters {
		var keep bool
		if term, keep = f.Filter(term); !keep {
			return "", false
		}
	}
	return term, true
}

// LuceneEnglish returns Lucene's EnglishAnalyzer as Pyserini/Anserini use it
// ("DefaultEnglishAnalyzer"): StandardTokenizer, EnglishPossessiveFilter,
// LowerCaseFilter, the 33 English stop words and Porter stemming.
func LuceneEnglish() Analyzer {
	return &Chain{
		Tokenizer: StandardTokenizer{},
		Filters: []Filter{
			EnglishPossessiveFilter{},
			LowerCaseFilter{},
			NewStopFilter(englishStopWords),
			PorterStemFilter{},
		},
		MemoSize: englishMemoSize,
	}
}

// englishMemoSize bounds LuceneEnglish's memo: about 30 MB when full, and
// enough to cover nearly every token occurrence of a biomedical corpus.
const englishMemoSize = 1 << 18

// Whitespace returns Lucene's WhitespaceAnalyzer: split at whitespace, no
// other change.
func Whitespace() Analyzer {
	return &Chain{Tokenizer: WhitespaceTokenizer{}}
}

// DefaultName is the analyzer Get picks for an empty name.
const DefaultName = "lucene-english"

var registry = map[string]func() Analyzer{
	"lucene-english": LuceneEnglish,
	"whitespace":     Whitespace,
}

// Get returns the analyzer registered under name ("" means DefaultName).
func Get(name string) (Analyzer, error) {
	mk, err := maker(name)
	if err != nil {
		return nil, err
	}
	return mk(), nil
}

// Check returns Get's error for name without building the analyzer
// (for validating a spec, as a search service does per request).
func Check(name string) error {
	_, err := maker(name)
	return err
}

func maker(name string) (func() Analyzer, error) {
	if name == "" {
		name = DefaultName
	}
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown analyzer %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return mk, nil
}

// Names lists the registered analyzer names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
