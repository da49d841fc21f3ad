package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
)

// DefaultEndpoint is the Hub itself.
const DefaultEndpoint = "https://huggingface.co"

const (
	defaultWorkers = 4
	maxRetries     = 5 // as huggingface_hub's http_backoff
	maxBackoff     = 8 // times the first wait
	requestTimeout = 30 * time.Second
	stallTimeout   = 60 * time.Second
	userAgent      = "r2med-hub/1 (Go; huggingface_hub cache layout)"
)

// Client talks to one Hub endpoint and keeps one cache. The zero value uses
// https://huggingface.co, no token, and ~/.cache/huggingface/hub; FromEnv
// configures it the way Python users configure huggingface_hub. A Client is
// safe for concurrent use; set its fields before first use.
type Client struct {
	Endpoint string // Hub base URL, possibly with a path (mirrors); "" means DefaultEndpoint
	// Token is sent as "Authorization: Bearer …" to the endpoint's host only,
	// never to the download hosts it redirects to, and never printed.
	Token      string
	CacheDir   string // the hub cache; "" means ~/.cache/huggingface/hub
	Offline    bool   // make no request; use only the cache
	HTTPClient *http.Client
	Progress   progress.Factory // one bar per downloaded file; silent when zero
	Workers    int              // files downloaded at once; 0 means 4
	// RetryFor bounds how long a download that lost its connection keeps
	// trying to resume (through resets, refused connections while the
	// server restarts, 5xx answers), counted from the last byte received;
	// 0 means 2 minutes. Backoff is 1, 2, 4, 8, 8, … seconds.
	RetryFor time.Duration

	backoff time.Duration // first retry wait; 0 means 1s (tests shorten it)
}

// FromEnv reads the variables huggingface_hub reads: HF_ENDPOINT,
// HF_TOKEN (then HUGGING_FACE_HUB_TOKEN, then the token file that
// `hf auth login` writes, $HF_TOKEN_PATH or $HF_HOME/token), HF_HUB_CACHE
// (then HUGGINGFACE_HUB_CACHE, then $HF_HOME/hub, HF_HOME defaulting to
// $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface) and HF_HUB_OFFLINE
// (then TRANSFORMERS_OFFLINE; 1, ON, YES or TRUE in any case).
func FromEnv() *Client {
	home := expandPath(os.Getenv("HF_HOME"))
	if home == "" {
		xdg := expandPath(os.Getenv("XDG_CACHE_HOME"))
		if xdg == "" {
			xdg = expandPath("~/.cache")
		}
		home = filepath.Join(xdg, "huggingface")
	}
	cache := firstEnv("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")
	if cache == "" {
		cache = filepath.Join(home, "hub")
	}
	token := cleanToken(firstEnv("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"))
	if token == "" {
		tokenPath := expandPath(os.Getenv("HF_TOKEN_PATH"))
		if tokenPath == "" {
			tokenPath = filepath.Join(home, "token")
		}
		if b, err := os.ReadFile(tokenPath); err == nil {
			token = cleanToken(string(b))
		}
	}
	return &Client{
		Endpoint: strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/"),
		Token:    token,
		CacheDir: expandPath(cache),
		Offline:  isTrue(firstEnv("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")),
	}
}

// firstEnv returns the first non-empty variable, as Python's
// `os.environ.get(a) or os.environ.get(b)` does.
func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func isTrue(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

func cleanToken(t string) string { return strings.TrimSpace(t) }

// expandPath applies ~ and $VAR expansion like Python's expanduser and
// expandvars, which leave unknown variables as written.
func expandPath(p string) string {
	if p == "" {
		return ""
	}
	p = os.Expand(p, func(name string) string {
		if v, ok := os.LookupEnv(name); ok {
			return v
		}
		return "$" + name
	})
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, p[1:])
		}
	}
	return p
}

// String describes the client without its token, so that logging a Client
// (or a struct holding one) cannot leak it.
func (c Client) String() string {
	tok := "unset"
	if c.Token != "" {
		tok = "set"
	}
	return fmt.Sprintf("hub.Client{Endpoint: %q, CacheDir: %q, Offline: %t, Token: %s}",
		c.endpointString(), c.CacheDir, c.Offline, tok)
}

// GoString keeps %#v from printing the token field.
func (c Client) GoString() string { return c.String() }

func (c *Client) endpointString() string {
	if e := strings.TrimRight(c.Endpoint, "/"); e != "" {
		return e
	}
	return DefaultEndpoint
}

func (c *Client) endpointURL() (*url.URL, error) {
	e := c.endpointString()
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q (HF_ENDPOINT) is not an http(s) URL", e)
	}
	return u, nil
}

