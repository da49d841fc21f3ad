// Package onnx runs BERT-shaped ONNX models (encoders and cross-encoders)
// with ONNX Runtime through github.com/yalue/onnxruntime_go.
//
// ONNX Runtime is a shared library loaded at run time, not linked: Init
// finds it through ONNXRUNTIME_LIB or the usual places (see FindLibrary)
// and starts the runtime once per process. The wrapper needs cgo; a build
// with CGO_ENABLED=0 still compiles this package, and then every
// constructor returns ErrUnavailable, so the binary works with HTTP
// embedding backends and says clearly why local inference does not.
//
// A Session takes a padded batch of token ids, row-major int64 as the
// tokenizer produces it, and returns the model's float32 output with its
// shape; inputs are matched by name (input_ids, attention_mask,
// token_type_ids) and the output is chosen by name (last_hidden_state,
// logits, or a pooled sentence embedding).
package onnx

import (
	"errors"
	"fmt"
)

// ErrUnavailable is returned by every constructor of a build without cgo.
var ErrUnavailable = errors.New("local ONNX inference is unavailable in this build (built without cgo); " +
	"use an HTTP backend (--backend openai|tei|voyage) or rebuild with CGO_ENABLED=1")

// Options tune a Session. The zero value works.
type Options struct {
	// Threads is ONNX Runtime's intra-op thread count; 0 lets it choose
	// (one per physical core).
	Threads int
	// Output names the output to read. Empty picks the first present of
	// PreferredOutputs, else the model's only float output.
	Output string
}

// PreferredOutputs are the output names Open looks for, in order: token
// vectors first (pooling is then ours to choose), then classifier logits,
// then outputs a model pools itself. pooler_output is deliberately absent:
// it is BERT's tanh-projected CLS vector, which no retrieval recipe uses.
var PreferredOutputs = []string{
	"last_hidden_state", "token_embeddings", "logits",
	"sentence_embedding", "sentence_embeddings", "embeddings", "text_embeds",
}

// Batch is a padded batch of token sequences, each slice row-major
// [Rows, Len] as tokenizer.Pad returns it. TypeIDs and AttentionMask may
// be nil, meaning all zeros and all ones, for models that take them.
type Batch struct {
	IDs, TypeIDs, AttentionMask []int64
	Rows, Len                   int
}

func (b Batch) check() error {
	if b.Rows <= 0 || b.Len <= 0 {
		return fmt.Errorf("empty batch (%d rows of %d tokens)", b.Rows, b.Len)
	}
	n := b.Rows * b.Len
	for _, f := range []struct {
		name string
		s    []int64
		opt  bool
	}{{"IDs", b.IDs, false}, {"TypeIDs", b.TypeIDs, true}, {"AttentionMask", b.AttentionMask, true}} {
		if (f.s != nil || !f.opt) && len(f.s) != n {
			return fmt.Errorf("batch %s has %d values, want %d rows × %d tokens = %d", f.name, len(f.s), b.Rows, b.Len, n)
		}
	}
	return nil
}

// Tensor is a float32 output: Data row-major with dimensions Shape,
// [rows, seq, dim] for token vectors and [rows, dim] for pooled vectors
// or logits.
type Tensor struct {
	Data  []float32
	Shape []int
}
