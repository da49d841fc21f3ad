// Package tokenizer reads a Hugging Face tokenizer.json for the BERT family
// (WordPiece models: BERT, MedCPT, bge, e5, contriever, cross-encoders) and
// turns texts into the ids, type ids and attention masks a local encoder
// takes, token for token as the official HF tokenizers library does.
//
// We wrote our own because the Go port that other Go projects use
// (sugarme/tokenizer, under hugot) gets uncased BERT wrong: it reads
// strip_accents: null as false, where HF reads it as "follow lowercase",
// and strips accents without decomposing first, so "Café", Greek and
// Cyrillic become [UNK]. Binding the Rust library needs a static library
// that cannot be fetched here. A few hundred lines cover what BERT-family
// tokenizers use, checked against HF itself.
//
// Reproduced HF behaviour:
//   - added_tokens: special tokens such as "[SEP]" written in the text are
//     matched on the raw text (leftmost-longest; single_word, lstrip and
//     rstrip honoured); tokens marked normalized are matched on the
//     normalized text.
//   - BertNormalizer: clean_text drops NUL, U+FFFD and Cc/Cf/Co/Cs
//     characters except \t \n \r and maps White_Space to a space;
//     handle_chinese_chars pads HF's CJK blocks (not Google BERT's:
//     U+2B820–2B91F is not padded); strip_accents (null = lowercase) is NFD
//     then dropping Mn; lowercase is Rust's char::to_lowercase (U+0130
//     becomes "i̇"). Sequences of NFD/NFC/NFKD/NFKC, Lowercase,
//     StripAccents (all marks), Strip, Replace (literal) and Prepend too.
//   - BertPreTokenizer (and WhitespaceSplit, Punctuation(Isolated) and
//     sequences of them): split on White_Space, isolate ASCII punctuation
//     (including $ + < = > ^ ` | ~) and Unicode P* characters.
//   - WordPiece: greedy longest match, continuing_subword_prefix, a word
//     longer than max_input_chars_per_word characters or with an unmatched
//     remainder becomes unk_token as a whole.
//   - TemplateProcessing and BertProcessing post-processors; truncation
//     with HF's truncate_encodings rules (longest_first, only_first,
//     only_second, left or right) after reserving room for special tokens;
//     padding side, pad id, pad type id, pad_to_multiple_of and Fixed.
//
// Other models (BPE, Unigram, byte-level, Metaspace, regex splits) are
// refused at load with an error naming the component: those models are
// served through an OpenAI-compatible server instead.
//
// Differences left: overflowing tokens (stride) are not produced;
// only_first/only_second truncation that HF refuses as impossible falls
// back to longest_first instead of failing; Unicode tables are Go's
// (Unicode 15), so characters assigned after the Rust crates' tables may
// classify differently. The tests sweep every code point through HF's
// normalizer and pre-tokenizer when the oracle is installed.
package tokenizer
