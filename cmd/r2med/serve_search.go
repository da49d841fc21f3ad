package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/gar"
	"github.com/r2med/r2med/internal/httpserve"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/searchapi"
)

func init() {
	register(newServeSearchCmd)
	register(newSearchCmd)
}

// DefaultKeyEnv is the environment variable the search service's bearer
// key is read from.
const DefaultKeyEnv = "R2MED_SEARCH_KEY"

// watchEvery is how often serve-search looks for index files replaced
// under it.
const watchEvery = 2 * time.Second

// serviceFlags are the settings of a search service, shared by
// serve-search and search (which runs one in process).
type serviceFlags struct {
	indexes     []string
	defaults    []string
	fuse        fusion.Spec
	denseURLs   []string
	modelDir    string
	garModel    string
	garURLs     []string
	garStyle    string
	garDomain   string
	garKeyEnv   string
	rerankKind  string
	rerankSpec  rerank.Spec // model and model directory
	rerankURLs  []string
	rerankDepth int
	keepTail    bool
	cacheDir    string
	noCache     bool
	snippet     int
}

func (f *serviceFlags) add(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.indexes, "index", nil, "index file to search (from r2med index build), NAME=PATH to name it, or a directory of .idx files; repeat for more")
	fl.StringSliceVar(&f.defaults, "retriever", nil, "retrievers a query that names none uses (default: the first index's); several are fused")
	fl.StringVar(&f.fuse.Method, "fuse", "rrf", "fusion of several retrievers unless a query says: rrf or combsum")
	fl.Float64Var(&f.fuse.K, "rrf-k", fusion.DefaultRRFK, "RRF constant k")
	fl.StringVar(&f.fuse.Norm, "norm", "minmax", "combsum score normalization: minmax, zscore, none")
	fl.Float64SliceVar(&f.fuse.Weights, "weights", nil, "combsum weights, one per retriever")
	fl.StringArrayVar(&f.denseURLs, "base-url", nil, "dense indexes: the embedding server that embeds queries (default: $OPENAI_BASE_URL or the backend's); repeat, or give a file of URLs, for a fleet")
	fl.StringVar(&f.modelDir, "model-dir", "", "dense indexes with an onnx recipe: the local model directory (default: the Hub cache's copy)")
	fl.StringVar(&f.garModel, "gar-model", "", "let queries be expanded (gar=hyde|query2doc|lamer|reasoning|reasoning-append) by this model of an OpenAI-compatible server, with r2med run's sampling")
	fl.StringArrayVar(&f.garURLs, "gar-base-url", nil, "with --gar-model: the LLM server's API root (default $OPENAI_BASE_URL, then OpenAI); repeat, or give a file of URLs, for a fleet")
	fl.StringVar(&f.garStyle, "gar-style", "", "with --gar-model: prompt style, post, exam, case or similar-case (default: the task's)")
	fl.StringVar(&f.garDomain, "gar-domain", "", "with --gar-model: the post style's domain (default: the task's)")
	fl.StringVar(&f.garKeyEnv, "gar-key-env", "OPENAI_API_KEY", "with --gar-model: the environment variable holding the LLM server's key")
	fl.StringVar(&f.rerankKind, "rerank", "", "let queries be reranked (rerank=true) by: "+joinNames(rerank.Kinds))
	fl.StringVar(&f.rerankSpec.Model, "rerank-model", "", "reranker model name (HTTP/LLM)")
	fl.StringArrayVar(&f.rerankURLs, "rerank-url", nil, "reranker server base URL; repeat, or give a file of URLs, for a fleet")
	fl.StringVar(&f.rerankSpec.ModelDir, "rerank-model-dir", "", "onnx reranker: a local cross-encoder directory")
	fl.IntVar(&f.rerankDepth, "rerank-depth", rerank.DefaultDepth, "hits reranked unless a query says (R2MED: 10 or 100)")
	fl.BoolVar(&f.keepTail, "keep-tail", false, "keep the hits below the rerank depth after the reranked ones")
	fl.StringVar(&f.cacheDir, "cache", "", "cache of embeddings and LLM answers (default: $R2MED_CACHE, else ~/.cache/r2med); held while the service runs")
	fl.BoolVar(&f.noCache, "no-cache", false, "embed queries and ask the LLM afresh, without the cache")
	fl.IntVar(&f.snippet, "snippet", searchapi.DefaultSnippet, "bytes of each hit's document shown, with the matched words marked, unless a query says (0: none)")
}

