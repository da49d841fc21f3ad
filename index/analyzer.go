package index

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
)

// probeText exercises what an analyzer may do to clinical text: case,
// possessives, stop words, stemming, hyphens and slashes, numbers with
// units and decimals, abbreviations, non-ASCII letters and symbols. Its
// terms, hashed, stand for the analyzer's behaviour in the file: an
// analyzer that changes any of these changes the digest.
const probeText = `A 54-year-old woman's HbA1c was 7.8% (target <7) on metformin 500mg b.i.d.; ` +
	`she reports polyuria, polydipsia and paresthesias in both feet. The patients' ` +
	`eGFR=58 mL/min/1.73m². Differential: diabetic neuropathy vs. B12 deficiency ` +
	`(café-au-lait spots absent); IL-6/TNF-α levels, p53-mediated apoptosis, ` +
	`Sjögren's syndrome, naïve T-cells, running runs ran runner ® ™ 😀 東京 e.g. U.S.A. ` +
	`x-ray CT/MRI 3.5×10⁹/L 12:30 2024-01-15 don't isn't`

// analyzerDigest is the sha256 of the terms an analyzer makes of the probe
// text, each followed by a newline.
func analyzerDigest(an analysis.Analyzer) string {
	h := sha256.New()
	for _, t := range an.Analyze(nil, probeText) {
		h.Write([]byte(t))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// BuildBM25 analyzes docs with the named analyzer ("" is
// analysis.DefaultName) and builds their BM25 index, as R2MED's pipeline
// does: document ids given for Lucene's tie order, and with an analyzer
// chain each distinct raw token filtered once (bm25.BuildOptions.Terms),
// which gives the index analyzing every token would give, faster.
// opt.IDs and opt.Terms are set here.
func BuildBM25(docs []ir.Doc, analyzer string, p bm25.Params, opt bm25.BuildOptions) (*bm25.Index, error) {
	an, err := analysis.Get(analyzer)
	if err != nil {
		return nil, err
	}
	opt.IDs = make([]string, len(docs))
	for i, d := range docs {
		opt.IDs[i] = d.ID
	}
	tokenize := func(i int, dst []string) []string { return an.Analyze(dst, docs[i].Text) }
	opt.Terms = nil
	if ch, ok := an.(*analysis.Chain); ok {
		tokenize = func(i int, dst []string) []string { return ch.Tokenizer.Tokenize(dst, docs[i].Text) }
		opt.Terms = ch.Term
	}
	return bm25.Build(len(docs), tokenize, p, opt)
}
