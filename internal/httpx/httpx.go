// Package httpx is the one place remote backends (embedding, chat and rerank
// servers) send JSON requests through, so that every backend retries,
// backs off, honours Retry-After and keeps API keys out of messages the
// same way.
//
// The policy: 408, 409, 429 and every 5xx answer, a timeout and a dropped
// connection are retried with exponential backoff and full jitter, capped
// at MaxDelay; a Retry-After header (seconds or an HTTP date) replaces the
// computed delay. Other 4xx answers are not retried: a wrong model name or
// a bad key does not get better by asking again. An answer that is not
// valid JSON is an error at once, because a server that lies in its body
// may also lie in its numbers, and so is one larger than MaxBody.
//
// A Client with a Fleet spreads its requests over several servers (see
// Fleet); a Client in Replay mode sends nothing at all.
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Client sends JSON requests with retries. Its zero value works: six
// attempts, 500 ms first backoff, 30 s cap, 120 s per attempt.
type Client struct {
	// HTTP sends the requests; nil means a client without a global timeout
	// (Timeout bounds each attempt instead).
	HTTP *http.Client
	// MaxAttempts counts the first try; 0 means 6.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt, doubled after
	// each failure; 0 means 500 ms.
	BaseDelay time.Duration
	// MaxDelay caps a backoff and a Retry-After wait; 0 means 30 s.
	MaxDelay time.Duration
	// Timeout bounds one attempt, answer body included; 0 means 120 s.
	Timeout time.Duration
	// Notify, if set, hears about each retry (for a log line); the error it
	// gets has already been redacted.
	Notify func(attempt int, wait time.Duration, err error)
	// Secrets are strings (API keys) removed from every error message.
	Secrets []string
	// MaxBody caps an answer's body in bytes; a larger answer is an error
	// that says so, not retried. 0 means DefaultMaxBody.
	MaxBody int64
	// Fleet, if set, chooses the server of each attempt: a Request then
	// gives a Path, joined to the chosen server's base URL.
	Fleet *Fleet
	// Replay refuses every request with an error wrapping ErrReplay:
	// answers must come from a cache, and nothing may reach a server.
	Replay bool

	// sleep and jitter are replaced by tests.
	sleep  func(context.Context, time.Duration) error
	jitter func(time.Duration) time.Duration
}

// DefaultMaxBody is the answer size cap when Client.MaxBody is 0: far
// above any embedding batch or chat answer r2med asks for (64 texts of
// 4,096 dimensions are about 6 MiB of decimal JSON), far below what
// would exhaust memory.
const DefaultMaxBody = 256 << 20

// ErrReplay is wrapped by the error of every request a Client in Replay
// mode refuses.
var ErrReplay = errors.New("replay mode sends no request")

// ErrTooLarge is wrapped by the error of an answer larger than MaxBody.
var ErrTooLarge = errors.New("answer too large")

// Request is one JSON call.
type Request struct {
	Method string // "" means POST
	// URL is the full address, for a Client without a Fleet.
	URL string
	// Path is joined to the base URL of the fleet's chosen server ("" is
	// the server's URL itself), for a Client with a Fleet.
	Path   string
	Header http.Header // sent as is and never printed
	Body   any         // marshalled as JSON; nil sends no body
	// BodyFor, if set, replaces Body: it gives the body for the server an
	// attempt goes to (its index in the Fleet; 0 without one), for a
	// request whose form depends on the server (an encoding one server
	// refuses). It is called once per attempt, from Do's goroutine, with
	// the server's slot held; its error ends the request.
	BodyFor func(server int) (any, error)
	// Refused, if set, hears a non-retryable error answer (a 4xx) of the
	// server at index server; returning true sends the request again at
	// once, its body rebuilt by BodyFor (a server that refused an option
	// the caller can drop). It costs an attempt.
	Refused func(server int, err *StatusError) bool
	// MaxBody, if positive and below the Client's, caps this answer
	// (a chat answer bounded by its max_tokens).
	MaxBody int64
}

// StatusError is an answer with a non-2xx status.
type StatusError struct {
	Method, URL string
	Status      int
	Body        string // the start of the answer body, redacted
	Attempts    int
}

func (e *StatusError) Error() string {
	var hint string
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = "; check the API key (flag or environment variable) and that it may use this model"
	case http.StatusNotFound:
		hint = "; check the base URL and the model name"
	case http.StatusRequestEntityTooLarge:
		hint = "; lower the batch size or the token budget"
	case http.StatusTooManyRequests:
		hint = "; the server kept rate-limiting: lower the concurrency or try later"
	}
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Attempts > 1 {
		msg += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg + hint
}

