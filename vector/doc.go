// Package vector is exact dense retrieval: a flat float32 store searched
// with SIMD dot products, its int8, binary and Matryoshka-truncated
// variants, and a file format for stored vectors.
//
// # Scores
//
// Cosine (the zero Metric) is BEIR's cos_sim, which every R2MED dense
// retriever is scored with: rows are L2-normalized when added, queries when
// searched, and the score is their float32 dot product, so scores agree
// with a float64 reference to about 1e-6, not bit for bit. Dot scores raw
// vectors.
//
// Every float32 dot product, on every path (one query or a batch, rows in
// memory or mapped from an index file, rescoring, Score) and every machine,
// is summed in one order (DotOrder, defined by dotGo in dot.go): eight
// lanes of fused multiply-adds, then a fixed pairwise sum of the lanes. It
// is the order an 8-wide FMA register sums in, so the AVX2 kernels read
// rows where they lie and a batch kernel keeps one accumulator per (query,
// row) pair — six queries × two rows per step, bound by the FMA units as
// BLAS's matrix product is — and a query scores the same bits alone, in a
// batch, in memory or mapped. Without AVX2 and FMA the portable Go
// computes the same bits (an exact float32 FMA from float64 arithmetic).
//
// # Order
//
// Hits come best first: score descending, ties by id ascending (byte
// order), the order HAKARI-Bench writes dense rankings in. That is a strict
// total order, so a search returns the same hits whatever the worker count
// or chunking. R2MED's own evaluation re-sorts ties by id descending
// (trec_eval); package measure does that, not this one.
//
// # Exclusions
//
// SearchOptions.SkipSelf drops the row whose id equals the query's id, as
// BEIR's DenseRetrievalExactSearch does (R2MED's dense runs rely on it);
// SearchOptions.Exclude drops per-query lists of ids (BRIGHT's
// excluded_ids). Both apply before the top-k cut, so k hits still come back
// when the store has them.
//
// # Memory and speed
//
// Rows are scanned in chunks of about 128 KiB, each scored against a batch
// of queries while it sits in cache (six, then three, then one query per
// pass over the chunk), with one bounded top-k per worker and query: memory
// beyond the store is O(workers × batch × k), never a queries × rows
// matrix, and the batch shrinks so that this stays under 64 MiB. A top-k
// appends the candidates that are not below its bar and, holding 2k, keeps
// the k best (quickselect) and raises the bar to the worst of them. See
// docs/BENCHMARKS.md for throughput against memory bandwidth and FAISS.
//
// # Quantization
//
// Int8 quantizes each dimension with its own affine map calibrated on the
// store (min and max → 256 levels, sentence-transformers' int8 calibration,
// rounded to the nearest level where it truncates);
// per-dimension beats one global range because embedding dimensions differ
// in spread. The query is not quantized to 8 bits: its weights q·step are
// rounded to 12-bit integers and multiplied with the codes by an integer
// AVX2 kernel, and the score estimates the dot product with the
// dequantized row. Binary keeps sign bits (> 0) of rows and queries and
// scores the ±1 dot product (dim − 2·Hamming) / dim with popcounts. With
// Rescore, either takes the Oversample·k best rows (default 4, as
// sentence-transformers' quantization examples ask; its search functions
// default to 2) and orders them by exact float32 scores, so a
// rescored hit's score equals Flat's. Flat.Truncate gives Matryoshka
// truncation; Variant bundles the three choices under one name.
//
// # Files
//
// Flat.WriteFile and ReadFile store a Flat in a small checksummed binary
// format (see file.go); files are written atomically and read back bit
// for bit.
package vector
