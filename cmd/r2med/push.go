package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/retrieve/weaviatekind"

	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/weaviate"
)

func init() { indexSubcommands = append(indexSubcommands, newIndexPushCmd) }

func newIndexPushCmd() *cobra.Command {
	var d dataFlags
	var to, grpc, indexPath, repair string
	var schema weaviate.Schema
	var k1, b float64
	var opt weaviate.PushOptions
	var recreate, quiet, noCache bool
	var timeout time.Duration
	var cacheDir string
	var dense *config.KindFlags
	cmd := &cobra.Command{
		Use:   "push --to weaviate://HOST:PORT/Collection (--task T | --data DIR [--split S] | --index INDEX) [--model M --backend B --base-url U]",
		Short: "Push a task's corpus, with its vectors when the dense flags are given, into a Weaviate collection (created if missing)",
		Long: `push writes one object per document into a Weaviate collection: the
document id (docId), its text (text, searched by BM25) and a content hash.
The collection is created when missing, with no vectorizer module, the
shards and replication factor given. With the dense flags (--model,
--backend, --base-url, … as run takes them) the corpus is embedded as
--retriever dense embeds it, through the same cache, and each object gets
its vector; without them the collection is BM25-only. With --index the
documents, and the vectors when the file holds them, come from an index
file (r2med index build) instead: nothing is read or embedded again, and
the vectors are the ones r2med run --index searches. Object UUIDs are UUIDv5 of the
document ids, so pushing again writes nothing that is already there
unchanged: an interrupted push resumes, a repeated one is a no-op. A push
is complete only when every replica holds every object: on a replicated
collection a node that is down fails the push, named; writes go at
consistency ALL, and at the end every object is read from every node's
replica (counts lag behind writes and miss stale copies). When a replica
lacks objects its node lost writes, and what it holds may be missing from
its indexes: the collection is made anew with the same configuration and
every object written again (--repair resend writes only what is missing).
On a collection with one copy the object count must equal the corpus
size.

A collection holds one corpus: objects of documents the corpus lacks make
push fail before writing (use another collection, or --recreate). The
collection settings (--vector-index, --ef, --ef-construction,
--max-connections, --k1, --b, --stopwords, --async-replication, --shards,
--replicas) make a new collection; given for an existing one that has
others, they fail the push, named, rather than being ignored.`,
		Example: `  r2med index push --task demo --to weaviate://localhost:8080/Demo
  r2med index push --task Biology --to weaviate://localhost:8080/Biology --model nv --backend openai --base-url http://gpu:8000/v1
  r2med index push --data ../shared/data/nfcorpus --to weaviate://localhost:8080/Nfcorpus --shards 3 --replicas 3
  r2med index push --index biology.idx --to weaviate://localhost:8080/Biology     # documents and vectors from the file`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := weaviate.ParseTarget(to, grpc)
			if err != nil {
				return err
			}
			cfg.Timeout = timeout
			if opt.Repair, err = weaviate.ParseRepair(repair); err != nil {
				return err
			}
			if cmd.Flags().Changed("k1") || cmd.Flags().Changed("b") {
				schema.BM25 = &weaviate.BM25Params{K1: k1, B: b}
			}
			if !cmd.Flags().Changed("vector-index") {
				// Settings given are checked against an existing
				// collection (Ensure): the default is not given.
				schema.Index = ""
			}
			opt.Progress = progress.Auto(quiet)
			if indexPath != "" {
				if d.task != "" || d.data != "" {
					return fmt.Errorf("--index %s gives the corpus; drop --task and --data", indexPath)
				}
				if len(dense.Given()) > 0 {
					return fmt.Errorf("--index %s gives the vectors as its recipe made them; drop the dense flags (--model, --backend, …)", indexPath)
				}
				c, err := weaviate.Open(cfg)
				if err != nil {
					return err
				}
				return pushIndex(cmd.Context(), cmd.OutOrStdout(), c, indexPath, schema, recreate, opt)
			}
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			if len(srcs) != 1 {
				return fmt.Errorf("--task %s names %d tasks; a collection holds one corpus: push each task into its own collection", d.task, len(srcs))
			}
			task, err := srcs[0].Load(cmd.Context())
			if err != nil {
				return err
			}
			c, err := weaviate.Open(cfg)
			if err != nil {
				return err
			}
			var vecs [][]float32
			if len(dense.Given()) > 0 {
				// The corpus embedded as --retriever dense embeds it (and
				// from the same cache), so weaviate:vector searches the
				// vectors r2med's own dense search would.
				spec, err := dense.Spec()
				if err != nil {
					return err
				}
				var store *cache.Store
				if !noCache {
					if store, err = cache.Open(cacheDir, cache.Options{}); err != nil {
						return err
					}
					defer store.Close()
				}
				flat, info, err := weaviatekind.CorpusVectors(cmd.Context(), spec.(retrieve.Dense), task, retrieve.Env{Progress: opt.Progress, Cache: store, Record: retrieve.SummaryLog{W: cmd.ErrOrStderr()}})
				if err != nil {
					return fmt.Errorf("%s: %w", task.Name, err)
				}
				if vecs, err = weaviate.FlatVectors(task.Corpus, flat); err != nil {
					return err
				}
				schema.Vectors = &info
			}
			return pushCorpus(cmd.Context(), cmd.OutOrStdout(), c, task.Name, task.Corpus, vecs, schema, recreate, opt)
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "the collection: weaviate://HOST:PORT/Collection (weaviates:// for TLS, whose gRPC the Weaviate Go client does not verify); the name starts with a capital letter")
	f.StringVar(&indexPath, "index", "", "push the documents, and the vectors when it holds them, of this index file (r2med index build) instead of a task's")
	f.StringVar(&grpc, "weaviate-grpc", "", "Weaviate's gRPC address HOST:PORT (default: the same host, port 50051)")
	f.IntVar(&schema.Shards, "shards", 0, "shards of a new collection (default: Weaviate's, one per node)")
	f.IntVar(&schema.Replicas, "replicas", 0, "replication factor of a new collection (default 1); at most the number of nodes")
	f.BoolVar(&schema.AsyncReplication, "async-replication", false, "let Weaviate repair replicas in the background after a node was away")
	f.StringVar(&schema.Index, "vector-index", "hnsw", "vector index of a new collection: hnsw or flat (exact)")
	f.IntVar(&schema.EF, "ef", 0, "HNSW ef of a new collection (default: Weaviate's, dynamic)")
	f.IntVar(&schema.EFConstruction, "ef-construction", 0, "HNSW efConstruction of a new collection (default: Weaviate's, 128)")
	f.IntVar(&schema.MaxConnections, "max-connections", 0, "HNSW maxConnections of a new collection (default: Weaviate's, 32)")
	f.Float64Var(&k1, "k1", 1.2, "BM25 k1 of a new collection")
	f.Float64Var(&b, "b", 0.75, "BM25 b of a new collection")
	f.StringVar(&schema.Stopwords, "stopwords", "", "stopwords dropped from BM25 queries in a new collection: en (Weaviate's default) or none")
	f.StringVar(&opt.Consistency, "consistency", "", "write consistency level: ONE, QUORUM or ALL (default: ALL on a replicated collection, else Weaviate's); the push ends only when every replica holds every object")
	f.StringVar(&repair, "repair", "rebuild", "when a replica lacks objects after the writes (its node died or was away): rebuild (make the collection anew and write every object again, so every node's indexes start clean) or resend (write again only what is missing)")
	f.IntVar(&opt.BatchSize, "import-batch", 0, "objects per batch import request (default 200)")
	f.IntVar(&opt.Workers, "import-workers", 0, "batch import requests in flight (default 2)")
	f.IntVar(&opt.Retries, "retries", 0, "times a failed batch is sent again, with exponential backoff (default 6; -1: never)")
	f.DurationVar(&timeout, "timeout", 0, "per-request timeout (default 60s)")
	f.BoolVar(&recreate, "recreate", false, "delete the collection first, with everything in it")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	f.StringVar(&cacheDir, "cache", "", "cache of embeddings shared by all runs (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "embed afresh, without reading or writing the cache")
	dense = config.AddKindFlags(f, "dense", "quantize", "rescore")
	cmd.MarkFlagRequired("to")
	return cmd
}

// pushIndex pushes an index file's documents, with its vectors when it
// holds them.
func pushIndex(ctx context.Context, w io.Writer, c *weaviate.Collection, path string, schema weaviate.Schema, recreate bool, opt weaviate.PushOptions) error {
	ix, err := index.Open(path)
	if err != nil {
		return err
	}
	defer ix.Close()
	docs, err := ix.Docs()
	if err != nil {
		return err
	}
	var vecs [][]float32
	if ix.Meta().Dense != nil {
		flat, info, err := weaviatekind.IndexVectors(ix)
		if err != nil {
			return err
		}
		if vecs, err = weaviate.FlatVectors(docs, flat); err != nil {
			return err
		}
		schema.Vectors = &info
	}
	name, _ := ix.Meta().Source["task"].(string)
	if name == "" {
		name = path
	}
	return pushCorpus(ctx, w, c, name, docs, vecs, schema, recreate, opt)
}

// pushCorpus creates (or checks) the collection, pushes the documents
// (with vecs when the schema has vectors) and prints what happened.
func pushCorpus(ctx context.Context, w io.Writer, c *weaviate.Collection, name string, docs []ir.Doc, vecs [][]float32, schema weaviate.Schema, recreate bool, opt weaviate.PushOptions) error {
	if recreate {
		if err := c.Delete(ctx); err != nil {
			return err
		}
	}
	created, err := c.Ensure(ctx, schema)
	if err != nil {
		return err
	}
	st, err := c.Push(ctx, docs, vecs, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, pushSummary(name, info, st, created))
	return err
}

// pushSummary says what a push did: where to, how many documents were
// written, skipped and retried, in how long, and what every replica holds.
func pushSummary(name string, info weaviate.Info, st weaviate.PushStats, created bool) string {
	state := "existing"
	if created {
		state = "new"
	}
	rate := ""
	if secs := st.Elapsed.Seconds(); secs > 0 {
		rate = fmt.Sprintf(", %.0f objects/s", float64(st.Written)/secs)
	}
	held := fmt.Sprintf("the collection holds %s", counted(info.Objects, "object", "objects"))
	if st.Replicas.Factor > 1 {
		held = fmt.Sprintf("every replica holds all %s (%s; every object read from every replica)", counted(st.Objects, "object", "objects"), st.Replicas)
	}
	for _, node := range slices.Sorted(maps.Keys(st.Repaired)) {
		n := st.Repaired[node]
		held += fmt.Sprintf("\n  repaired: the replicas on %s lacked %s", node, counted(n, "object", "objects"))
	}
	if st.Rebuilt > 0 {
		held += fmt.Sprintf("; the collection was made anew and all %d objects written again (--repair rebuild)", st.Rebuilt)
	}
	return fmt.Sprintf("%s → %s/%s (%s collection; Weaviate %s, %s)\n  %s: %d written (%d changed), %d already there; %s; %s%s\n  %s\n",
		name, info.URL, info.Collection, state, info.ServerVersion, counted(info.Nodes, "node", "nodes"),
		counted(st.Docs, "document", "documents"), st.Written, st.Changed, st.Present, counted(st.Retries, "retry", "retries"),
		st.Elapsed.Round(time.Millisecond), rate, held)
}
