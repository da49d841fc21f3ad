package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
	// Imported under another name: package main has a func usage.
	costs "github.com/r2med/r2med/usage"
)

func init() { register(newRerankCmd) }

func newRerankCmd() *cobra.Command {
	var d dataFlags
	var spec rerank.Spec
	var runPath, candidates, out, tag, ties, head, cacheDir string
	var urls []string
	var depth, workers int
	var keepTail, withoutSafeguard, quiet, noCache, noEval bool
	var calls callFlags
	var rf *config.RemoteFlags
	cmd := &cobra.Command{
		Use:   "rerank (--run RUN | --candidates CONFIG) --rerank KIND --out RUN",
		Short: "Rerank the top of a run or of a Nano set's candidate lists; write the reranked run",
		Long: `rerank reorders the top --rerank-depth documents of each query with a
reranker and writes a TREC run. As in R2MED, only the reranked documents are
kept (with --rerank-depth 10, recall@100 equals recall@10); --keep-tail
appends the rest below them. The task flags (--task, --suite, --data) give the query and document
texts, and its qrels, when it has any, score the run before and after.

Input: --run RUN (a TREC run of this task, e.g. from r2med run), or
--candidates CONFIG, a candidate list published with a Nano set, by its
config or its task card's name (NanoR2MED: bm25, dense for
harrier_oss_v1_270m, reranking_hybrid); lists published without scores
show InsertRank their ranks, said to be ranks. A reranking_hybrid
list is the RRF top 100 plus, for queries where that holds no positive,
one positive at rank 101 (the safeguard): it is reranked with the rest at
depth 100 (HAKARI-Bench's "reranking" score), and --without-safeguard drops
it first ("reranking_without_safeguard").

Rerankers (--rerank):
  tei            text-embeddings-inference, POST {base}/rerank (raw logits)
  cohere|jina|voyage
                 the /v1/rerank API of that provider (key from --rerank-api-key
                 or COHERE_API_KEY, JINA_API_KEY, VOYAGE_API_KEY), or of any
                 compatible server given by --rerank-url (vLLM, Infinity)
  llm-pointwise  an OpenAI-compatible chat model: p(yes) from logprobs
  llm-listwise   an OpenAI-compatible chat model: RankGPT sliding windows
                 (20 passages, step 10)
  onnx           a local BERT-family cross-encoder (--rerank-model-dir with
                 model.onnx and tokenizer.json; one logit read raw, two read
                 at class 1)
  insertrank     InsertRank (arXiv 2506.14086): RankGPT windows with each
                 passage's first-stage score in the prompt (--insertrank-scores)
  rank1          Rank1 (arXiv 2502.18418): reason, then judge true/false;
                 scored from the answer's logprobs, else its text
  reasonrank     ReasonRank (arXiv 2508.07050): reason, then a permutation in
                 <answer></answer>; repairs and fallbacks counted
  grouprank      GroupRank (arXiv 2511.11653): groups of --grouprank-size
                 passages judged together, each scored 0-10 on one absolute
                 scale (comparable across groups), --grouprank-repeats passes
                 in other orders averaged
  diver          DIVER's merge (arXiv 2508.07995) of a pointwise and a listwise
                 reranker (--merge-pointwise rank1, --merge-listwise
                 reasonrank): 0.6 x -ln(pointwise rank) + 0.4 x -ln(listwise
                 rank) (--merge-weight)
The reasoning rerankers use editable prompts (r2med rerank templates) and
keep their reasoning in OUT.trace.jsonl.

Ties: --ties input keeps the input order among equal scores (a --run's
order as trec_eval reads it: by score, equal scores by doc id descending);
--ties hash is HAKARI-Bench's sha256 candidate order (the default for a
reranking_hybrid list, as in r2med run). Equal scores are written one
float32 step apart in that order, so trec_eval and every other evaluator
rank the output as reranked. An interrupted rerank resumes from
OUT.partial. OUT.manifest.json records how the run was made, as r2med run's
manifest does: the task and the checksums of what was read, the reranker's
settings (kind, model, depth, sampling, prompts), its counts (rerank_*:
calls, answers from the cache, answers it could not use as intended), the
calls' usage (the model the server answered with; dollars with --prices)
and the run's checksum.

--rerank-url may be repeated (or name a file of URLs) for a fleet of
servers of one model, bounded by --endpoint-concurrency, each request by
--request-timeout and --retries. --replay answers from the LLM cache alone
and sends nothing; --prices prints what the answers cost.

The flags that say which reranker to use are named as in r2med run
(--rerank, --rerank-model, --rerank-url, --rerank-model-dir, --rerank-depth);
the older --reranker, --model, --base-url, --model-dir and --depth still
work but are deprecated.`,
		Example: `  r2med rerank --task Biology --run out/bm25/run.trec --rerank tei --rerank-url http://localhost:8080 --rerank-depth 10 --out bio.tei.trec
  r2med rerank --task MedQA-Diag --suite nano --candidates reranking_hybrid --rerank onnx --rerank-model-dir models/monobert --out medqa.mono.trec
  r2med rerank --task MedQA-Diag --suite nano --candidates reranking_hybrid --without-safeguard --rerank cohere --rerank-model rerank-v3.5 --out medqa.cohere.trec
  r2med rerank --task demo --run run.trec --rerank llm-listwise --rerank-url http://localhost:8000/v1 --rerank-model Qwen/Qwen2.5-7B-Instruct --out listwise.trec`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out RUN is required: the reranked run is written there")
			}
			if err := fileio.NotDir(out); err != nil {
				return err
			}
			if (runPath == "") == (candidates == "") {
				return errors.New("give the documents to rerank: --run RUN (a TREC run) or --candidates CONFIG (a Nano set's candidate lists), not both")
			}
			spec.Kind = strings.ToLower(spec.Kind) // as rerank.New reads it; the cache and the tag use it too
			if depth == 0 || depth < -1 {
				return fmt.Errorf("--rerank-depth must be positive (R2MED: 10 or 100), or -1 for every document; got %d", depth)
			}
			if ties != "" && ties != plan.TiesInput && ties != plan.TiesHash {
				return fmt.Errorf("unknown --ties %q (input or hash)", ties)
			}
			switch head {
			case "auto":
			case "single":
				spec.CrossEncoder.Head = rerank.SingleLogit
			case "class1":
				spec.CrossEncoder.Head = rerank.RelevantClass
			default:
				return fmt.Errorf("unknown --head %q (auto, single or class1)", head)
			}
			if spec.Kind != "onnx" {
				// --max-length, --batch-size and --head are the
				// cross-encoder's: another reranker has none to record.
				spec.CrossEncoder = rerank.CrossEncoderOptions{}
			}
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			if len(srcs) != 1 {
				return fmt.Errorf("rerank works on one task at a time; --task names %d", len(srcs))
			}
			t, err := srcs[0].Load(cmd.Context())
			if err != nil {
				return err
			}
			// The input is the plan's retriever: a run file, named by the
			// system it holds, or a Nano set's candidate list.
			var first plan.Retriever
			if runPath != "" {
				name, err := retrieve.RunSystem(runPath)
				if err != nil {
					return err
				}
				first = plan.Retriever{Spec: retrieve.RunFile{Path: runPath}, Name: name}
			} else {
				if t.Layout != ir.LayoutNanoHub {
					return fmt.Errorf("--candidates reads a Nano set's candidate lists; task %s has none (use --task NAME --suite nano, or --data with a Nano set)", t.Name)
				}
				first = plan.Retriever{Spec: retrieve.Candidates{Config: candidates}}
			}

			if urls, err = httpx.ReadURLs(urls); err != nil {
				return err
			}
			if len(urls) > 0 {
				spec.BaseURL, spec.BaseURLs = urls[0], urls[1:]
			}
			remote, err := rf.Apply(config.Remote{})
			if err != nil {
				return err
			}
			hc := remote.Client(cmd.ErrOrStderr(), "rerank")
			spec.HTTP, spec.Fleet, spec.Replay = &hc, remote.Fleet(cmd.ErrOrStderr()), calls.replay
			prices, err := calls.read(noCache)
			if err != nil {
				return err
			}
			if rerank.UsesLLM(spec.Kind) && !noCache {
				store, err := cache.Open(cacheDir, cache.Options{})
				if err != nil {
					return err
				}
				defer store.Close()
				spec.LLMCache = store
			}
			// Every document of the input is read and kept: only the rerank
			// decides what the output holds (the depth, --keep-tail).
			ps, err := plan.Spec{Retrievers: []plan.Retriever{first}, K: max(1, len(t.Corpus)),
				Rerank: &plan.Rerank{Scorer: spec, Depth: depth, KeepTail: keepTail, WithoutSafeguard: withoutSafeguard, Ties: ties, Workers: workers}}.Resolve(cmd.Context(), t)
			if err != nil {
				return err
			}
			p, err := plan.New(ps)
			if err != nil {
				return err
			}
			checkpoint := out + ".partial"
			meter := newMeter()
			// The record counts what the retriever did, such as the hits
			// it removed for the task's exclusions (as every retriever
			// does).
			record := results.NewManifest(os.Args)
			if err := pipeline.RecordInputs(record, t, ps); err != nil {
				return err
			}
			env := plan.Env{Checkpoint: checkpoint, Env: retrieve.Env{AllowMissingDocs: d.opts.AllowMissingDocs, Log: cmd.ErrOrStderr(), Progress: progress.Auto(quiet), Meter: meter, Record: record}}
			res, err := p.Execute(cmd.Context(), plan.Input{Task: t}, env)
			if err != nil {
				// The rerank keeps its checkpoint when it holds finished
				// queries; the rerun resumes from it.
				return keptForResume(err, checkpoint)
			}
			if len(t.Excluded) > 0 {
				n := record.Counts[retrieve.HitsExcluded]
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d excluded %s removed before reranking\n", t.Name, n, errtext.Plural(n, "hit", "hits"))
			}
			tag := tag
			if tag == "" {
				tag = ps.Tag()
			}
			if err := trec.WriteRunFile(out, res.Run, tag); err != nil {
				return err
			}
			resumed := ""
			if n := record.Counts[plan.ResumedQueries]; n > 0 {
				// The queries the checkpoint held made their calls in the
				// attempt that was interrupted, which counted them.
				resumed = fmt.Sprintf("%d %s reranked by an interrupted attempt (kept in %s): the answers, tokens and cost here are this attempt's", n, errtext.Plural(n, "query was", "queries were"), checkpoint)
				record.Note("resumed", resumed)
			}
			spent := meter.Summary(len(res.Run), prices)
			if err := writeRerankManifest(record, t, ps, res, &spent, out); err != nil {
				return err
			}
			// The checkpoint goes once the run it feeds is safely written.
			if err := os.Remove(checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: reranked %d queries with %s → %s\n", t.Name, len(res.Run), spec.Kind, out)
			printRerankDepth(w, res.Ranked, res.Run, depth, keepTail)
			if resumed != "" {
				fmt.Fprintf(w, "  resumed: %s\n", resumed)
			}
			if res.Stats != nil {
				printRerankStats(w, *res.Stats)
			}
			for _, l := range meter.Lines() {
				if len(l.Served) > 0 {
					fmt.Fprintf(w, "  %s was answered by %s (the server's name for the model)\n", l.Model, strings.Join(l.Served, ", "))
				}
			}
			if calls.prices != "" {
				printCost(w, spent)
			}
			printRerankTrace(w, checkpoint)
			if noEval || len(t.Qrels) == 0 {
				return nil
			}
			return printRerankEval(w, t, res.Ranked, res.Run)
		},
	}
	addDataFlags(cmd, &d)
	cmd.AddCommand(newRerankTemplatesCmd())
	f := cmd.Flags()
	addReasoningRerankFlags(f, &spec)
	f.StringVar(&runPath, "run", "", "TREC run to rerank (its query and document ids must belong to the task)")
	f.StringVar(&candidates, "candidates", "", "rerank a Nano set's published candidate lists instead: bm25, harrier_oss_v1_270m or reranking_hybrid")
	f.StringVar(&spec.Kind, "rerank", "", "reranker: "+strings.Join(rerank.Kinds, ", "))
	f.StringVar(&spec.Model, "rerank-model", "", "model name the server serves (cohere/jina/voyage, LLM kinds)")
	f.StringArrayVar(&urls, "rerank-url", nil, "server base URL (tei: http://host:8080; LLM: http://host:8000/v1; cohere/jina/voyage: a compatible server instead of the hosted API); repeat it, or give a file of URLs, for a fleet of servers of one model")
	f.StringVar(&spec.APIKey, "rerank-api-key", "", "API key (default: COHERE_API_KEY, JINA_API_KEY, VOYAGE_API_KEY or OPENAI_API_KEY by reranker); never printed")
	f.StringVar(&spec.ModelDir, "rerank-model-dir", "", "onnx: directory with model.onnx and tokenizer.json")
	f.IntVar(&spec.CrossEncoder.MaxLength, "max-length", 512, "onnx: token budget of a query–document pair (R2MED: 512)")
	f.IntVar(&spec.CrossEncoder.BatchSize, "batch-size", 32, "onnx: pairs per forward pass")
	f.StringVar(&head, "head", "auto", "onnx: relevance logit: auto (by the number of logits), single (raw, bge-reranker style) or class1 (monoBERT style)")
	f.IntVar(&spec.Concurrency, "llm-concurrency", 8, "llm-pointwise, rank1, grouprank: requests in flight per query")
	f.IntVar(&workers, "concurrency", 1, "queries reranked at the same time")
	f.IntVar(&depth, "rerank-depth", rerank.DefaultDepth, "documents reranked per query (R2MED: 10 or 100; -1 for all); only they are kept unless --keep-tail")
	f.BoolVar(&keepTail, "keep-tail", false, "append the documents below --rerank-depth after the reranked ones (R2MED drops them)")
	f.BoolVar(&withoutSafeguard, "without-safeguard", false, "drop a reranking_hybrid list's rank-101 safeguard before reranking (HAKARI's reranking_without_safeguard)")
	f.StringVar(&ties, "ties", "", "order of equal scores: input, or hash (HAKARI-Bench); default hash for a reranking_hybrid list, else input (as r2med run)")
	f.StringVar(&cacheDir, "cache", "", "LLM answer cache directory (default $R2MED_CACHE or ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "do not cache LLM answers")
	f.BoolVar(&noEval, "no-eval", false, "do not score the run against the task's qrels")
	f.StringVar(&out, "out", "", "reranked run file to write (required)")
	f.StringVar(&tag, "tag", "", `run tag in the last column (default: the system's name, "bm25→insertrank:MODEL@DEPTH", the input named by its own tag)`)
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	calls.add(f, "answer from the LLM cache alone and send nothing; a prompt the cache lacks is an error (rerankers whose scores are not cached refuse every request)",
		"price table (as r2med run --prices): print what the LLM answers cost")
	rf = config.AddRemoteFlags(f)
	// The names before rerank and run shared theirs.
	for _, a := range [][2]string{{"reranker", "rerank"}, {"model", "rerank-model"}, {"base-url", "rerank-url"}, {"model-dir", "rerank-model-dir"}, {"depth", "rerank-depth"}} {
		aliasFlag(f, a[0], a[1])
	}
	return cmd
}

