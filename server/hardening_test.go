package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/results"
)

// TestCSP: no inline script or style runs but the viewer's own, by hash;
// no framing. (The browser tests check the hashes let the page's script
// run: data-ready is set only by it.)
func TestCSP(t *testing.T) {
	ts, _ := fixture(t)
	_, h, _ := get(t, ts.URL+"/")
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if h.Get("X-Frame-Options") != "DENY" {
		t.Error("no X-Frame-Options")
	}
	for _, path := range []string{"/", "/task/demo", "/query/demo/q2", "/diff/demo"} {
		_, _, body := get(t, ts.URL+path)
		if strings.Contains(body, ` style="`) || strings.Contains(body, " onclick=") {
			t.Errorf("%s has an inline style or handler the CSP would block", path)
		}
	}
}

// TestHostCheck: a request naming another host (a DNS-rebinding page) is
// refused; loopback names, the bind address and allowed names are not.
func TestHostCheck(t *testing.T) {
	d, err := report.Load("", leaderboard.Sources{Published: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr  string
		allow []string
		host  string
		ok    bool
	}{
		{"127.0.0.1:8080", nil, "127.0.0.1:8080", true},
		{"127.0.0.1:8080", nil, "localhost:8080", true},
		{"127.0.0.1:8080", nil, "[::1]:8080", true},
		{"127.0.0.1:8080", nil, "evil.example:8080", false},
		{"127.0.0.1:8080", nil, "evil.example", false},
		{"0.0.0.0:8080", nil, "192.168.1.7:8080", true},
		{"0.0.0.0:8080", nil, "attacker.test:8080", false},
		{"0.0.0.0:8080", []string{"lab-box"}, "lab-box:8080", true},
		{"lab-box:8080", nil, "LAB-BOX:8080", true},
	} {
		s, err := New(d, Options{Addr: c.addr, AllowHosts: c.allow})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/api/runs", nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if ok := rec.Code == 200; ok != c.ok {
			t.Errorf("bind %s, Host %s: %d, want ok=%v", c.addr, c.host, rec.Code, c.ok)
		}
	}
	s, _ := New(d, Options{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/runs", strings.NewReader("x"))
	req.Host = "localhost"
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

// TestHugeDocument: a 50 MB document costs a page its snippet only; one
// "show more" fetch gets at most MaxDocBytes of it.
func TestHugeDocument(t *testing.T) {
	big := strings.Repeat("infarction ", 50<<20/11)
	loader := func(ctx context.Context, r results.Run) (*ir.Task, error) {
		task, err := demo.Load()
		if err != nil {
			return nil, err
		}
		for i, d := range task.Corpus {
			if task.Qrels[task.Queries[0].ID][d.ID] > 0 {
				task.Corpus[i].Text = big
			}
		}
		return task, nil
	}
	task, _ := demo.Load()
	ts := perfectServer(t, task, loader)
	q := task.Queries[0].ID
	for _, path := range []string{"/query/demo/" + q + "?k=100", "/api/query/demo/" + q + "?k=100"} {
		code, _, body := get(t, ts.URL+path)
		if code != 200 || len(body) > 2<<20 {
			t.Errorf("%s: %d, %d bytes: a huge document must not be sent whole", path, code, len(body))
		}
	}
	var rel string
	for id, g := range task.Qrels[q] {
		if g > 0 {
			rel = id
		}
	}
	code, _, body := get(t, ts.URL+"/api/doc/demo/"+rel)
	var doc DocJSONFull
	if code != 200 || json.Unmarshal([]byte(body), &doc) != nil || !doc.Truncated || len(doc.Text) > MaxDocBytes || doc.Length != len(big) {
		t.Errorf("/api/doc: %d, truncated %v, %d of %d bytes", code, doc.Truncated, len(doc.Text), doc.Length)
	}
}

// TestSlowClient: a client that sends half its headers and waits is cut
// off after ReadHeaderTimeout; an idle keep-alive connection after
// IdleTimeout.
func TestSlowClient(t *testing.T) {
	ts, _ := fixture(t)
	oldH, oldI := ReadHeaderTimeout, IdleTimeout
	ReadHeaderTimeout, IdleTimeout = 300*time.Millisecond, 300*time.Millisecond
	defer func() { ReadHeaderTimeout, IdleTimeout = oldH, oldI }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, ln, ts.Config.Handler)
	for _, first := range []string{"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		io.WriteString(c, first)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReader(c)
		if strings.HasSuffix(first, "\r\n\r\n") {
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			start = time.Now()
		}
		_, err = r.ReadByte() // blocks until the server closes the connection
		if err == nil || time.Since(start) > 3*time.Second {
			t.Errorf("%q: connection held %v (%v), want closed after ~300ms", first[:20], time.Since(start), err)
		}
		c.Close()
	}
}

// TestDrillDownBounded: a drill-down larger than MaxPageBytes is refused
// naming the k that fits, and one that does not fit beside the pages
// being sent (slow readers hold theirs) is answered 503 with
// Retry-After, where every request was made whole in memory however
// many were under way (40 drill-downs at once of k=1000 over 12
// NFCorpus runs took the viewer to 2.3 GB).
func TestDrillDownBounded(t *testing.T) {
	task, _ := demo.Load()
	root := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		writeRun(t, reporttest.Run{Dir: filepath.Join(root, name), Task: "demo", System: name, Ranked: reporttest.Perfect(task)})
	}
	d, err := report.Load(root, leaderboard.Sources{}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	oldPage, oldAll := MaxPageBytes, MaxInFlightBytes
	defer func() { MaxPageBytes, MaxInFlightBytes = oldPage, oldAll }()
	MaxPageBytes, MaxInFlightBytes = 40*hitBytes, 60*hitBytes
	s, err := New(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	q := task.Queries[0].ID
	for _, path := range []string{"/api/query/demo/" + q + "?k=50", "/query/demo/" + q + "?k=50"} {
		code, _, body := get(t, ts.URL+path)
		if code != 400 || !strings.Contains(body, "k=50") || !strings.Contains(body, "ask for k=") {
			t.Errorf("%s: %d %.300s: want 400 naming the k that fits", path, code, body)
		}
	}
	if code, _, body := get(t, ts.URL+"/api/query/demo/"+q+"?k=5"); code != 200 {
		t.Fatalf("k=5: %d %.300s", code, body)
	}
	// Pages being sent hold most of the capacity.
	held := MaxInFlightBytes - 10*hitBytes
	if !s.inflight.TryAcquire(held) {
		t.Fatal("capacity taken")
	}
	for _, path := range []string{"/api/query/demo/" + q + "?k=5", "/query/demo/" + q + "?k=5"} {
		code, h, body := get(t, ts.URL+path)
		if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, "busy") {
			t.Errorf("%s while busy: %d (Retry-After %q) %.300s", path, code, h.Get("Retry-After"), body)
		}
	}
	if code, _, _ := get(t, ts.URL+"/api/runs"); code != 200 {
		t.Errorf("/api/runs while drill-downs are busy: %d", code)
	}
	s.inflight.Release(held)
	if code, _, body := get(t, ts.URL+"/query/demo/"+q+"?k=5"); code != 200 {
		t.Errorf("after the pages were sent: %d %.300s", code, body)
	}
}
