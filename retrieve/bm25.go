package retrieve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
)

// BM25 is lexical retrieval with an analyzer and a BM25 scheme: R2MED's
// (gensim's formula, float32 sums in term-id order), Lucene's
// BM25Similarity or bm25s's Robertson variant (package bm25 says where
// each is exact).
type BM25 struct {
	Analyzer string // analysis.Get name
	Params   bm25.Params
}

// DefaultBM25 is R2MED's BM25: the lucene-english analyzer, k1 0.9, b 0.4.
func DefaultBM25() BM25 {
	return BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(bm25.R2MED)}
}

func init() {
	Register(Kind{
		Name:  "bm25",
		Usage: "bm25",
		Help:  "BM25 over the analyzed corpus, set by --bm25, --k1, --b and --analyzer",
		Parse: parseBM25,
		Flags: []Flag{
			{Name: "bm25", Key: "scheme", Default: "r2med", Usage: "BM25 scoring: r2med (gensim, as R2MED published), lucene (Lucene ≥8 BM25Similarity), robertson (bm25s, HAKARI-Bench)"},
			{Name: "k1", Key: "k1", Type: Float, Usage: "BM25 k1 (default: the scheme's, 0.9 for r2med/lucene, 1.5 for robertson)"},
			{Name: "b", Key: "b", Type: Float, Usage: "BM25 b (default: the scheme's, 0.4 for r2med/lucene, 0.75 for robertson)"},
			{Name: "analyzer", Key: "analyzer", Default: "lucene-english", Usage: "analyzer for documents and queries"},
		},
	})
}

// bm25File is the YAML form: bm25: {scheme: lucene, k1: 1.2, b: 0.75,
// analyzer: lucene-english}; every key optional.
type bm25File struct {
	Scheme   string   `yaml:"scheme"`
	K1       *float64 `yaml:"k1"`
	B        *float64 `yaml:"b"`
	Analyzer string   `yaml:"analyzer"`
}

func parseBM25(value *yaml.Node) (Spec, error) {
	var f bm25File
	if err := DecodeSettings(value, &f, "bm25"); err != nil {
		return nil, err
	}
	s := DefaultBM25()
	if f.Scheme != "" {
		sc, err := bm25.ParseScheme(f.Scheme)
		if err != nil {
			return nil, yamlx.Errorf(yamlx.Get(value, "scheme"), "%v", err)
		}
		s.Params = bm25.DefaultParams(sc)
	}
	if f.K1 != nil {
		s.Params.K1 = *f.K1
	}
	if f.B != nil {
		s.Params.B = *f.B
	}
	if f.Analyzer != "" {
		s.Analyzer = f.Analyzer
	}
	return s, nil
}

// Kind is "bm25".
func (s BM25) Kind() string { return "bm25" }

// Name is "bm25" for R2MED's scheme, else "bm25-SCHEME".
func (s BM25) Name() string {
	if s.Params.Scheme != bm25.R2MED {
		return "bm25-" + string(s.Params.Scheme)
	}
	return "bm25"
}

// Validate checks the analyzer and the scheme.
func (s BM25) Validate() error {
	if s.Analyzer == "" {
		return errors.New("bm25 needs an analyzer")
	}
	if err := analysis.Check(s.Analyzer); err != nil {
		return err
	}
	_, err := bm25.ParseScheme(string(s.Params.Scheme))
	return err
}

// Describe records the analyzer, scheme, k1 and b.
func (s BM25) Describe() map[string]any {
	return map[string]any{"retriever": "bm25", "analyzer": s.Analyzer, "bm25_scheme": string(s.Params.Scheme), "k1": s.Params.K1, "b": s.Params.B}
}

// Inputs is none: BM25 reads the task only.
func (s BM25) Inputs(*ir.Task) ([]string, error) { return nil, nil }

// New indexes task's corpus (stage "index"; counts "terms", "postings").
func (s BM25) New(ctx context.Context, task *ir.Task, env Env) (Retriever, error) {
	an, err := analysis.Get(s.Analyzer)
	if err != nil {
		return nil, err
	}
	r := &bm25Retriever{an: an, env: env, name: task.Name, ids: make([]string, len(task.Corpus))}
	for i, d := range task.Corpus {
		r.ids[i] = d.ID
	}
	err = env.Time("index", func() error {
		bar := env.Progress.New(len(task.Corpus), "indexing "+task.Name)
		defer bar.Done()
		tokenize := func(i int, dst []string) []string { return an.Analyze(dst, task.Corpus[i].Text) }
		bo := bm25.BuildOptions{Workers: env.NumWorkers(), IDs: r.ids, Progress: bar.Add}
		if ch, ok := an.(*analysis.Chain); ok {
			// Let the indexer filter each distinct raw token once.
			tokenize = func(i int, dst []string) []string { return ch.Tokenizer.Tokenize(dst, task.Corpus[i].Text) }
			bo.Terms = ch.Term
		}
		var err error
		r.ix, err = bm25.Build(len(task.Corpus), tokenize, s.Params, bo)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env.Count("terms", r.ix.NumTerms())
	env.Count("postings", r.ix.NumPostings())
	r.searchers.New = func() any { return &bm25Searcher{s: r.ix.NewSearcher()} }
	return r, nil
}

type bm25Retriever struct {
	an        analysis.Analyzer
	ix        *bm25.Index
	ids       []string
	env       Env
	name      string
	searchers sync.Pool // *bm25Searcher, for SearchOne
}

type bm25Searcher struct {
	s    *bm25.Searcher
	toks []string
}

func (r *bm25Retriever) hits(hs []bm25.Hit) []ir.Hit {
	list := make([]ir.Hit, len(hs))
	for j, h := range hs {
		list[j] = ir.Hit{DocID: r.ids[h.Doc], Score: float64(h.Score)}
	}
	return list
}

// Search analyzes and scores the queries on Env.Workers searchers (stage
// "search").
func (r *bm25Retriever) Search(ctx context.Context, queries []Query, k int) (ir.Run, error) {
	run := make(ir.Run, len(queries))
	err := r.env.Time("search", func() error {
		bar := r.env.Progress.New(len(queries), "searching "+r.name)
		defer bar.Done()
		hits := make([][]bm25.Hit, len(queries))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(r.env.NumWorkers(), max(1, len(queries))) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := r.ix.NewSearcher()
				var toks []string
				for {
					i := int(next.Add(1) - 1)
					if i >= len(queries) || ctx.Err() != nil {
						return
					}
					toks = r.an.Analyze(toks[:0], queries[i].Text)
					hits[i] = s.Search(toks, k)
					bar.Add(1)
				}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, q := range queries {
			run[q.ID] = r.hits(hits[i])
		}
		return nil
	})
	return run, err
}

// Exhaustive: BM25 scores every document (see Exhaustive).
func (r *bm25Retriever) Exhaustive() bool { return true }

// SearchOne scores one query with a pooled searcher.
func (r *bm25Retriever) SearchOne(ctx context.Context, q Query, k int) ([]ir.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.searchers.Get().(*bm25Searcher)
	defer r.searchers.Put(s)
	s.toks = r.an.Analyze(s.toks[:0], q.Text)
	return r.hits(s.s.Search(s.toks, k)), nil
}