// rerankManifestSuffix names the manifest r2med rerank writes beside its
// run: OUT.manifest.json.
const rerankManifestSuffix = ".manifest.json"

// writeRerankManifest records beside the run how it was made, as a run's
// manifest does: to the task and the checksums of what was read
// (pipeline.RecordInputs) and the reranker's counts the execution
// recorded (rerank_*: calls, answers from the cache, those it could not
// use as intended), it adds the settings (config.rerank: kind, model,
// depth, sampling and prompts), the calls' usage and cost, and the run's
// checksum.
func writeRerankManifest(m *results.Manifest, t *ir.Task, ps plan.Spec, res *plan.Result, u *costs.Summary, out string) error {
	m.Config = ps.Describe()
	m.Count("queries", len(t.Queries))
	m.Count("queries_ranked", len(res.Run))
	hits := 0
	for _, h := range res.Run {
		hits += len(h)
	}
	m.Count("hits", hits)
	m.Count("run_depth", res.Run.Depth())
	m.Usage = u
	d, err := results.Digest(out)
	if err != nil {
		return err
	}
	m.Outputs = []string{filepath.Base(out)}
	m.OutputSHA256 = map[string]string{filepath.Base(out): d.SHA256}
	return m.WriteFile(out + rerankManifestSuffix)
}

