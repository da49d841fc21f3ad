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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/httpserve"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
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

// threeRuns is the data of three perfect runs of the demo task, and the
// task.
func threeRuns(t *testing.T) (*ir.Task, *report.Data) {
	t.Helper()
	task, _ := demo.Load()
	root := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		writeRun(t, reporttest.Run{Dir: filepath.Join(root, name), Task: "demo", System: name, Ranked: reporttest.Perfect(task)})
	}
	d, err := report.Load(root, leaderboard.Sources{}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	return task, d
}

// TestDrillDownBounded: a drill-down larger than MaxPageBytes is refused
// naming the k that fits, and one that does not fit beside the pages
// being sent (slow readers hold theirs) is answered 503 with
// Retry-After, where every request was made whole in memory however
// many were under way (40 drill-downs at once of k=1000 over 12
// NFCorpus runs took the viewer to 2.3 GB).
func TestDrillDownBounded(t *testing.T) {
	task, d := threeRuns(t)
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
	// (The page just read gives its share back as its handler returns,
	// which may be a moment after the client has read the whole answer.)
	held := MaxInFlightBytes - 10*hitBytes
	for start := time.Now(); !s.inflight.TryAcquire(held); time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("capacity taken")
		}
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

// TestMarksWorkedOnce: a table's significance marks (?baseline=) are
// worked out once per state of the results, whoever asks and however
// many ask at once, and every answer carries the marks MarkAgainst gives
// on the table built afresh; requests for other tables wait their turn
// (MaxMarking at once), and one whose client leaves meanwhile gets 503.
func TestMarksWorkedOnce(t *testing.T) {
	task, _ := demo.Load()
	root := t.TempDir()
	writeRun(t, reporttest.Run{Dir: filepath.Join(root, "base"), Task: "demo", System: "base", Ranked: reporttest.Buried(task, func(string) bool { return true })})
	writeRun(t, reporttest.Run{Dir: filepath.Join(root, "good"), Task: "demo", System: "good", Ranked: reporttest.Perfect(task)})
	writeRun(t, reporttest.Run{Dir: filepath.Join(root, "half"), Task: "demo", System: "half", Ranked: reporttest.Buried(task, func(q string) bool { return q < task.Queries[len(task.Queries)/2].ID })})
	d, err := report.Load(root, leaderboard.Sources{}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	base, err := d.OursSystem("base")
	if err != nil {
		t.Fatal(err)
	}

	// What the marks must be: MarkAgainst on the table, as the CLI makes it.
	want, err := d.Board.Table(leaderboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := want.MarkAgainst(base, d.PerQueryFunc(t.Context(), want.Metric.Key), significance.Options{}); err != nil {
		t.Fatal(err)
	}
	wantCSV := new(strings.Builder)
	if err := want.Write(wantCSV, leaderboard.CSV); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wantCSV.String(), "‡") && !strings.Contains(wantCSV.String(), "†") {
		t.Fatalf("the fixture's marks are all empty; the test would prove nothing:\n%s", wantCSV)
	}
	var wg sync.WaitGroup
	bodies := make([]string, 6)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, bodies[i] = get(t, ts.URL+"/leaderboard.csv?baseline=base")
		}()
	}
	wg.Wait()
	for i, b := range bodies {
		if b != wantCSV.String() {
			t.Errorf("answer %d:\n%s\nwant MarkAgainst's:\n%s", i, b, wantCSV)
		}
	}
	if code, _, body := get(t, ts.URL+"/?baseline=base"); code != 200 || !strings.Contains(body, "‡") && !strings.Contains(body, "†") {
		t.Errorf("the page: %d, marks missing", code)
	}
	v := s.cur
	if v.marks.worked != 1 {
		t.Errorf("the marks of one table were worked out %d times over 7 requests, want once", v.marks.worked)
	}

	// Another table waits its turn; its client leaving gets 503.
	if !s.marking.TryAcquire(MaxMarking) {
		t.Fatal("marking capacity taken")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/?baseline=base&metric=recall_at_100", nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a table waiting its turn, client gone: %d (Retry-After %q) %.300s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	s.marking.Release(MaxMarking)
	if code, _, body := get(t, ts.URL+"/api/leaderboard?baseline=base&metric=recall_at_100"); code != 200 {
		t.Errorf("once its turn came: %d %.300s", code, body)
	}
	if v.marks.worked != 2 {
		t.Errorf("worked out %d tables, want 2 (the abandoned one dropped, then worked out once)", v.marks.worked)
	}
	if code, _, body := get(t, ts.URL+"/api/leaderboard?baseline=nobody"); code != 400 || !strings.Contains(body, "nobody") {
		t.Errorf("an unknown baseline: %d %.300s", code, body)
	}
}

// smallBuffers makes accepted connections' send buffers small, so that a
// client that does not read blocks the server's writes after a few KiB
// rather than after the megabytes loopback buffers hold.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// TestDrillDownFreedBySlowReader: a client that asks for a drill-down
// and never reads it frees the page's share of MaxInFlightBytes within
// Options.Send's bound, where it was held until the server's write
// timeout (5 minutes; never, with no timeout), so a few such clients
// kept every drill-down busy.
func TestDrillDownFreedBySlowReader(t *testing.T) {
	task, d := threeRuns(t)
	s, err := New(d, Options{Send: httpserve.Send{Stall: 3 * time.Second, Rate: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Listener = smallBuffers{ts.Listener}
	ts.Start()
	defer ts.Close()
	q := task.Queries[0].ID
	for _, path := range []string{"/api/query/demo/" + q + "?k=100", "/query/demo/" + q + "?k=100"} {
		_, _, body := get(t, ts.URL+path)
		if len(body) < 128<<10 {
			t.Fatalf("%s is %d bytes: too small to fill the connection's buffers", path, len(body))
		}
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		}}
		c, err := d.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		// The page is admitted and being sent (its status line has come),
		// and the client reads nothing more: its share is held, and comes
		// back once the bound runs out.
		line, err := bufio.NewReaderSize(c, 64).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("%s: %q %v", path, line, err)
		}
		start := time.Now()
		if s.inflight.TryAcquire(MaxInFlightBytes) {
			t.Fatalf("%s: the page being sent holds no share", path)
		}
		for !s.inflight.TryAcquire(MaxInFlightBytes) {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s: the page unread holds its share after %v", path, time.Since(start))
			}
			time.Sleep(20 * time.Millisecond)
		}
		s.inflight.Release(MaxInFlightBytes)
		t.Logf("%s: freed after %v", path, time.Since(start).Round(time.Millisecond))
	}
}