// open builds the service the flags describe. Its closer closes the
// service and the cache.
func (f *serviceFlags) open(ctx context.Context, log io.Writer, limits searchapi.Limits) (*searchapi.Service, func(), error) {
	files, err := searchapi.ParseIndexArgs(f.indexes)
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("--index INDEX is required: an index file from r2med index build")
	}
	snippet := f.snippet
	if snippet == 0 {
		snippet = -1
	}
	opt := searchapi.Options{Default: f.defaults, Fuse: f.fuse, Dense: searchapi.DenseOptions{BaseURLs: f.denseURLs, ModelDir: f.modelDir},
		Limits: limits, Snippet: snippet, Env: retrieve.Env{Log: log}}
	var store *cache.Store
	closeAll := func() {
		if store != nil {
			store.Close()
		}
	}
	needCache := f.garModel != "" || rerank.UsesLLM(f.rerankKind) || searchapi.EmbedsQueries(files)
	if needCache && !f.noCache {
		if store, err = cache.Open(f.cacheDir, cache.Options{}); err != nil {
			return nil, nil, err
		}
		opt.Env.Cache = store
	}
	if f.garModel != "" {
		if opt.GAR, err = f.gar(store, log); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	if f.rerankKind != "" {
		spec := f.rerankSpec
		spec.Kind = f.rerankKind
		urls, err := httpx.ReadURLs(f.rerankURLs)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		if len(urls) > 0 {
			spec.BaseURL, spec.BaseURLs = urls[0], urls[1:]
		}
		if store != nil && rerank.UsesLLM(f.rerankKind) {
			spec.LLMCache = store
		}
		sc, err := rerank.New(spec)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		opt.Rerank = &searchapi.Rerank{Scorer: sc, Spec: spec, Depth: f.rerankDepth, KeepTail: f.keepTail}
		if c, ok := sc.(io.Closer); ok {
			prev := closeAll
			closeAll = func() { c.Close(); prev() }
		}
	}
	svc, err := searchapi.Open(ctx, files, opt)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return svc, func() { svc.Close(); closeAll() }, nil
}

// gar is run's generation (--gar-model) for the service: R2MED's
// sampling, the LLM client, the label, the prompt subject rule.
func (f *serviceFlags) gar(store *cache.Store, log io.Writer) (*searchapi.GAR, error) {
	g := gar.Default()
	g.Model, g.BaseURLs, g.Style, g.Domain, g.KeyEnv = f.garModel, f.garURLs, f.garStyle, f.garDomain, f.garKeyEnv
	if g.Style != "" {
		if _, err := expand.ParseStyle(g.Style); err != nil {
			return nil, err
		}
	}
	prompts, err := expand.LoadPrompts(g.Templates)
	if err != nil {
		return nil, err
	}
	opt := config.Remote{}.Generation(log)
	if store != nil {
		opt.Cache = store
	}
	client, err := g.Client(opt)
	if err != nil {
		return nil, err
	}
	return &searchapi.GAR{LLM: client, Label: g.LLMName(), Prompts: prompts, Request: g.Request(),
		Subject: func(task string) (expand.Subject, error) { return gar.SubjectOf(task, g) }}, nil
}

