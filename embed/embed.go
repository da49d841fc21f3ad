// Package embed turns texts into vectors. Embedder is the one interface
// every backend implements: local ONNX encoders, OpenAI-compatible
// servers (OpenAI, vLLM, TEI's OpenAI route, Ollama, llama.cpp), TEI's
// native route and Voyage.
//
// The HTTP backends take one server or a fleet of them (several base
// URLs, httpx.Fleet) and report each text's usage (Metered); Cache keeps
// vectors and usage by content, so a text is embedded once whichever
// server is asked.
//
// Backends embed exactly the texts they are given: instructions and
// prefixes are applied before Embed by whoever knows the model's recipe
// (package models), so a cache keyed by the text it embeds is keyed by
// the instruction too.
package embed

import (
	"context"
	"fmt"
	"math"
)

// Input says which side of retrieval a text is on. Most models ignore it
// (their instructions already say so); Voyage sends it as input_type and
// asymmetric local models pick their query or document encoder by it.
type Input uint8

// The two sides; Query is the zero value.
const (
	Query Input = iota
	Document
)

func (in Input) String() string {
	switch in {
	case Query:
		return "query"
	case Document:
		return "document"
	}
	return fmt.Sprintf("Input(%d)", uint8(in))
}

// Embedder returns one vector per text, in order, all of one dimension.
// A backend that cannot return exactly that (a short answer, a wrong
// dimension, a NaN) returns an error, never a wrong vector.
type Embedder interface {
	Embed(ctx context.Context, input Input, texts []string) ([][]float32, error)
}

// Cutter is an Embedder that says, per text, how many tokens it cut to
// fit the model's maximum length (0: the text fit whole): the local ONNX
// encoder. Cache keeps the answer with each vector, so a run answered
// from the cache counts its truncated texts too. An HTTP server cuts
// where it is asked (or refuses) and does not say which texts it cut.
type Cutter interface {
	Embedder
	EmbedCut(ctx context.Context, input Input, texts []string) ([][]float32, []int, error)
}

// Func adapts a function to Embedder.
type Func func(ctx context.Context, input Input, texts []string) ([][]float32, error)

func (f Func) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	return f(ctx, input, texts)
}

// Normalize scales v to unit L2 length in place and returns it; a zero
// vector stays zero. Cosine similarity as R2MED (BEIR's cos_sim) computes
// it is the dot product of normalized vectors.
func Normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return v
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return v
}

// Check verifies a backend's answer for n texts: n vectors, one
// dimension (dim if dim > 0), no NaN or infinity. Backends call it before
// returning so every one fails the same way on a bad server.
func Check(vecs [][]float32, n, dim int) error {
	if len(vecs) != n {
		return fmt.Errorf("asked for %d embeddings, got %d", n, len(vecs))
	}
	for i, v := range vecs {
		if dim <= 0 {
			dim = len(v)
		}
		if len(v) != dim || dim == 0 {
			return fmt.Errorf("embedding %d has dimension %d, expected %d", i, len(v), dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("embedding %d contains %v", i, x)
			}
		}
	}
	return nil
}
