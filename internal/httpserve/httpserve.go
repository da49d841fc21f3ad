// Package httpserve serves HTTP the way every r2med server must: on
// loopback unless told otherwise, refusing requests whose Host header
// names another site (DNS rebinding), with security headers, timeouts
// that a slow or idle client cannot hold a connection past, a bearer key
// where the server is reachable from other machines, and a graceful
// shutdown that lets requests in flight finish.
package httpserve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Hosts is the set of names a request's Host header may give: loopback
// names, the bind address's host when it is a name or a specific address,
// and names allowed besides. Serving on every interface (0.0.0.0, ::),
// any IP literal is accepted too: an address is not a DNS name, so it
// cannot be rebound.
type Hosts struct {
	names map[string]bool
	anyIP bool
}

// NewHosts is the set for a server bound to addr ("127.0.0.1:8081") with
// the extra names allowed.
func NewHosts(addr string, extra []string) Hosts {
	h := Hosts{names: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			h.names[strings.ToLower(host)] = true
		} else {
			h.anyIP = true
		}
	} else if err == nil {
		h.anyIP = true // ":8081" binds every interface
	}
	for _, e := range extra {
		h.names[strings.ToLower(strings.Trim(e, "[]"))] = true
	}
	return h
}

// OK reports whether a Host header names this server.
func (h Hosts) OK(host string) bool {
	name := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		name = hh
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	if h.names[name] {
		return true
	}
	return h.anyIP && net.ParseIP(name) != nil
}

// Names lists the allowed names, sorted, for messages.
func (h Hosts) Names() []string { return slices.Sorted(maps.Keys(h.names)) }

// DefaultCSP allows nothing: right for a server that answers JSON and
// text only.
const DefaultCSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// GuardOptions say what Guard checks and how it answers.
type GuardOptions struct {
	Hosts Hosts
	// CSP is the Content-Security-Policy; "" means DefaultCSP.
	CSP string
	// Name is the server as messages call it ("viewer"); "" is "server".
	Name string
	// AllowFlag is the flag that allows another host name; "" is
	// "--allow-host".
	AllowFlag string
	// Methods, when set, are the only methods let through; others get
	// 405 naming them.
	Methods []string
}