func newServeSearchCmd() *cobra.Command {
	var sf serviceFlags
	var addr, keyEnv string
	var allowHosts []string
	var limits searchapi.Limits
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "serve-search --index INDEX... [--addr 127.0.0.1:8081]",
		Short: "Serve stored indexes as a JSON search API: the ranking r2med run gives, with fusion, LLM expansion, reranking and snippets",
		Long: `serve-search answers queries over HTTP with exactly the ranking r2med run
gives them, from index files written by r2med index build:

  GET  /v1/search?q=TEXT&k=10&retriever=NAME   one query
  POST /v1/search {"query": TEXT, "k": 10}     one query; {"queries": [...]} a batch
  GET  /v1/doc/ID                              a document
  GET  /v1/retrievers                          the retrievers (one per index part)
  GET  /healthz, /metrics, /openapi.json       health, Prometheus, the API description

Each index file gives a retriever named after it (NAME=PATH names it; a
file holding vectors too gives NAME:dense besides). Queries may pick
several (fused as --fuse says unless they say), an expansion by the
--gar-model LLM (gar=hyde|query2doc|lamer|…) and a rerank by the --rerank
reranker; both are cached in the r2med cache as run caches them.

The service listens on loopback unless --addr says otherwise. On any other
address it needs a key of 16 characters or more, read from the environment
variable --key-env names (never from a flag, which ps would show); clients
send it as "Authorization: Bearer KEY". Requests must name this host (Host
header); POST bodies must be JSON (Content-Type: application/json); a
request from another site's page may not call a model. Bodies, k, batches,
hits per request, snippets and answers are bounded, large answers are sent
as they are made, the work under way at once is bounded (--max-in-flight;
a request past it gets 503 with Retry-After), and each request has
--timeout. SIGTERM or Ctrl-C stops it gracefully: requests in flight finish.

To roll out a new index, write it under another name in the same directory
and rename it over the served file (r2med index build --out DIR/LIVE.idx.new
&& mv DIR/LIVE.idx.new DIR/LIVE.idx; a mv across file systems copies into
the served file instead): the service opens it within seconds, and requests
under way finish on the old one; moving the served file away first is fine
too (the open copy answers meanwhile). SIGHUP reopens every file; a
directory given to --index is listed at start only, so a file added to it
later is served after a restart. A file overwritten or truncated in place
is never read again: its requests get 503 until a whole file is in place,
and /healthz says degraded meanwhile.`,
		Example: `  r2med index build --data ../shared/data/nfcorpus --out nfcorpus.idx
  r2med serve-search --index nfcorpus.idx
  curl 'http://127.0.0.1:8081/v1/search?q=vitamin+d+and+depression&k=5'
  R2MED_SEARCH_KEY=secret r2med serve-search --index indexes/ --addr 0.0.0.0:8081 --allow-host search.example.org`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key := os.Getenv(keyEnv)
			if !httpserve.Loopback(addr) && key == "" {
				return fmt.Errorf("--addr %s is reachable from other machines, so the service needs a key: set it in $%s (or name another variable with --key-env); clients send Authorization: Bearer KEY", addr, keyEnv)
			}
			if err := httpserve.CheckKey(key, keyEnv); err != nil {
				return err
			}
			svc, closeAll, err := sf.open(cmd.Context(), cmd.ErrOrStderr(), limits)
			if err != nil {
				return err
			}
			defer closeAll()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			h := svc.Handler(searchapi.HandlerOptions{Addr: addr, AllowHosts: allowHosts, Key: key})
			names := ""
			for i, r := range svc.Retrievers() {
				if i > 0 {
					names += ", "
				}
				names += r.Name
			}
			auth := ""
			if key != "" {
				auth = " (key required)"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "serving %s at http://%s/v1/search%s — Ctrl-C to stop\n", names, ln.Addr(), auth)
			// A file that opened with a damaged section serves what it
			// can; say so now, not only to whoever asks /healthz.
			for _, p := range svc.Health().Problems {
				fmt.Fprintf(cmd.ErrOrStderr(), "degraded: %s (GET /healthz answers 503 until it is fixed)\n", p)
			}
			// Index files renamed over (or changed in place) are opened
			// again as Watch finds them; SIGHUP reopens them all.
			go svc.Watch(cmd.Context(), watchEvery)
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go func() {
				for {
					select {
					case <-cmd.Context().Done():
						return
					case <-hup:
						if err := svc.Reload(cmd.Context()); err != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "SIGHUP: %v\n", err)
						} else {
							fmt.Fprintf(cmd.ErrOrStderr(), "SIGHUP: reopened every index file\n")
						}
					}
				}
			}()
			t := httpserve.DefaultTimeouts
			t.Write = limits.Timeout + 30*time.Second
			t.Shutdown = grace
			return httpserve.Serve(cmd.Context(), ln, h, t)
		},
	}
	fl := cmd.Flags()
	sf.add(fl)
	fl.StringVar(&addr, "addr", "127.0.0.1:8081", "address to listen on (loopback unless you give another; then a key is required)")
	fl.StringArrayVar(&allowHosts, "allow-host", nil, "another host name requests may give (the machine's name when serving on 0.0.0.0); repeat for more")
	fl.StringVar(&keyEnv, "key-env", DefaultKeyEnv, "environment variable holding the bearer key (required on a non-loopback --addr)")
	fl.IntVar(&limits.MaxK, "max-k", searchapi.DefaultLimits.MaxK, "most hits one query may ask for")
	fl.IntVar(&limits.MaxBatch, "max-batch", searchapi.DefaultLimits.MaxBatch, "most queries one request may hold")
	fl.IntVar(&limits.MaxHits, "max-hits", searchapi.DefaultLimits.MaxHits, "most hits one request may ask for, k summed over its queries")
	fl.IntVar(&limits.MaxSnippet, "max-snippet", searchapi.DefaultLimits.MaxSnippet, "longest snippet a query may ask for, in bytes (GET /v1/doc/ID gives a whole document)")
	fl.Int64Var(&limits.MaxResponse, "max-response", searchapi.DefaultLimits.MaxResponse, "largest answer to one request, in bytes (answers are sent as they are made)")
	fl.Int64Var(&limits.MaxInFlight, "max-in-flight", searchapi.DefaultLimits.MaxInFlight, "most work under way at once, as the estimated bytes of the answers being made; a request that does not fit gets 503 with Retry-After")
	fl.Int64Var(&limits.MaxBody, "max-body", searchapi.DefaultLimits.MaxBody, "largest request body, in bytes")
	fl.DurationVar(&limits.Timeout, "timeout", searchapi.DefaultLimits.Timeout, "longest a request may take (an LLM expansion included)")
	fl.DurationVar(&grace, "shutdown-grace", httpserve.DefaultTimeouts.Shutdown, "how long requests in flight may take to finish after SIGTERM")
	return cmd
}
