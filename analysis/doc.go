// Package analysis turns text into index terms exactly as Lucene does, so
// that BM25 runs built here match Pyserini/Anserini runs term for term.
//
// It follows Lucene's design: a Tokenizer splits text into tokens, Filters
// rewrite or drop single tokens, and an Analyzer (usually a Chain) composes
// them. LuceneEnglish is Lucene's EnglishAnalyzer as Pyserini's
// DefaultEnglishAnalyzer configures it: StandardTokenizer →
// EnglishPossessiveFilter → LowerCaseFilter → StopFilter (33 English stop
// words) → PorterStemFilter. Get and Names give the analyzers by name.
//
// # Why the tokenizer is written by hand
//
// StandardTokenizer must reproduce Lucene's JFlex-generated scanner exactly:
// which characters join a word ("9.8", "e.g", "j.smith", "don't",
// "x86_64"), which are dropped, where an overlong word is cut. A generic
// UAX #29 segmenter is not enough: Lucene's grammar departs from the annex
// in corner cases, emits only some kinds of segment, and bounds tokens by
// its scan buffer. It is also the hot loop of indexing (hundreds of
// megabytes per benchmark sweep), so it runs on one compact property table
// with a byte-level fast path for ASCII, never converts text to runes and
// returns substrings of its input. The table is generated from the Unicode
// Character Database by internal/gen/wordbreak (go generate, see props.go);
// its output is committed, so building and testing need neither.
//
// The tests hold the tokenizer to Lucene in several independent ways: the
// Lucene 8.7 reference file in shared/data (3,318 texts, compared token for
// token as they are), Unicode's own word-break and emoji test files (as
// Lucene tests its grammar), the grammar transcribed as regular expressions
// (random and exhaustive short inputs), and, where a machine has Java and
// Debian's liblucene8-java, real Lucene on random strings, long tokens and
// whole corpora.
//
// # Lucene versions
//
// The behaviour is that of Lucene 8 and 9 (current Pyserini uses 9): emoji
// sequences are tokens, and so are Extended_Pictographic symbols such as
// ©, ®, ™ and ↔, which end the word before them ("Nutrasweet®" gives
// "nutrasweet" and "®"); a token longer than MaxTokenLength (255 UTF-16
// code units) is cut into pieces. Lucene 4.10 differed in both: it had no
// emoji rule and dropped those symbols, and it dropped overlong tokens.
// Character properties come from Unicode 15.0, where Lucene 9's grammar
// was compiled with Unicode 12.1 data and Lucene 8's with Unicode 9:
// characters assigned since, or whose Word_Break value changed since, may
// tokenize differently. The one such difference the tests know is that in
// Lucene 8 a skin-tone modifier does not attach to a preceding letter or
// to a pictograph that is no Emoji_Modifier_Base (it was not yet Extend);
// here, as in Lucene 9, it does. No reference text has one.
//
// PorterStemFilter uses go-porterstemmer, corrected where it departs from
// Lucene's stemmer: Lucene lets a suffix match a whole word, which changes
// the stems of "sses", "ies", "eed" and "eeds".
package analysis