// Guard wraps h: it sets the security headers (CSP, nosniff, no framing,
// no referrer) on every response, answers 421 Misdirected Request to a
// request whose Host is not among the allowed hosts, naming the flag
// that allows another name, and 405 to a method not allowed.
func Guard(h http.Handler, o GuardOptions) http.Handler {
	if o.CSP == "" {
		o.CSP = DefaultCSP
	}
	if o.Name == "" {
		o.Name = "server"
	}
	if o.AllowFlag == "" {
		o.AllowFlag = "--allow-host"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Security-Policy", o.CSP)
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "no-referrer")
		if !o.Hosts.OK(r.Host) {
			http.Error(w, fmt.Sprintf("host %q is not this %s's (%s); start it with %s NAME to allow another name",
				r.Host, o.Name, strings.Join(o.Hosts.Names(), ", "), o.AllowFlag), http.StatusMisdirectedRequest)
			return
		}
		if o.Methods != nil && !slices.Contains(o.Methods, r.Method) {
			hdr.Set("Allow", strings.Join(o.Methods, ", "))
			http.Error(w, fmt.Sprintf("the %s answers %s only", o.Name, strings.Join(o.Methods, " and ")), http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Bearer wraps h so that every request but those to the open paths must
// carry "Authorization: Bearer KEY" (the scheme in any case, as RFC 9110
// has it); others get 401 with a WWW-Authenticate challenge. Keys are
// compared in constant time. An empty key lets every request through;
// CheckKey says whether a key is long enough to guard anything.
func Bearer(h http.Handler, key string, open ...string) http.Handler {
	return keyed(h, key, false, open)
}

// BasicKey is Bearer for a server people open in a browser: the key may
// also come as the password of HTTP Basic authentication (any user
// name), which the browser asks for once, and the 401 challenges Basic.
func BasicKey(h http.Handler, key string, open ...string) http.Handler {
	return keyed(h, key, true, open)
}

func keyed(h http.Handler, key string, basic bool, open []string) http.Handler {
	if key == "" {
		return h
	}
	want := []byte(key)
	challenge, say := `Bearer realm="r2med"`, "this server needs its key: send Authorization: Bearer KEY"
	if basic {
		challenge, say = `Basic realm="r2med", charset="UTF-8"`, "this server needs its key: give it as the password (any user name), or send Authorization: Bearer KEY"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(open, r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		got = strings.TrimSpace(got)
		if basic && strings.EqualFold(scheme, "Basic") {
			if _, pass, ok := r.BasicAuth(); ok {
				scheme, got = "Bearer", pass
			}
		}
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, say, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MinKeyLen is the shortest bearer key a server takes: 16 characters (a
// random key of that length is out of reach of guessing over HTTP).
const MinKeyLen = 16

// CheckKey refuses a bearer key too short to guard a server, saying how
// to make one; the empty key (no key) passes.
func CheckKey(key, env string) error {
	if key != "" && len([]rune(key)) < MinKeyLen {
		return fmt.Errorf("the key in $%s has %d characters; use at least %d (for example: export %s=$(openssl rand -hex 16))", env, len([]rune(key)), MinKeyLen, env)
	}
	return nil
}

// CrossSite says why a request comes from another site's page, or ""
// when it does not: a browser marks such requests with Sec-Fetch-Site
// (cross-site, or same-site from a sibling host) or with an Origin that
// is not this server's. A server refuses them what costs money: a page
// can make a visitor's browser send GETs and form or text/plain POSTs
// anywhere, and read nothing back, yet the server would do the work.
func CrossSite(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "cross-site", "same-site":
		return "Sec-Fetch-Site: " + site
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || o == "null" || !strings.EqualFold(u.Host, r.Host) {
			return "Origin: " + o
		}
	}
	return ""
}

// Loopback reports whether addr ("127.0.0.1:8081", "[::1]:0",
// "localhost:8081") binds loopback interfaces only. An empty host or an
// unspecified address binds every interface, so it is not loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Timeouts bound a connection's phases. The zero value gives
// DefaultTimeouts' values.
type Timeouts struct {
	ReadHeader time.Duration // the request line and headers
	Read       time.Duration // the whole request, body included
	Write      time.Duration // from the end of the headers to the end of the response
	Idle       time.Duration // between requests on a kept-alive connection
	// Shutdown is how long requests in flight may take to finish once
	// the server is told to stop.
	Shutdown time.Duration
}

// DefaultTimeouts suit a server whose responses are computed in seconds.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: 5 * time.Minute,
	Idle: 2 * time.Minute, Shutdown: 30 * time.Second}

func (t Timeouts) orDefault() Timeouts {
	d := DefaultTimeouts
	for _, p := range []struct{ v, def *time.Duration }{{&t.ReadHeader, &d.ReadHeader}, {&t.Read, &d.Read},
		{&t.Write, &d.Write}, {&t.Idle, &d.Idle}, {&t.Shutdown, &d.Shutdown}} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	return t
}

// Send bounds how long sending one answer may take, in proportion to its
// size: each write must go through within Stall, and the answer as a
// whole within Stall plus its bytes at Rate, so a client that stops
// reading, or reads at a trickle, frees what its request holds (its
// answer's memory, its share of a bounded capacity) long before the
// server's write timeout. The zero value is DefaultSend.
type Send struct {
	Stall time.Duration
	Rate  int64 // bytes per second
}

// DefaultSend lets an answer of 1 MiB take 14 s, and one of 32 MiB about
// 2 minutes.
var DefaultSend = Send{Stall: 10 * time.Second, Rate: 256 << 10}

func (s Send) orDefault() Send {
	if s.Stall <= 0 {
		s.Stall = DefaultSend.Stall
	}
	if s.Rate <= 0 {
		s.Rate = DefaultSend.Rate
	}
	return s
}

// Deadline is when the next write of an answer must be through: the
// answer's first bytes went at started (now for the first write), and
// total bytes will have been sent after it.
func (s Send) Deadline(started, now time.Time, total int64) time.Time {
	s = s.orDefault()
	deadline := now.Add(s.Stall)
	if d := started.Add(s.Stall + time.Duration(total)*time.Second/time.Duration(s.Rate)); d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// Write sends body, an answer made whole before it is sent, within
// Deadline, and flushes it; a failed write is the client gone (or too
// slow), and closes the connection.
func (s Send) Write(w http.ResponseWriter, body []byte) error {
	now := time.Now()
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(s.Deadline(now, now, int64(len(body)))) // unsupported only by test recorders, which do not block
	if _, err := w.Write(body); err != nil {
		return err
	}
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// MaxHeaderBytes bounds a request's headers (and so a GET's query string).
const MaxHeaderBytes = 64 << 10

// Serve serves h on ln until ctx is done, then shuts down gracefully: the
// listener closes at once, requests in flight finish (for up to
// t.Shutdown), idle connections close. Requests see a context that ctx's
// end does not cancel, so a search in flight completes. It returns nil
// after a clean shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, t Timeouts) error {
	t = t.orDefault()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read,
		WriteTimeout: t.Write, IdleTimeout: t.Idle, MaxHeaderBytes: MaxHeaderBytes,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), t.Shutdown)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("requests still running %v after the stop was asked for were cut off", t.Shutdown)
		srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
