// Package analysis turns text into index terms exactly as Lucene does, so
// that BM25 runs built here match Pyserini/Anserini runs term for term.
//
// It follows Lucene's design: a Tokenizer splits text into tokens, Filters
// rewrite or drop single tokens, and an Analyzer (usually a Chain) composes
// them. LuceneEnglish is Lucene's EnglishAnalyzer as Pyserini's
// DefaultEnglishAnalyzer configures it: StandardTokenizer →
// EnglishPossessiveFilter → LowerCaseFilter → StopFilter (33 English stop
// words) → PorterStemFilter.
//
// # Why the tokenizer is written by hand
//
// StandardTokenizer must reproduce Lucene's JFlex-generated scanner bit for
// bit: which characters join a word ("9.8", "e.g", "j.smith", "don't",
// "x86_64"), which are dropped, where a long word is cut. A generic UAX #29
// segmenter is not enough: Lucene's grammar differs from the annex in corner
// cases, emits only some segment types, and bounds tokens by its scan
// buffer. It is also the hot loop of indexing (hundreds of megabytes per
// benchmark sweep), so it runs on a compact property table with a byte-level
// fast path for ASCII, never converts the text to runes and returns
// substrings of the input. The property table is generated from the Unicode
// Character Database by internal/gen/wordbreak (see go:generate in props.go);
// the output is committed so neither the data nor the generator is needed to
// build or test.
//
// # Lucene versions
//
// The behaviour is that of Lucene 9, which current Pyserini uses. It differs
// from Lucene 4.10 (the version the reference file in the tests was made
// with) in two ways: a token longer than MaxTokenLength (255 UTF-16 code
// units) is cut into pieces where 4.10 dropped it, and emoji sequences are
// tokens where 4.10 dropped them. Character properties come from Unicode
// 15.0 for every rule, while Lucene 9 compiles its grammar against older
// Word_Break data (Unicode 9); only characters whose Word_Break value changed
// since, such as the skin-tone modifiers (now Extend, so they attach to a
// preceding letter), or that were unassigned then can tokenize differently.
package analysis
