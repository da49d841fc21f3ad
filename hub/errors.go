package hub

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Errors that callers may test for with errors.Is. Every error this package
// returns carries its own message saying what to do; these only classify.
var (
	ErrRepoNotFound     = errors.New("repository not found")
	ErrRevisionNotFound = errors.New("revision not found")
	ErrEntryNotFound    = errors.New("file not found")
	// ErrUnauthorized: a token is missing, invalid, or lacks access.
	ErrUnauthorized = errors.New("not authorized")
	// ErrGated: the repository asks its users to accept terms first.
	ErrGated = errors.New("gated repository")
	// ErrUnreachable: no answer from the endpoint or the download host.
	ErrUnreachable = errors.New("hub unreachable")
	// ErrOffline: offline mode is on and the cache lacks what was asked.
	ErrOffline = errors.New("not in the cache while offline")
	// ErrCorrupt: downloaded bytes do not match the size or hash the Hub gave.
	ErrCorrupt = errors.New("corrupted download")
	// ErrChanged: the server lists other files for a commit than it did
	// when the cache fetched that commit.
	ErrChanged = errors.New("files of a commit changed on the server")
)

// hubError carries a complete message and the classes (and cause) it
// belongs to, so that the message does not have to repeat the sentinels'
// wording to keep errors.Is working.
type hubError struct {
	msg  string
	errs []error
}

func (e *hubError) Error() string   { return e.msg }
func (e *hubError) Unwrap() []error { return e.errs }

func newError(msg string, errs ...error) error { return &hubError{msg: msg, errs: errs} }

// transient marks an error worth retrying; retry unwraps it when it gives up.
type transient struct {
	err   error
	after time.Duration // the server's Retry-After, if any
}

func (t *transient) Error() string { return t.err.Error() }
func (t *transient) Unwrap() error { return t.err }

// target is what a request was about, for messages.
type target struct {
	repo     Repo
	revision string
	file     string
}

// redact removes the token from text that came from elsewhere (a server's
// message, an error from a proxy) before it becomes part of an error.
// Very short tokens are left alone: replacing them would garble messages
// and they are not real Hub tokens anyway.
func (c *Client) redact(s string) string {
	if len(c.Token) >= 6 {
		s = strings.ReplaceAll(s, c.Token, "[token]")
	}
	return s
}

// shortURL drops the query, which on a CDN holds a signature that is
// useless in a message.
func shortURL(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment, v.User = "", "", nil
	return v.String()
}

