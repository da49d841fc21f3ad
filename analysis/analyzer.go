package analysis

import (
	"fmt"
	"sort"
	"strings"
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
// concurrent use when its parts are, as all of this package's are.
type Chain struct {
	Tokenizer Tokenizer
	Filters   []Filter
}

// Analyze implements Analyzer.
func (c *Chain) Analyze(dst []string, text string) []string {
	start := len(dst)
	dst = c.Tokenizer.Tokenize(dst, text)
	if len(c.Filters) == 0 {
		return dst
	}
	out := start
tokens:
	for _, t := range dst[start:] {
		for _, f := range c.Filters {
			var keep bool
			if t, keep = f.Filter(t); !keep {
				continue tokens
			}
		}
		dst[out] = t
		out++
	}
	clear(dst[out:]) // let dropped substrings' texts be collected
	return dst[:out]
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
	}
}

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
	if name == "" {
		name = DefaultName
	}
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown analyzer %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return mk(), nil
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