// Retryable reports whether a status is worth asking again.
func Retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// Do sends req and decodes a 2xx JSON answer into out (nil skips decoding),
// retrying as the package comment says.
func (c *Client) Do(ctx context.Context, req Request, out any) error {
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	if c.Fleet == nil && req.Path != "" {
		return fmt.Errorf("request to %s: a Path needs a Client with a Fleet", c.url(req.Path))
	}
	if c.Fleet != nil && req.URL != "" {
		return fmt.Errorf("request to %s: a Client with a Fleet takes a Path, not a URL", c.url(req.URL))
	}
	if c.Replay {
		where := req.URL
		if c.Fleet != nil {
			where = c.Fleet.url(0, req.Path)
		}
		return fmt.Errorf("%s %s: %w: the answer must come from the cache (import the run's cache file, or run without replay to ask the server)", method, c.url(where), ErrReplay)
	}
	var body []byte
	marshal := func(v any) error {
		if v == nil {
			body = nil
			return nil
		}
		var err error
		if body, err = json.Marshal(v); err != nil {
			return fmt.Errorf("encoding request to %s: %w", c.url(req.URL+req.Path), err)
		}
		return nil
	}
	if req.BodyFor == nil {
		if err := marshal(req.Body); err != nil {
			return err
		}
	}
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = 6
	}
	var tried []int // fleet servers that failed this request
	for attempt := 1; ; attempt++ {
		target, ep := req.URL, -1
		if c.Fleet != nil {
			var err error
			if ep, err = c.Fleet.acquire(ctx, tried); err != nil {
				return err
			}
			target = c.Fleet.url(ep, req.Path)
		}
		if req.BodyFor != nil {
			v, err := req.BodyFor(max(ep, 0))
			if err == nil {
				err = marshal(v)
			}
			if err != nil {
				if ep >= 0 {
					c.Fleet.release(ep, abandoned, 0, err)
				}
				return err
			}
		}
		raw, retryAfter, err := c.once(ctx, method, target, req, body)
		var se *StatusError
		retry := err != nil && (errors.As(err, &se) && Retryable(se.Status) || transient(ctx, err))
		refused := err != nil && !retry && se != nil && ctx.Err() == nil && req.Refused != nil && req.Refused(max(ep, 0), se)
		if ep >= 0 {
			o := succeeded
			switch {
			case retry:
				o = failed
				tried = append(tried, ep)
			case err != nil && ctx.Err() != nil:
				o = abandoned
			}
			c.Fleet.release(ep, o, retryAfter, err)
		}
		if err == nil {
			if out == nil {
				return nil
			}
			if derr := json.Unmarshal(raw, out); derr != nil {
				return fmt.Errorf("%s %s: the answer is not the JSON expected (%s): %s", method, c.url(target), c.redact(derr.Error()), Snippet(c.redact(string(raw))))
			}
			return nil
		}
		if se != nil {
			se.Attempts = attempt
		}
		if refused && attempt < attempts {
			continue // the caller changed the request for this server: send it again now
		}
		if !retry || attempt >= attempts || ctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !retry || se != nil {
				return err
			}
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		wait := c.backoff(attempt)
		if retryAfter > 0 {
			wait = min(retryAfter, c.maxDelay())
		}
		if c.Fleet != nil && c.Fleet.alternative(tried) {
			wait = 0 // another server is free: no reason to wait for this one
		}
		if c.Notify != nil {
			c.Notify(attempt, wait, err)
		}
		if err := c.wait(ctx, wait); err != nil {
			return err
		}
	}
}

func (c *Client) once(ctx context.Context, method, target string, req Request, body []byte) ([]byte, time.Duration, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		// NewRequest's error repeats the raw URL, query and all; keep only its cause.
		return nil, 0, fmt.Errorf("bad URL %q: %s", c.url(target), c.redact(cause(err)))
	}
	for k, vs := range req.Header {
		hr.Header[k] = vs
	}
	if body != nil && hr.Header.Get("Content-Type") == "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if hr.Header.Get("Accept") == "" {
		hr.Header.Set("Accept", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, 0, &transportError{fmt.Sprintf("%s %s: %s", method, c.url(target), c.redact(cause(err)))}
	}
	defer resp.Body.Close()
	limit := c.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if req.MaxBody > 0 {
		limit = min(limit, req.MaxBody)
	}
	if resp.StatusCode/100 != 2 {
		limit = min(limit, 64<<10) // an error's start is all a message shows
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, 0, &transportError{fmt.Sprintf("%s %s: reading the answer: %s", method, c.url(target), c.redact(cause(err)))}
	}
	if resp.StatusCode/100 != 2 {
		return nil, retryAfter(resp.Header.Get("Retry-After")), &StatusError{
			// Redact before cutting: a key cut in half by the snippet would
			// no longer match and half of it would be printed.
			Method: method, URL: c.url(target), Status: resp.StatusCode, Body: Snippet(c.redact(string(raw))),
		}
	}
	if int64(len(raw)) > limit {
		return nil, 0, fmt.Errorf("%s %s: %w: the answer is larger than %s, the cap on answers; a server that sends this much is misbehaving, or raise the cap (MaxBody) if the request really needs it", method, c.url(target), ErrTooLarge, sizeString(limit))
	}
	return raw, 0, nil
}

