package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHosts(t *testing.T) {
	for _, c := range []struct {
		addr  string
		extra []string
		ok    []string
		not   []string
	}{
		{"127.0.0.1:8081", nil, []string{"127.0.0.1:8081", "localhost:8081", "LOCALHOST", "[::1]:8081", "127.0.0.1"},
			[]string{"evil.example.com:8081", "10.0.0.1:8081", "", "127.0.0.2:8081"}},
		{"search.internal:8081", []string{"Search.Example.org"}, []string{"search.internal:8081", "search.example.org", "localhost"},
			[]string{"other.internal", "10.0.0.1"}},
		{"0.0.0.0:8081", []string{"box"}, []string{"10.0.0.7:8081", "[fe80::1]:8081", "box:8081", "localhost"},
			[]string{"rebind.example.com:8081"}},
		{":8081", nil, []string{"192.168.1.2"}, []string{"evil.example.com"}},
	} {
		h := NewHosts(c.addr, c.extra)
		for _, host := range c.ok {
			if !h.OK(host) {
				t.Errorf("%s: Host %q refused", c.addr, host)
			}
		}
		for _, host := range c.not {
			if h.OK(host) {
				t.Errorf("%s: Host %q accepted", c.addr, host)
			}
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8081": true, "localhost:0": true, "[::1]:80": true, "127.1.2.3:1": true,
		"0.0.0.0:8081": false, ":8081": false, "[::]:8081": false, "10.0.0.1:80": false, "example.org:80": false, "nonsense": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
}

func TestGuardAndBearer(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	h := Guard(Bearer(ok, "k3y", "/open"), GuardOptions{Hosts: NewHosts("127.0.0.1:1", nil), Methods: []string{"GET", "HEAD"}})
	for _, c := range []struct {
		host, path, auth string
		code             int
	}{
		{"127.0.0.1:1", "/x", "Bearer k3y", 200},
		{"127.0.0.1:1", "/x", "Bearer k3y ", 200},
		{"127.0.0.1:1", "/x", "", 401},
		{"127.0.0.1:1", "/x", "Bearer k3", 401},
		{"127.0.0.1:1", "/x", "Basic k3y", 401},
		{"127.0.0.1:1", "/x", "bearer k3y", 200}, // the scheme in any case (RFC 9110)
		{"127.0.0.1:1", "/x", "BEARER k3y", 200},
		{"127.0.0.1:1", "/x", "Bearerk3y", 401},
		{"127.0.0.1:1", "/open", "", 200},
		{"evil.example.com", "/open", "", 421},
		{"evil.example.com", "/x", "Bearer k3y", 421},
		{"127.0.0.1:1", "/x", "Bearer k3y", 405}, // POST
	} {
		method := "GET"
		if c.code == 405 {
			method = "POST"
		}
		req := httptest.NewRequest(method, "http://"+c.host+c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.code {
			t.Errorf("%s%s %q: %d, want %d", c.host, c.path, c.auth, w.Code, c.code)
		}
		if w.Header().Get("Content-Security-Policy") != DefaultCSP || w.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("headers %v", w.Header())
		}
		if c.code == 421 && !strings.Contains(w.Body.String(), "is not this server's (127.0.0.1, ::1, localhost); start it with --allow-host NAME") {
			t.Errorf("421 body %q", w.Body.String())
		}
		if c.code == 405 && w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("405 without Allow: %v", w.Header())
		}
	}
	if Bearer(ok, "") != nil {
		w := httptest.NewRecorder()
		Bearer(ok, "").ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code != 200 {
			t.Error("no key: every request passes")
		}
	}
}

// TestCheckKey: keys shorter than 16 characters are refused, saying how
// to make one; no key passes (loopback servers need none).
func TestCheckKey(t *testing.T) {
	for key, ok := range map[string]bool{"": true, "abc": false, "0123456789abcde": false, "0123456789abcdef": true, "ключключключключ": true} {
		err := CheckKey(key, "R2MED_SEARCH_KEY")
		if (err == nil) != ok {
			t.Errorf("key %q: %v", key, err)
		}
		if err != nil && !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("key %q: %v", key, err)
		}
	}
}

// TestCrossSite: requests a browser marks as coming from another site's
// page are told apart from same-origin ones and from non-browser clients.
func TestCrossSite(t *testing.T) {
	for _, c := range []struct {
		header, value string
		cross         bool
	}{
		{"", "", false}, // curl, scripts
		{"Sec-Fetch-Site", "same-origin", false},
		{"Sec-Fetch-Site", "none", false}, // typed into the address bar
		{"Sec-Fetch-Site", "cross-site", true},
		{"Sec-Fetch-Site", "same-site", true},
		{"Origin", "http://127.0.0.1:8081", false},
		{"Origin", "http://evil.example", true},
		{"Origin", "null", true},
	} {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8081/v1/search", nil)
		if c.header != "" {
			req.Header.Set(c.header, c.value)
		}
		if got := CrossSite(req) != ""; got != c.cross {
			t.Errorf("%s: %s: cross-site %v, want %v", c.header, c.value, got, c.cross)
		}
	}
}

// TestServeShutdownCutsOff: a request still running when the grace
// period ends is cut, and Serve says so.
func TestServeShutdownCutsOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		time.Sleep(2 * time.Second)
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, Timeouts{Shutdown: 100 * time.Millisecond}) }()
	go http.Get("http://" + ln.Addr().String() + "/")
	<-entered
	stop()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("Serve: %v", err)
	}
}

// A Send deadline is the sooner of Stall from now and Stall plus the
// answer's bytes at Rate from its first write; the zero value is
// DefaultSend's.
func TestSendDeadline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := Send{Stall: 10 * time.Second, Rate: 1 << 20}
	for _, c := range []struct {
		now   time.Duration // after t0
		total int64
		want  time.Duration // after t0
	}{
		{0, 0, 10 * time.Second},                       // a first write: Stall
		{0, 100 << 20, 10 * time.Second},               // a large answer's first write: still Stall
		{5 * time.Second, 100 << 20, 15 * time.Second}, // each write within Stall
		{100 * time.Second, 4 << 20, 14 * time.Second}, // the whole at Rate: already past
		{2 * time.Second, 4 << 20, 12 * time.Second},
	} {
		if got := s.Deadline(t0, t0.Add(c.now), c.total).Sub(t0); got != c.want {
			t.Errorf("now +%v, %d bytes: deadline +%v, want +%v", c.now, c.total, got, c.want)
		}
	}
	if got, want := (Send{}).Deadline(t0, t0, 1<<20), DefaultSend.Deadline(t0, t0, 1<<20); !got.Equal(want) {
		t.Errorf("zero Send: %v, want DefaultSend's %v", got, want)
	}
}
