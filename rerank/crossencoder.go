package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/tokenizer"
)

// Head says which logit of a cross-encoder is its relevance score.
type Head uint8

const (
	// AutoHead picks by the number of logits: one is read raw, two give
	// the logit of class 1.
	AutoHead Head = iota
	// SingleLogit reads a one-logit head raw, without a sigmoid, as R2MED
	// scores BAAI/bge-reranker-v2-m3 (and sentence-transformers'
	// CrossEncoder.predict returns it for one-label models).
	SingleLogit
	// RelevantClass reads logits[:, 1] of a two-class head, as R2MED scores
	// castorini/monobert-large-msmarco.
	RelevantClass
)

// CrossEncoderOptions tune NewCrossEncoder. The zero value follows R2MED.
type CrossEncoderOptions struct {
	// MaxLength is the pair's token budget, special tokens included;
	// 0 means 512, what R2MED always used. It is lowered to the model's
	// max_position_embeddings when config.json gives a smaller one.
	MaxLength int
	Head      Head
	// BatchSize is the pairs per forward pass; 0 means 32.
	BatchSize int
	// Threads for ONNX Runtime; 0 lets it choose.
	Threads int
}

// CrossEncoder scores query–document pairs with a local ONNX model: the
// pair is tokenized as [CLS] query [SEP] document [SEP] (longest-first
// truncation to MaxLength, as HF does), and the score is the head's
// relevance logit. It is safe for concurrent use.
//
// The tokenizer is the BERT-family WordPiece one of package tokenizer, so
// BERT-based rerankers (monoBERT, MiniLM and MedCPT cross-encoders) run
// locally; XLM-RoBERTa-based ones such as bge-reranker-v2-m3 have a
// SentencePiece tokenizer, which NewCrossEncoder refuses with that
// advice: serve them with TEI and use the TEI scorer.
type CrossEncoder struct {
	sess   *onnx.Session
	tok    *tokenizer.Tokenizer
	maxLen int
	batch  int
	col    int // logit column read
	dim    int
}

// NewCrossEncoder loads dir/model.onnx (or dir/onnx/model.onnx, where
// Optimum exports it) with dir/tokenizer.json and, if present,
// dir/config.json.
func NewCrossEncoder(dir string, opts CrossEncoderOptions) (*CrossEncoder, error) {
	if opts.MaxLength < 0 || opts.BatchSize < 0 {
		return nil, fmt.Errorf("cross-encoder max length %d and batch size %d must be ≥ 0", opts.MaxLength, opts.BatchSize)
	}
	if opts.Head > RelevantClass {
		return nil, fmt.Errorf("unknown cross-encoder head %d", opts.Head)
	}
	model := filepath.Join(dir, "model.onnx")
	if _, err := os.Stat(model); errors.Is(err, fs.ErrNotExist) {
		if alt := filepath.Join(dir, "onnx", "model.onnx"); fileExists(alt) {
			model = alt
		}
	}
	if !fileExists(model) {
		return nil, fmt.Errorf("%s: no model.onnx (nor onnx/model.onnx); export the reranker to ONNX first, e.g. optimum-cli export onnx --model castorini/monobert-large-msmarco %s", dir, dir)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("cross-encoder %s: %w (models with a SentencePiece tokenizer, such as bge-reranker-v2-m3, run through a TEI server: --rerank tei)", dir, err)
	}
	maxLen := opts.MaxLength
	if maxLen == 0 {
		maxLen = 512
	}
	if pos, err := maxPositions(filepath.Join(dir, "config.json")); err != nil {
		return nil, err
	} else if pos > 0 && pos < maxLen {
		maxLen = pos
	}
	sess, err := onnx.Open(model, onnx.Options{Threads: opts.Threads})
	if err != nil {
		return nil, err
	}
	ce := &CrossEncoder{sess: sess, tok: tok, maxLen: maxLen, batch: opts.BatchSize, dim: sess.Dim()}
	if ce.batch == 0 {
		ce.batch = 32
	}
	fail := func(format string, args ...any) (*CrossEncoder, error) {
		sess.Close()
		return nil, fmt.Errorf("%s: "+format, append([]any{model}, args...)...)
	}
	if sess.Rank() != 2 {
		return fail("output %s has rank %d; a cross-encoder's logits are [batch, labels]", sess.Output(), sess.Rank())
	}
	head := opts.Head
	if head == AutoHead {
		switch ce.dim {
		case 1:
			head = SingleLogit
		case 2:
			head = RelevantClass
		default:
			return fail("output %s has %d logits per pair; a reranker has 1 (bge-reranker style) or 2 (monoBERT style)", sess.Output(), ce.dim)
		}
	}
	switch {
	case head == SingleLogit && ce.dim != 1:
		return fail("a single-logit head was asked for, but output %s has %d logits per pair", sess.Output(), ce.dim)
	case head == RelevantClass && ce.dim < 2:
		return fail("the relevant-class head reads logit 1, but output %s has %d per pair", sess.Output(), ce.dim)
	case head == RelevantClass:
		ce.col = 1
	}
	return ce, nil
}

// MaxLength is the token budget pairs are truncated to.
func (c *CrossEncoder) MaxLength() int { return c.maxLen }

// Close releases the model.
func (c *CrossEncoder) Close() error { return c.sess.Close() }

// Score runs the pairs in batches; ctx is checked between batches, since a
// forward pass cannot be interrupted.
func (c *CrossEncoder) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	out := make([]float64, 0, len(docs))
	encs := make([]tokenizer.Encoding, 0, c.batch)
	for start := 0; start < len(docs); start += c.batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := docs[start:min(start+c.batch, len(docs))]
		encs = encs[:0]
		for _, d := range part {
			encs = append(encs, c.tok.EncodePair(query, d, c.maxLen))
		}
		b := c.tok.Pad(encs)
		t, err := c.sess.Run(onnx.Batch{IDs: b.IDs, TypeIDs: b.TypeIDs, AttentionMask: b.AttentionMask, Rows: b.Rows, Len: b.Len})
		if err != nil {
			return nil, err
		}
		if len(t.Shape) != 2 || t.Shape[0] != len(part) || t.Shape[1] != c.dim {
			return nil, fmt.Errorf("%s: output shape %v for %d pairs, want [%d %d]", c.sess.Path(), t.Shape, len(part), len(part), c.dim)
		}
		for r := range part {
			out = append(out, float64(t.Data[r*c.dim+c.col]))
		}
	}
	return out, nil
}

func maxPositions(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var cfg struct {
		MaxPositions int `json:"max_position_embeddings"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return cfg.MaxPositions, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
