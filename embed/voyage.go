package embed

import (
	"context"
	"fmt"
	"net/http"

	"github.com/r2med/r2med/internal/httpx"
)

// DefaultVoyageBase is Voyage AI's API, used when neither the options nor
// VOYAGE_BASE_URL name another server.
const DefaultVoyageBase = "https://api.voyageai.com/v1"

// VoyageOptions configure Voyage AI's embedding API.
type VoyageOptions struct {
	// BaseURL is the API root the path /embeddings is appended to; ""
	// means $VOYAGE_BASE_URL, then DefaultVoyageBase.
	BaseURL string
	// APIKey is sent as a bearer token; "" means $VOYAGE_API_KEY
	// (required by Voyage's own API).
	APIKey string
	// Model is the model's name (voyage-3 in R2MED); required.
	Model string
	// Dimensions, if positive, is sent as output_dimension.
	Dimensions int
	// Base64 asks for base64-encoded float32 vectors.
	Base64 bool
	HTTPOptions
}

// Voyage embeds texts through POST {base}/embeddings with input_type
// "query" or "document", as R2MED's voyage runs did.
type Voyage struct {
	url, model string
	dims       int
	base64     bool
	header     http.Header
	client     *httpx.Client
	batch      *batcher
	desc       string
}

// NewVoyage checks the options and returns the backend; it sends nothing.
func NewVoyage(o VoyageOptions) (*Voyage, error) {
	base, key, err := resolve(o.BaseURL, "VOYAGE_BASE_URL", DefaultVoyageBase, o.APIKey, "VOYAGE_API_KEY")
	if err != nil {
		return nil, fmt.Errorf("voyage embeddings: %w", err)
	}
	if err := checkCommon("voyage embeddings", o.Model, o.Dimensions, o.HTTPOptions); err != nil {
		return nil, err
	}
	return &Voyage{
		url: httpx.JoinURL(base, "embeddings"), model: o.Model, dims: o.Dimensions, base64: o.Base64,
		header: httpx.Bearer(key), client: o.client(key),
		batch: newBatcher("voyage "+o.Model, o.HTTPOptions, o.Dimensions),
		desc:  describe("voyage", o.Model, o.Dimensions, o.HTTPOptions),
	}, nil
}

// String names what the vectors depend on, never the key. The input
// side is not in it: it is a property of each call.
func (e *Voyage) String() string { return e.desc }

// Embed embeds texts in order, telling Voyage which side they are on.
func (e *Voyage) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	if input != Query && input != Document {
		return nil, fmt.Errorf("voyage embeddings: unknown input side %v", input)
	}
	return e.batch.embed(ctx, texts, func(ctx context.Context, batch []string) ([][]float32, error) {
		req := voyageRequest{Input: batch, Model: e.model, InputType: input.String(), OutputDimension: e.dims}
		if e.base64 {
			req.EncodingFormat = "base64"
		}
		var ans listAnswer
		if err := e.client.Do(ctx, httpx.Request{URL: e.url, Header: e.header, Body: req}, &ans); err != nil {
			return nil, err
		}
		return ans.vectors(len(batch), e.client.Secrets)
	})
}

type voyageRequest struct {
	Input           []string `json:"input"`
	Model           string   `json:"model"`
	InputType       string   `json:"input_type"`
	OutputDimension int      `json:"output_dimension,omitempty"`
	EncodingFormat  string   `json:"encoding_format,omitempty"`
}