// sizeString prints a byte count the way a person reads it.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// transient reports whether a transport error (not a status) may pass: a
// per-attempt timeout, a reset or refused connection, an early EOF. The
// caller's own cancellation is not transient.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var te *transportError
	return errors.As(err, &te)
}

// transportError is a failure below HTTP: no answer, or half of one.
type transportError struct{ msg string }

func (e *transportError) Error() string { return e.msg }

// cause strips url.Error's repetition of method and URL, which once adds
// itself (redacted).
func cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}

func (c *Client) backoff(attempt int) time.Duration {
	base := c.BaseDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	// Double step by step so a large BaseDelay caps instead of overflowing.
	d := min(base, c.maxDelay())
	for i := 1; i < attempt && d < c.maxDelay(); i++ {
		d = min(2*d, c.maxDelay())
	}
	if c.jitter != nil {
		return c.jitter(d)
	}
	// Full jitter (AWS architecture blog): spreads clients that failed
	// together, so they do not retry together.
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

func (c *Client) maxDelay() time.Duration {
	if c.MaxDelay <= 0 {
		return 30 * time.Second
	}
	return c.MaxDelay
}

func (c *Client) wait(ctx context.Context, d time.Duration) error {
	if c.sleep != nil {
		return c.sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx is done (then it returns ctx's error): the
// pause between retries of every client that retries (this package's,
// the Hub's downloads, Weaviate's batches).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		// Beyond a day the caller's cap applies anyway; converting a huge
		// (or infinite) float to Duration would overflow.
		return time.Duration(min(s, 86400) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func (c *Client) redact(s string) string {
	if c.Fleet != nil && len(c.Fleet.secrets) > 0 {
		return Redact(s, append(slices.Clone(c.Secrets), c.Fleet.secrets...)...)
	}
	return Redact(s, c.Secrets...)
}

// Redact replaces every secret of 4 bytes or more in s with "[REDACTED]".
// Shorter strings are not secrets worth the name, and replacing them would
// garble the message. Longer secrets go first, so a key that contains
// another is removed whole.
func Redact(s string, secrets ...string) string {
	if len(secrets) > 1 {
		secrets = slices.Clone(secrets)
		slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	}
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}

// url is a URL fit for a message: RedactURL's cuts, and no secret
// anywhere in it (some servers take keys in the path).
func (c *Client) url(raw string) string { return c.redact(RedactURL(raw)) }

// RedactURL drops user info and query values (some servers take keys as
// ?key=…) from a URL meant for a message.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		// Keep the names (they help to debug), drop every value. Names are
		// rebuilt by hand: Encode would percent-escape the ellipsis.
		q, _ := url.ParseQuery(u.RawQuery)
		names := slices.Sorted(maps.Keys(q))
		for i, k := range names {
			names[i] = url.QueryEscape(k) + "=…"
		}
		u.RawQuery = strings.Join(names, "&")
	}
	return u.String()
}

// Snippet is the start of an answer body fit for a message: at most 300
// bytes, cut between characters, whitespace runs as one space. Redact
// before cutting: a key cut in half would no longer match.
func Snippet(s string) string {
	s = strings.TrimSpace(s)
	const limit = 300
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.Join(strings.Fields(s), " ")
}

// Bearer is the Authorization header for key, or an empty header when key
// is empty (local servers usually need none).
func Bearer(key string) http.Header {
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return h
}

// JoinURL appends path to base, keeping base's own path ("http://h/v1" +
// "embeddings" → "http://h/v1/embeddings").
func JoinURL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// RedactArgs is a command line fit for a manifest: every argument (or the
// value of a --flag=value argument) that is an http(s) URL with user info
// or a query goes through RedactURL, so `--base-url http://user:pass@host`
// is recorded without the password. Other arguments are kept as given.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		prefix, val := "", a
		if strings.HasPrefix(a, "-") {
			if k, v, ok := strings.Cut(a, "="); ok {
				prefix, val = k+"=", v
			}
		}
		if !strings.HasPrefix(val, "http://") && !strings.HasPrefix(val, "https://") {
			continue
		}
		if u, err := url.Parse(val); err != nil || u.User != nil || u.RawQuery != "" {
			out[i] = prefix + RedactURL(val)
		}
	}
	return out
}