// printRerankDepth says where the documents below the depth went: left
// out, as R2MED leaves them (the run holds fewer documents than its
// input), or after the reranked ones with --keep-tail.
func printRerankDepth(w io.Writer, in, out ir.Run, depth int, keepTail bool) {
	if depth < 0 {
		return
	}
	var left, kept int
	for qid, hits := range in {
		left += max(0, len(hits)-len(out[qid]))
		kept += max(0, len(out[qid])-depth)
	}
	switch {
	case keepTail && kept > 0:
		fmt.Fprintf(w, "  --keep-tail: %d %s below each query's top %d follow the reranked ones unreranked, in their input order\n", kept, errtext.Plural(kept, "document", "documents"), depth)
	case left > 0:
		fmt.Fprintf(w, "  only each query's reranked top %d is kept, as in R2MED: %d %s of the input below it left out (--keep-tail keeps them)\n", depth, left, errtext.Plural(left, "document", "documents"))
	}
}

func printRerankStats(w io.Writer, s rerank.Stats) {
	if s.Calls > 0 {
		fmt.Fprintf(w, "  LLM: %d answers (%d from the cache), %d prompt + %d completion tokens\n", s.Calls, s.Cached, s.PromptTokens, s.CompletionTokens)
	}
	if notes := s.Notes(); len(notes) > 0 {
		fmt.Fprintf(w, "  LLM answers (%d, from the cache or not): %s\n", s.Calls, strings.Join(notes, "; "))
	}
}

