package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/audit/negatives"
	"github.com/r2med/r2med/audit/trainset"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
)

func init() { register(newNegativesCmd) }

func newNegativesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "negatives",
		Short: "Hard negatives for training retrievers",
	}
	cmd.AddCommand(newNegativesMineCmd())
	return cmd
}

func newNegativesMineCmd() *cobra.Command {
	var d dataFlags
	var train, corpus, out, format, pipelineFile, cacheDir string
	var noCache bool
	var pf *config.Flags
	var queryFields, posFields, negFields, textFields, same, differ []string
	var judgeKind, judgeModel, judgeURL, judgeDir string
	var judgeMin, judgeMax, judgeRel float64
	var opts negatives.Options
	var threshold float64
	cmd := &cobra.Command{
		Use:   "mine (--task T | --data DIR | --train FILE [--corpus FILE]) --out FILE",
		Short: "Mine hard negatives with any retriever or fusion, excluding positives and their near-duplicates, optionally judged by a reranker",
		Long: `mine ranks a corpus for each query and keeps the documents in a rank window
(--from, --to; the default 11–210 is FlagEmbedding's hn_mine window, its
range_for_sampling "10-210" being the Python slice [10:210]) that are
neither positives nor copies or near-duplicates of one (equal once
normalised as the audit normalises, or word-shingle Jaccard ≥ --threshold)
nor copies of the query (as hn_mine drops them) nor of a better-ranked
negative (a corpus's duplicates give one negative): the first --count of
them, or a seeded sample (--sample --seed).

Queries come from a benchmark task (--task, --data: its queries, judged
positives and corpus) or a training file (--train: any layout r2med audit
reads that has queries; the corpus is --corpus, or else every positive and
negative text of the file, as FlagEmbedding's hn_mine pools them).

--judge KIND scores the window's candidates with a reranker (tei, cohere,
jina, voyage, llm-pointwise, llm-listwise, onnx) and keeps those within
[--judge-min, --judge-max] and below --judge-relative × the query's lowest
positive score (NV-Retriever's TopK-PercPos: 0.95), dropping the likely
false negatives. --same and --differ constrain negatives by query metadata:
--same body_system --differ answer keeps documents that are positives of
another query of the same body system with another diagnosis (NanoR2MED's
hard negatives); an empty value (R2MED leaves some body systems empty)
matches nothing.

Output: --format bge gives {query, pos, neg} lines (FlagEmbedding);
triplet gives {anchor, positive, negative} lines (sentence-transformers);
tevatron gives {query_id, query, positive_passages, negative_passages}
lines, each passage {docid, title, text} (Tevatron).
Queries left without negatives, or without a positive in the corpus, get
no line; the counts go to stderr.

The ranking comes from any retriever or fusion r2med runs: --retriever
bm25 (default), dense, candidates:CONFIG, run:PATH, or several fused
(--retriever bm25,dense --fuse rrf), with the retrievers' flags (--bm25,
--model, --backend, …) or a pipeline file's retrieve: and fuse: stages
(--pipeline; expand and rerank stages are refused: use --judge).`,
		Example: `  r2med negatives mine --task demo --from 1 --to 50 --count 5 --same body_system --differ answer --out demo-negs.jsonl
  r2med negatives mine --data ../shared/data/nfcorpus --split test --format triplet --out nfcorpus-triplets.jsonl
  r2med negatives mine --task Biology --retriever bm25,dense --model bge --fuse rrf --out biology-negs.jsonl
  r2med negatives mine --train pairs.jsonl --corpus corpus.jsonl --judge tei --judge-url http://localhost:8081 --judge-max 0.5 --out bge.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out FILE is required: the mined training file")
			}
			if err := positiveFlags(cmd, "threshold", "count", "from", "to"); err != nil {
				return err
			}
			if !slices.Contains(negatives.Formats, format) {
				return fmt.Errorf("unknown --format %q; want %s", format, strings.Join(negatives.Formats, ", "))
			}
			for _, name := range pf.Given() {
				if !rankFlag(name) {
					return fmt.Errorf("%s sets a stage mining does not run; the ranking takes --retriever, its retrievers' flags and --fuse (judge candidates with --judge)", name)
				}
			}
			cfg, err := pf.Config(pipelineFile)
			if err != nil {
				return err
			}
			opts.NearDup = minhash.Spec{Threshold: threshold}
			opts.Same, opts.Differ = splitList(same), splitList(differ)
			fl := cmd.Flags()
			if fl.Changed("judge-min") {
				opts.JudgeMin = &judgeMin
			}
			if fl.Changed("judge-max") {
				opts.JudgeMax = &judgeMax
			}
			opts.JudgeRelative = judgeRel
			if judgeKind != "" {
				j, err := rerank.New(rerank.Spec{Kind: judgeKind, Model: judgeModel, BaseURL: judgeURL, ModelDir: judgeDir})
				if err != nil {
					return fmt.Errorf("--judge: %w", err)
				}
				if c, ok := j.(io.Closer); ok {
					defer c.Close()
				}
				opts.Judge = j
			}
			var docs []ir.Doc
			var qs []negatives.Query
			var task *ir.Task
			meta := append(slices.Clone(opts.Same), opts.Differ...)
			if train != "" {
				if d.task != "" || d.data != "" {
					return fmt.Errorf("give --train or --task/--data, not both")
				}
				topts := trainset.Options{Fields: trainset.Fields{Query: splitList(queryFields), Positive: splitList(posFields), Negative: splitList(negFields), Text: splitList(textFields)}, Meta: meta}
				var pool []ir.Doc
				if qs, pool, err = negatives.Training(cmd.Context(), train, topts); err != nil {
					return err
				}
				docs = pool
				if corpus != "" {
					if docs, err = negatives.Corpus(cmd.Context(), corpus, trainset.Options{}); err != nil {
						return err
					}
				}
				task = &ir.Task{Name: "train", Corpus: docs}
			} else {
				if corpus != "" {
					return fmt.Errorf("--corpus goes with --train; a task brings its own corpus")
				}
				srcs, err := d.sources()
				if err != nil {
					return err
				}
				if len(srcs) != 1 {
					return fmt.Errorf("mine one task at a time (--task names %d)", len(srcs))
				}
				t, err := srcs[0].Load(cmd.Context())
				if err != nil {
					return err
				}
				task, docs = t, t.Corpus
				if qs, err = negatives.FromTask(t, meta); err != nil {
					return err
				}
			}
			env := retrieve.Env{Workers: opts.Workers, Progress: progress.Auto(false), AllowMissingDocs: d.opts.AllowMissingDocs}
			if !noCache && slices.ContainsFunc(cfg.Retrievers, retrieve.UsesCache) {
				store, err := cache.Open(cacheDir, cache.Options{})
				if err != nil {
					return err
				}
				defer store.Close()
				env.Cache = store
			}
			s := negatives.SearcherFunc(func(ctx context.Context, queries []ir.Query, k int) (ir.Run, error) {
				return pipeline.Rank(ctx, task, queries, cfg, k, env)
			})
			res, st, err := negatives.Mine(cmd.Context(), docs, qs, s, opts)
			if err != nil {
				return err
			}
			if err := outputTo(cmd, out, func(w io.Writer) error { return negatives.Write(w, format, res, docs) }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d queries: %d with fewer than %d negatives (%d with none, left out); %d without a positive in the corpus, left out; of %d candidates in ranks %d–%d, excluded %d positives, %d near-duplicates of positives, %d copies of the query, %d by metadata, %d copies of a better-ranked negative, %d by the judge\n",
				st.Queries, st.Short, opts.Count, st.None, st.NoPositive, st.Candidates, opts.From, opts.To, st.Positive, st.NearDuplicate, st.QueryCopy, st.Metadata, st.NegativeCopy, st.Judged)
			return nil
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	f.StringVar(&train, "train", "", "a training file whose queries get negatives (instead of --task/--data)")
	f.StringVar(&corpus, "corpus", "", "with --train: the corpus to mine from (JSON lines, parquet, TSV; {_id,title,text} or {id,text}); default: the file's own positive and negative texts")
	f.StringSliceVar(&queryFields, "query-field", nil, "--train: field(s) holding queries (default: detected)")
	f.StringSliceVar(&posFields, "pos-field", nil, "--train: field(s) holding positives")
	f.StringSliceVar(&negFields, "neg-field", nil, "--train: field(s) holding negatives (pooled into the default corpus)")
	f.StringSliceVar(&textFields, "text-field", nil, "--train: other text field(s)")
	f.StringVar(&out, "out", "", "the output file (JSON lines), written whole or not at all")
	f.StringVar(&format, "format", "bge", "output: bge ({query, pos, neg}), triplet ({anchor, positive, negative}) or tevatron ({query_id, query, positive_passages, negative_passages})")
	f.IntVar(&opts.From, "from", 11, "first rank of the window negatives come from (1-based; 11 with --to 210 is hn_mine's range_for_sampling 10-210)")
	f.IntVar(&opts.To, "to", 210, "last rank of the window")
	f.IntVar(&opts.Count, "count", 15, "negatives per query")
	f.BoolVar(&opts.Sample, "sample", false, "pick --count of the eligible documents at random (seeded) instead of the best-ranked")
	f.Uint64Var(&opts.Seed, "seed", 0, "seed of --sample")
	f.Float64Var(&threshold, "threshold", minhash.DefaultThreshold, "a candidate whose word-set Jaccard with a positive is at least this is a near-duplicate, never a negative")
	f.StringVar(&pipelineFile, "pipeline", "", "a pipeline file whose retrieve: and fuse: stages rank the corpus")
	f.StringVar(&cacheDir, "cache", "", "cache of embeddings for dense retrievers (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "embed afresh, without reading or writing the cache")
	pf = config.AddFlags(f)
	f.StringVar(&judgeKind, "judge", "", "judge candidates with a reranker: "+strings.Join(rerank.Kinds, ", "))
	f.StringVar(&judgeModel, "judge-model", "", "the judge's model name (HTTP and LLM rerankers)")
	f.StringVar(&judgeURL, "judge-url", "", "the judge server's base URL")
	f.StringVar(&judgeDir, "judge-model-dir", "", "onnx judge: a local cross-encoder directory")
	f.Float64Var(&judgeMin, "judge-min", 0, "keep candidates the judge scores at least this")
	f.Float64Var(&judgeMax, "judge-max", 0, "keep candidates the judge scores at most this (drops likely false negatives)")
	f.Float64Var(&judgeRel, "judge-relative", 0, "keep candidates scoring below this fraction of the query's lowest positive score (0.95 as NV-Retriever; 0: off)")
	f.StringSliceVar(&same, "same", nil, "metadata field(s) a negative's claiming query must share with the query (e.g. body_system)")
	f.StringSliceVar(&differ, "differ", nil, "metadata field(s) it must differ in (e.g. answer)")
	f.IntVar(&opts.Workers, "workers", 0, "goroutines (default: all CPUs); results do not depend on it")
	return cmd
}

// rankFlag tells the pipeline flags that shape a ranking (retrievers and
// fusion) from those of stages mining does not run.
func rankFlag(name string) bool {
	switch strings.TrimPrefix(name, "--") {
	case "name", "top-k", "keep-tail", "without-safeguard":
		return false
	}
	n := strings.TrimPrefix(name, "--")
	return !strings.HasPrefix(n, "gar") && !strings.HasPrefix(n, "rerank")
}