// isEndpointHost decides where the token may go: the endpoint's host and
// port exactly, as huggingface_hub drops it when the netloc differs.
func (c *Client) isEndpointHost(u *url.URL) bool {
	e, err := c.endpointURL()
	return err == nil && strings.EqualFold(u.Scheme, e.Scheme) && strings.EqualFold(u.Host, e.Host)
}

func (c *Client) cacheRoot() (string, error) {
	dir := c.CacheDir
	if dir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory: set HF_HUB_CACHE or HF_HOME (%v)", err)
		}
		dir = filepath.Join(h, ".cache", "huggingface", "hub")
	}
	// Absolute, so that relative symlinks are computed between real places.
	return filepath.Abs(dir)
}

func (c *Client) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return defaultWorkers
}

func (c *Client) newRequest(ctx context.Context, method, rawURL string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	if c.Token != "" && c.isEndpointHost(req.URL) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// httpClient returns a copy of the configured client with our redirect
// policy: follow (up to 10) while stripping the token whenever a hop leaves
// the endpoint's host, or not follow at all.
func (c *Client) httpClient(follow bool) *http.Client {
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	}
	if !follow {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return &hc
	}
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !c.isEndpointHost(req.URL) {
			req.Header.Del("Authorization")
		}
		return nil
	}
	return &hc
}

// retry runs op until it succeeds, fails for good, or has failed
// transiently maxRetries+1 times, waiting 1, 2, 4, 8, 8 s in between (or
// what the server's Retry-After asks, up to 30 s).
func (c *Client) retry(ctx context.Context, op func() error) error {
	first := c.backoff
	if first <= 0 {
		first = time.Second
	}
	wait := first
	for attempt := 1; ; attempt++ {
		err := op()
		var t *transient
		if err == nil || !errors.As(err, &t) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt > maxRetries {
			return newError(fmt.Sprintf("%v (gave up after %d attempts)", t.err, attempt), t.err)
		}
		d := wait
		if t.after > d {
			d = min(t.after, 30*time.Second)
		}
		if err := httpx.Sleep(ctx, d); err != nil {
			return err
		}
		wait = min(2*wait, maxBackoff*first)
	}
}

func (c *Client) retryFor() time.Duration {
	if c.RetryFor > 0 {
		return c.RetryFor
	}
	return 2 * time.Minute
}

// gaveUp is retryResuming's error when the time ran out.
type gaveUp struct {
	attempts int
	last     error
}

func (g *gaveUp) Error() string {
	return fmt.Sprintf("%v (gave up after %d attempts)", g.last, g.attempts)
}
func (g *gaveUp) Unwrap() error { return g.last }

// retryResuming runs a download attempt until it succeeds or fails for
// good. Unlike retry it is bounded by time, not by count: transient
// failures are retried with backoff (1, 2, 4, 8, 8, … s, or the server's
// Retry-After) while less than RetryFor has passed since the last byte
// arrived (lastByte), and the backoff starts over after any progress, so
// a long download over a flaky link is not failed by its total count of
// cuts, and a server restart is waited out.
func (c *Client) retryResuming(ctx context.Context, lastByte func() time.Time, op func() error) error {
	first := c.backoff
	if first <= 0 {
		first = time.Second
	}
	wait := first
	for attempt := 1; ; attempt++ {
		before := lastByte()
		err := op()
		var t *transient
		if err == nil || !errors.As(err, &t) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if lastByte().After(before) {
			wait = first
		}
		left := time.Until(lastByte().Add(c.retryFor()))
		if left <= 0 {
			return &gaveUp{attempts: attempt, last: t.err}
		}
		d := wait
		if t.after > d {
			d = min(t.after, 30*time.Second)
		}
		if err := httpx.Sleep(ctx, min(d, left)); err != nil { // the last try is at the deadline
			return err
		}
		wait = min(2*wait, maxBackoff*first)
	}
}

// do sends one request with a per-attempt timeout and returns the response
// only when it succeeded (2xx, or 3xx when redirects are not followed);
// otherwise a classified error. The caller closes the body.
func (c *Client) do(ctx context.Context, method, rawURL string, follow bool, hdr http.Header, t target) (*http.Response, context.CancelFunc, error) {
	actx, cancel := context.WithTimeout(ctx, requestTimeout)
	req, err := c.newRequest(actx, method, rawURL)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.httpClient(follow).Do(req)
	if err != nil {
		cancel()
		return nil, nil, c.transportError(ctx.Err(), req.URL, err)
	}
	if resp.StatusCode >= 400 {
		defer cancel()
		defer resp.Body.Close()
		return nil, nil, c.statusError(resp, t)
	}
	return resp, cancel, nil
}