// printRerankEval prints trec_eval's numbers (R2MED's) before and after,
// the MRR named for the lists' depth where a BRIGHT task's MRR would read
// deeper (results.MRRLabel).
func printRerankEval(w io.Writer, t *ir.Task, before, after ir.Run) error {
	b, err := measure.EvaluateR2MED(t.Qrels, before)
	if err != nil {
		return err
	}
	a, err := measure.EvaluateR2MED(t.Qrels, after)
	if err != nil {
		return err
	}
	mrr := results.MRRLabel(t.Name, after.Depth(), len(t.Corpus))
	if in := results.MRRLabel(t.Name, before.Depth(), len(t.Corpus)); in != mrr {
		fmt.Fprintf(w, "  MRR: the input's is its %s, the reranked run's its %s (BRIGHT's run.py reads each query's top %d)\n", in, mrr, results.BrightMRRDepth)
		mrr = "MRR"
	}
	keys := []struct{ key, label string }{{"ndcg_at_10", "nDCG@10"}, {"recall_at_10", "Recall@10"}, {"recall_at_100", "Recall@100"}, {"mrr", mrr}}
	fmt.Fprintf(w, "  %-8s", "")
	for _, k := range keys {
		fmt.Fprintf(w, " %10s", k.label)
	}
	for _, row := range []struct {
		name string
		s    map[string]float64
	}{{"input", b.Scores}, {"reranked", a.Scores}} {
		fmt.Fprintf(w, "\n  %-8s", row.name)
		for _, k := range keys {
			fmt.Fprintf(w, " %10.4f", row.s[k.key])
		}
	}
	_, err = fmt.Fprintln(w)
	return err
}
