package searchapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client calls a search service over HTTP.
type Client struct {
	// BaseURL is the service's root, e.g. http://127.0.0.1:8081.
	BaseURL string
	// Key is sent as a bearer token when set.
	Key string
	// HTTP is the client to send with; nil means http.DefaultClient.
	HTTP *http.Client
}

// Search posts body (one query or a batch) and returns its results: one
// for a query, one per query of a batch, in order.
func (c *Client) Search(ctx context.Context, body SearchBody) ([]*Result, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/v1/search", b, &raw); err != nil {
		return nil, err
	}
	if body.Queries != nil {
		var br BatchResult
		if err := json.Unmarshal(raw, &br); err != nil {
			return nil, fmt.Errorf("the service's answer: %w", err)
		}
		return br.Results, nil
	}
	var r Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("the service's answer: %w", err)
	}
	return []*Result{&r}, nil
}

// Retrievers lists the service's retrievers.
func (c *Client) Retrievers(ctx context.Context) ([]RetrieverInfo, error) {
	var rb RetrieversBody
	err := c.do(ctx, http.MethodGet, "/v1/retrievers", nil, &rb)
	return rb.Retrievers, err
}

// do sends one request and decodes a 200 answer into out; any other
// status is an error carrying the service's message.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var eb ErrorBody
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
			msg = eb.Error
		}
		return &Error{Status: resp.StatusCode, Msg: fmt.Sprintf("%s %s: %s: %s", method, path, http.StatusText(resp.StatusCode), msg)}
	}
	return json.Unmarshal(data, out)
}
