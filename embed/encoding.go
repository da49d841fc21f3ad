package embed

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/httpx"
)

// Encoding is how an OpenAI-compatible or Voyage server is asked to write
// vectors: base64 of little-endian float32s (a quarter of the bytes of
// decimal JSON, and no float formatting on the server, which is where a
// GPU server spends its time on small models) or JSON numbers. Answers in
// either encoding are read whatever was asked, and read strictly.
type Encoding string

const (
	// EncodingAuto, the zero value, asks each server for base64 and falls
	// back to floats for a server that refuses it (a 4xx naming
	// encoding_format or base64) or answers floats anyway, once per
	// server: its first request runs alone and settles what the server
	// is asked from then on.
	EncodingAuto   Encoding = ""
	EncodingBase64 Encoding = "base64"
	EncodingFloat  Encoding = "float"
)

// ParseEncoding reads "auto" (or ""), "base64" or "float".
func ParseEncoding(s string) (Encoding, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return EncodingAuto, nil
	case "base64":
		return EncodingBase64, nil
	case "float":
		return EncodingFloat, nil
	}
	return "", fmt.Errorf("unknown encoding %q (want auto, base64 or float)", s)
}

func (e Encoding) String() string {
	if e == EncodingAuto {
		return "auto"
	}
	return string(e)
}

// encodings decides, per server of a fleet, which encoding to ask for.
type encodings struct {
	mode    Encoding
	mu      sync.Mutex
	servers []serverEncoding
}

type serverEncoding struct {
	settled  Encoding      // auto: what the server is asked from now on; "" until its first answer
	probe    chan struct{} // auto: the first request is in flight; closed when it settles or fails
	answered Encoding      // the encoding of its last answer
	note     string        // why it was settled on floats
}

func newEncodings(mode Encoding, servers int) *encodings {
	return &encodings{mode: mode, servers: make([]serverEncoding, max(servers, 1))}
}

// ask is the encoding to ask server i for, and whether this request is
// the server's probe (its first in auto mode), which must be ended by
// answered or failed. Requests behind a probe wait for it.
func (e *encodings) ask(ctx context.Context, i int) (Encoding, bool, error) {
	if e.mode != EncodingAuto {
		return e.mode, false, nil
	}
	for {
		e.mu.Lock()
		s := &e.servers[i]
		switch {
		case s.settled != "":
			e.mu.Unlock()
			return s.settled, false, nil
		case s.probe == nil:
			s.probe = make(chan struct{})
			e.mu.Unlock()
			return EncodingBase64, true, nil
		}
		wait := s.probe
		e.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
	}
}

// again is what a probe sent again asks for: floats if the server
// refused base64, else base64 still.
func (e *encodings) again(i int) Encoding {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.servers[i].settled; s != "" {
		return s
	}
	return EncodingBase64
}

// refused is httpx.Request.Refused: a 4xx that names the encoding, from a
// server asked for base64 in auto mode, settles it on floats and sends
// the request again.
func (e *encodings) refused(i int, se *httpx.StatusError) bool {
	if e.mode != EncodingAuto || !refusesEncoding(se) {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &e.servers[i]
	if s.settled == EncodingFloat {
		return false // refused floats too: nothing left to drop
	}
	s.settled = EncodingFloat
	s.note = fmt.Sprintf("refused base64 (HTTP %d)", se.Status)
	s.release()
	return true
}

// refusesEncoding says whether an error answer is about the encoding: a
// 4xx other than a key, route, size or rate problem, naming
// encoding_format or base64.
func refusesEncoding(se *httpx.StatusError) bool {
	switch se.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return false
	}
	body := strings.ToLower(se.Body)
	return se.Status/100 == 4 && (strings.Contains(body, "encoding_format") || strings.Contains(body, "base64"))
}

// answered records server i's answer in got; the probe of an auto server
// settles it (floats when it answered floats to base64).
func (e *encodings) answered(i int, got Encoding, probe bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &e.servers[i]
	s.answered = got
	if probe && s.settled == "" {
		s.settled = got
		if got == EncodingFloat {
			s.note = "answered floats to a base64 request"
		}
		s.release()
	}
}

// failed ends a probe that got no answer (a server error, a dropped
// connection): the next request to the server probes again.
func (e *encodings) failed(i int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := &e.servers[i]; s.settled == "" {
		s.release()
	}
}

func (s *serverEncoding) release() {
	if s.probe != nil {
		close(s.probe)
		s.probe = nil
	}
}

// stat is server i's encoding as a manifest reports it: what it answered
// in (or is settled on, or asked for), and why it fell back.
func (e *encodings) stat(i int) (Encoding, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.servers[i]
	switch {
	case s.answered != "":
		return s.answered, s.note
	case s.settled != "":
		return s.settled, s.note
	}
	return "", ""
}

// encodingOf is the encoding of an answer's vectors.
func (a *listAnswer) encodingOf() Encoding {
	if len(a.Data) > 0 {
		if raw := strings.TrimSpace(string(a.Data[0].Embedding)); strings.HasPrefix(raw, `"`) {
			return EncodingBase64
		}
	}
	return EncodingFloat
}
