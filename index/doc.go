// Package index is a corpus made searchable and kept on disk: the
// documents (ids and texts), a BM25 inverted index with the analyzer and
// scheme it was built with, and dense vectors (float32, and optionally
// their int8 and binary forms) with the recipe that made them, in one
// versioned, checksummed file that opens by memory map in milliseconds and
// searches exactly as the in-memory engines it was written from.
//
// # Exactness
//
// The file holds the engines' own arrays (bm25.Arrays, vector.Flat's rows,
// vector.Int8Data, vector.Binary's bits), and opening hands them back to
// bm25.FromArrays and vector.FromRows unchanged, so a search over an opened
// index runs the same code over the same numbers as the index it was
// written from: the same hits, scores and order, bit for bit. Writing is
// deterministic (no time stamps, maps written in key order), so the same
// contents always give the same bytes.
//
// # Format (version 1)
//
// All integers are little-endian.
//
//	offset    size  field
//	0         8     magic "R2MEDIDX"
//	8         4     format version (1)
//	12        4     section count S
//	16        8     file size in bytes
//	24        48·S  section table: name (24 bytes, NUL-padded), offset
//	                (uint64), length (uint64), CRC-32 (IEEE) of the
//	                section's bytes (uint32), 4 bytes reserved (0)
//	24+48·S   4     CRC-32 (IEEE) of every byte before it
//	…               sections, each starting at a multiple of 64 bytes,
//	                zero padding between them
//
// Sections are named: "meta" (JSON: Meta), "docs.ids"/"docs.ids.off" and
// "docs.text"/"docs.text.off" (concatenated UTF-8 and n+1 uint64 offsets),
// "docs.rank" (each document's position in byte order of ids, int32: the
// tie order of Lucene's BM25 and of dense search), "bm25.*" (the term
// dictionary: terms by id with offsets and an open-addressing hash table of
// FNV-1a hashes; then bm25.Arrays' arrays) and "dense.*" (float32 rows;
// int8 codes with their per-dimension maps; packed sign bits). With BM25
// postings, what snippets need is stored too, so that showing a hit
// analyzes nothing: "docs.heads"/"docs.heads.off"/"docs.heads.len" (the
// tokens of each document's first HeadBytes bytes, up to a break: per
// token its byte range, 16 bits each, and term id; per document the
// offset of its first token and the bytes covered, -1 for none) and
// "docs.terms"/"docs.terms.off" (each document's term ids, ascending:
// the postings transposed). Files without them (written before they
// were stored) are read as before; snippets then analyze the text.
//
// # Checks
//
// Open refuses a file that is not an index, has another format version, is
// shorter or longer than its header says, has a corrupt header, or has a
// small section whose checksum does not match; those checks read the
// header, the metadata and the arrays sized by terms or documents, which
// costs milliseconds. The bulk sections — postings, texts, vectors,
// stored heads and document terms — are checked on first use, before any of their bytes are handed out: the
// first BM25, Doc or Dense call reads its sections once and fails if a
// checksum does not match. What a number in a section points at is
// checked before it is used: the first BM25 call checks every posting
// lies in the corpus and in order, and the statistics scores use
// (bm25.FromArrays); Open checks the tie ranks are the documents' places
// in id order; the stored heads and document terms are checked when
// first read. Verify checks everything at once, and that the document
// terms are the postings transposed (what `r2med index info --verify`
// runs).
//
// # Files replaced while open
//
// A mapped file overwritten or truncated in place changes under the
// mapping. Changed tells it (by fstat: size, modification and change
// time) from one renamed over the path (Replaced), which leaves the
// mapping whole; Guard turns the fault of reading past a new, shorter
// end into an error. Roll out a new index by writing it elsewhere and
// renaming it over the old one. The
// analyzer is checked by name and by behaviour: the file records the
// digest of the terms its analyzer made of a fixed probe text, and
// Analyzer refuses an index whose analyzer this build would run
// differently.
package index
