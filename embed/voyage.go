package embed

import (
	"context"
	"fmt"

	"github.com/r2med/r2med/usage"
)

// DefaultVoyageBase is Voyage AI's API, used when neither the options nor
// VOYAGE_BASE_URL name another server.
const DefaultVoyageBase = "https://api.voyageai.com/v1"

// VoyageOptions configure Voyage AI's embedding API.
type VoyageOptions struct {
	// BaseURL is the API root the path /embeddings is appended to; ""
	// means $VOYAGE_BASE_URL, then DefaultVoyageBase.
	BaseURL string
	// BaseURLs are more servers, with BaseURL one fleet.
	BaseURLs []string
	// APIKey is sent as a bearer token; "" means $VOYAGE_API_KEY
	// (required by Voyage's own API).
	APIKey string
	// Model is the model's name (voyage-3 in R2MED); required.
	Model string
	// Dimensions, if positive, is sent as output_dimension.
	Dimensions int
	// Encoding is what the API is asked to write vectors as; the zero
	// value asks for base64 and falls back to floats (see Encoding).
	Encoding Encoding
	HTTPOptions
}

// Voyage embeds texts through POST {base}/embeddings with input_type
// "query" or "document", as R2MED's voyage runs did.
type Voyage struct {
	remote
	model string
	dims  int
}

// NewVoyage checks the options and returns the backend; it sends nothing.
func NewVoyage(o VoyageOptions) (*Voyage, error) {
	bases, key, err := resolve(o.BaseURL, o.BaseURLs, "VOYAGE_BASE_URL", DefaultVoyageBase, o.APIKey, "VOYAGE_API_KEY")
	if err != nil {
		return nil, fmt.Errorf("voyage embeddings: %w", err)
	}
	if err := checkCommon("voyage embeddings", o.Model, o.Dimensions, o.HTTPOptions); err != nil {
		return nil, err
	}
	r, err := newRemote("voyage", o.Model, bases, "embeddings", key, o.Dimensions, voyageMaxBatch, o.HTTPOptions)
	if err != nil {
		return nil, fmt.Errorf("voyage embeddings: %w", err)
	}
	r.enc = newEncodings(o.Encoding, len(bases))
	return &Voyage{remote: r, model: o.Model, dims: o.Dimensions}, nil
}

// Embed embeds texts in order, telling Voyage which side they are on.
func (e *Voyage) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	v, _, err := e.EmbedMetered(ctx, input, texts)
	return v, err
}

// EmbedMetered is Embed with each text's share of the server's usage.
func (e *Voyage) EmbedMetered(ctx context.Context, input Input, texts []string) ([][]float32, []usage.Usage, error) {
	if input != Query && input != Document {
		return nil, nil, fmt.Errorf("voyage embeddings: unknown input side %v", input)
	}
	return e.embedList(ctx, texts, func(batch []string, enc Encoding) any {
		// Voyage's floats are its default: encoding_format is sent only
		// for base64.
		req := voyageRequest{Input: batch, Model: e.model, InputType: input.String(), OutputDimension: e.dims}
		if enc == EncodingBase64 {
			req.EncodingFormat = "base64"
		}
		return req
	})
}

type voyageRequest struct {
	Input           []string `json:"input"`
	Model           string   `json:"model"`
	InputType       string   `json:"input_type"`
	OutputDimension int      `json:"output_dimension,omitempty"`
	EncodingFormat  string   `json:"encoding_format,omitempty"`
}

// voyageMaxBatch bounds an adapted batch, conservatively: Voyage's API
// limits the texts per request, by model, and a refused request is not
// retried smaller; a larger --batch-size is the user's to give.
const voyageMaxBatch = 128
