package embed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// DefaultTEIBase is where a Text Embeddings Inference container listens
// by default.
const DefaultTEIBase = "http://localhost:8080"

// TEIOptions configure Hugging Face Text Embeddings Inference's native
// route. (Its OpenAI-compatible route works with NewOpenAI too.)
type TEIOptions struct {
	// BaseURL is the server root the path /embed is appended to; ""
	// means DefaultTEIBase.
	BaseURL string
	// BaseURLs are more servers of the same model, with BaseURL one fleet.
	BaseURLs []string
	// APIKey is sent as a bearer token when set (TEI's --api-key).
	APIKey string
	// Model names the served model; required, because the server serves
	// one model whatever it is asked and the name keys the vectors.
	Model string
	// Unnormalized asks for raw pooled vectors; TEI normalizes by default.
	Unnormalized bool
	// HTTPOptions.BatchSize 0 means 32 here, not adapted upwards: TEI
	// refuses larger requests unless started with a larger
	// --max-client-batch-size (then give that as the batch size).
	// Concurrency adapts as for the other backends.
	HTTPOptions
}

// TEI embeds texts through POST {base}/embed, with the server truncating
// texts to the model's length.
type TEI struct {
	remote
	normalize bool
}

// NewTEI checks the options and returns the backend; it sends nothing.
func NewTEI(o TEIOptions) (*TEI, error) {
	bases, _, err := resolve(o.BaseURL, o.BaseURLs, "", DefaultTEIBase, o.APIKey, "")
	if err != nil {
		return nil, fmt.Errorf("tei embeddings: %w", err)
	}
	if err := checkCommon("tei embeddings", o.Model, 0, o.HTTPOptions); err != nil {
		return nil, err
	}
	var extra []string
	if o.Unnormalized {
		extra = append(extra, "unnormalized")
	}
	r, err := newRemote("tei", o.Model, bases, "embed", o.APIKey, 0, teiMaxClientBatch, o.HTTPOptions, extra...)
	if err != nil {
		return nil, fmt.Errorf("tei embeddings: %w", err)
	}
	return &TEI{remote: r, normalize: !o.Unnormalized}, nil
}

// Embed embeds texts in order; the input side is not sent (TEI's prompt
// names are not used: instructions are already in the texts).
func (e *TEI) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	v, _, err := e.EmbedMetered(ctx, input, texts)
	return v, err
}

// EmbedMetered is Embed with each text's usage: TEI's /embed reports
// none, so its tokens are estimated (usage.Estimator).
func (e *TEI) EmbedMetered(ctx context.Context, _ Input, texts []string) ([][]float32, []usage.Usage, error) {
	return e.batch.embed(ctx, texts, func(ctx context.Context, batch []string) (sent, error) {
		var ans []json.RawMessage
		res := sent{tokens: -1}
		body := teiRequest{Inputs: batch, Truncate: true, Normalize: e.normalize}
		hr := httpx.Request{Path: e.path, Header: e.header, BodyFor: func(i int) (any, error) { res.server = i; return body, nil }}
		if err := e.client.Do(ctx, hr, &ans); err != nil {
			return res, err
		}
		if len(ans) != len(batch) {
			return res, fmt.Errorf("asked for %d embeddings, got %d", len(batch), len(ans))
		}
		res.vecs = make([][]float32, len(ans))
		for i, raw := range ans {
			v, err := parseVector(raw)
			if err != nil {
				return res, fmt.Errorf("embedding %d: %w", i, err)
			}
			res.vecs[i] = v
		}
		return res, nil
	})
}

// teiMaxClientBatch is TEI's default --max-client-batch-size.
const teiMaxClientBatch = 32

type teiRequest struct {
	Inputs    []string `json:"inputs"`
	Truncate  bool     `json:"truncate"`
	Normalize bool     `json:"normalize"`
}