// serverMessage extracts what the Hub says about a failure: the
// X-Error-Message header and the JSON "error" field, as huggingface_hub
// does.
func serverMessage(resp *http.Response) string {
	var parts []string
	if m := strings.TrimSpace(resp.Header.Get("X-Error-Message")); m != "" {
		parts = append(parts, m)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var js struct {
		Error any `json:"error"`
	}
	if json.Unmarshal(body, &js) == nil {
		switch e := js.Error.(type) {
		case string:
			parts = append(parts, e)
		case []any:
			for _, x := range e {
				parts = append(parts, fmt.Sprint(x))
			}
		}
	} else if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "html") {
		if t := strings.TrimSpace(string(body)); t != "" && len(t) < 500 {
			parts = append(parts, t)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// statusError turns a failed response into an error that says what went
// wrong and what to do; 5xx and 429 come back as transient.
func (c *Client) statusError(resp *http.Response, t target) error {
	code := resp.Header.Get("X-Error-Code")
	status := resp.StatusCode
	srv := c.redact(serverMessage(resp))
	detail := func(msg string) string {
		if srv != "" && !strings.Contains(strings.ToLower(msg), strings.ToLower(srv)) {
			msg += " (server: " + srv + ")"
		}
		return msg
	}
	where := shortURL(resp.Request.URL)
	page := c.endpointString() + t.repo.webPath()
	tokenState := "HF_TOKEN is not set"
	if c.Token != "" {
		tokenState = "the token in HF_TOKEN was rejected or has no access"
	}
	setToken := "set HF_TOKEN to a read token from " + c.endpointString() + "/settings/tokens"

	switch {
	case code == "GatedRepo":
		return newError(detail(fmt.Sprintf("%s is gated (HTTP %d; %s): accept its terms at %s with your Hub account, then set HF_TOKEN to a read token of that account",
			t.repo, status, tokenState, page)), ErrGated, ErrUnauthorized)
	case code == "RevisionNotFound":
		return newError(detail(fmt.Sprintf("%s has no revision %q (HTTP %d): give a branch, tag or full commit sha that exists (see %s/tree/main)",
			t.repo, t.revision, status, page)), ErrRevisionNotFound)
	case code == "EntryNotFound" || (status == http.StatusNotFound && t.file != "" && code == ""):
		return newError(detail(fmt.Sprintf("%s@%s has no file %q (HTTP %d)", t.repo, t.revision, t.file, status)), ErrEntryNotFound)
	case code == "RepoNotFound" || (status == http.StatusNotFound && code == ""):
		if status == http.StatusUnauthorized {
			// The Hub answers 401 for private and missing repositories
			// alike, so as not to reveal which exist.
			return newError(detail(fmt.Sprintf("%s was not found or needs authentication (HTTP 401; %s): check the id and the type (datasets/ or models/); if it is private or gated, %s and accept its terms at %s",
				t.repo, tokenState, setToken, page)), ErrRepoNotFound, ErrUnauthorized)
		}
		return newError(detail(fmt.Sprintf("%s was not found at %s (HTTP %d): check the id and the type (datasets/ or models/); a private repository also needs HF_TOKEN",
			t.repo, c.endpointString(), status)), ErrRepoNotFound)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return newError(detail(fmt.Sprintf("access to %s denied (HTTP %d at %s; %s): %s of an account with access; if the repository is gated, accept its terms at %s",
			t.repo, status, where, tokenState, setToken, page)), ErrUnauthorized)
	case status == http.StatusTooManyRequests:
		// The Hub limits requests per IP address, and allows an
		// authenticated account more (huggingface_hub's docs on rate
		// limits say the same).
		advice := "wait a few minutes and run again"
		if c.Token == "" {
			advice += ", with HF_TOKEN set (" + setToken + "): the Hub allows a logged-in account more requests"
		}
		return &transient{
			err:   newError(detail(fmt.Sprintf("%s: HTTP 429 (too many requests) from %s: the Hub is rate-limiting this machine; %s", t.repo, where, advice))),
			after: retryAfter(resp.Header.Get("Retry-After")),
		}
	case status >= 500:
		return &transient{
			err: newError(detail(fmt.Sprintf("%s: HTTP %d from %s: the server is failing; run again later, or set HF_HUB_OFFLINE=1 to use what the cache holds",
				t.repo, status, where))),
			after: retryAfter(resp.Header.Get("Retry-After")),
		}
	}
	return newError(detail(fmt.Sprintf("%s: unexpected HTTP %d from %s", t.repo, status, where)))
}

func retryAfter(h string) time.Duration {
	var s int
	if _, err := fmt.Sscanf(h, "%d", &s); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// transportError classifies an error from http.Client.Do or from reading a
// body. Refused connections, unknown hosts and bad certificates will not
// fix themselves within seconds, so they fail at once; resets, timeouts
// and cut connections are retried.
func (c *Client) transportError(ctxErr error, u *url.URL, err error) error {
	if ctxErr != nil {
		return ctxErr
	}
	host := c.endpointString()
	if !c.isEndpointHost(u) {
		host = u.Scheme + "://" + u.Host
	}
	cause := err
	var uerr *url.Error
	if errors.As(err, &uerr) {
		cause = uerr.Err
	}
	msg := fmt.Sprintf("cannot reach %s: %s; set HF_HUB_OFFLINE=1 to use the local cache or HF_ENDPOINT for a mirror",
		host, c.redact(cause.Error()))
	e := newError(msg, ErrUnreachable, err)

	var op *net.OpError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &dns), errors.As(err, &cert), errors.As(err, &unknownAuth), errors.As(err, &hostname):
		return e
	case errors.As(err, &op) && op.Op == "dial" && !op.Timeout():
		return e
	}
	return &transient{err: e}
}
