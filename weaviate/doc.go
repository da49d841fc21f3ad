// Package weaviate is r2med's view of a Weaviate collection: a corpus pushed
// into Weaviate with our own vectors (no vectorizer module), and searched by
// BM25, by vector (HNSW or flat) or by both (hybrid), answering ranked
// document ids and scores as every r2med retriever does. It speaks to the
// server through the official Go client (weaviate-go-client v5): REST for
// the schema, metadata and counts, gRPC for batch import and search.
//
// # Objects
//
// One object per document, with properties docId (the corpus id; field
// tokenization, filterable, not searched), text (word tokenization, the one
// property BM25 searches) and contentHash (a digest of id, text and vector).
// Object UUIDs are UUIDv5 of the document id in the DNS namespace, which is
// what the Python client's generate_uuid5(doc_id) gives, so pushing the same
// corpus twice writes the same objects (idempotent), and a push that was
// interrupted resumes: objects already present with the same contentHash
// are skipped, changed ones are rewritten, and objects of documents the
// corpus lacks are refused (push into a new collection, or recreate it).
// The collection's description records, as JSON, what made its vectors
// (model, dimension, metric), so searching with another model's query
// vectors is refused rather than silently meaningless, and the digests of
// the corpus the last finished push wrote: a push clears them before it
// writes and sets them once the collection is whole, so a half-pushed
// collection refuses searches (Searchable), and a searcher can check that
// the collection holds its task's corpus (TextDigest).
//
// # Scores and exactness
//
//   - BM25: Weaviate's BM25F on the text property. Its formula is Lucene 8's
//     (idf = ln(1 + (N − n + 0.5)/(n + 0.5)), tf/(tf + k1·(1 − b + b·dl/avgdl)),
//     no (k1+1) factor) with k1 = 1.2 and b = 0.75 unless the collection says
//     otherwise; document lengths are exact, not Lucene's one-byte norms:
//     the number of words for the BlockMax WAND searcher (Weaviate's
//     default), the number of distinct words for the exhaustive one (a
//     server started with USE_INVERTED_SEARCHABLE=false; Info.BM25Searcher
//     says which a collection has), stopwords counted in both. The
//     text is tokenized by "word" tokenization (split on anything that is not
//     a letter or digit, lowercased), with no stemming; English stopwords
//     (the "en" preset) are indexed but dropped from queries. R2MED's BM25
//     uses Lucene's EnglishAnalyzer (StandardTokenizer, possessives,
//     stopwords, Porter stemming) and k1 = 0.9, b = 0.4, so the rankings
//     differ; docs/BENCHMARKS.md records by how much on NFCorpus.
//   - Vector: the score is the similarity, not Weaviate's distance: 1 −
//     distance for cosine (Weaviate normalizes both sides, as BEIR's cos_sim)
//     and −distance for dot. With the flat index the search is exact up to
//     float32 rounding; with HNSW it is approximate (VectorIndex says which),
//     and ef trades speed for recall: Schema.EF at creation, SetEF for
//     good, HoldEF for the time a run searches (Weaviate 1.35 takes no ef
//     per query). Each node applies a class update in its own time, so
//     each of these returns only once every node holding a replica
//     reports having applied it (EFApplied, from each node's raft
//     progress), and fails naming a node that does not. CheckExact measures the recall against r2med's exact
//     flat search over the vectors read back from the collection.
//   - Hybrid: Weaviate fuses its BM25 and vector lists itself, with alpha
//     (weight of the vector side) and rankedFusion or relativeScoreFusion;
//     the score is Weaviate's fused score. Both are sent with every query
//     (Weaviate 1.35's own defaults are the same: alpha 0.75,
//     relativeScoreFusion since 1.24). Each side lists k hits or the
//     server's QUERY_HYBRID_MAXIMUM_RESULTS (default 100), whichever is
//     more, and only those are fused: a server setting no manifest sees.
//
// # Replicas
//
// A push is complete only when every replica of every shard holds every
// object with its content: a member of the cluster that is down fails it,
// named, and at the end every object is read from every node's replica
// (VerifyReplicas); a replica that lost writes is mended (PushOptions.Repair),
// by default by making the collection anew, since a node that died while
// writing may also lack objects in its indexes, which Weaviate does not
// repair. Replicas reports the layout and the per-replica counts a search
// can check cheaply. Requests that fail while a cluster routes around a
// node that just died are sent again for a bounded time (Config.RetryFor),
// and an error that remains names that node.
//
// Hits come in Weaviate's rank order, except where scores tie at the
// cut: Weaviate keeps tied hits in the order it found them (the order the
// objects were written in), so BM25 and vector searches ask for one hit
// more than k, and while the hit after the k-th ties it ask for more,
// then keep the tied hits by document id ascending, as r2med's exact
// search does: a flat index gives r2med's exact ranking, ties included,
// and the same collection gives the same hits however it was pushed (a
// tie longer than the server lists, QUERY_MAXIMUM_RESULTS, is cut where
// Weaviate cut it).
// Hybrid search is taken as answered (its fused scores depend on how
// many hits it is asked for). A document whose id equals the query's id
// is skipped when SearchOptions.SkipSelf is set (BEIR's rule, which
// r2med's dense retriever follows; the weaviate retriever sets it for
// vector and hybrid search, not for BM25, as r2med's BM25 keeps it). An empty BM25 query matches nothing
// (Weaviate would refuse it and fail the run); asking for more hits than
// the server's QUERY_MAXIMUM_RESULTS is an error that says so at once.
package weaviate
