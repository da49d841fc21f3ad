package searchapi

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/r2med/r2med/internal/httpserve"
)

// An answer is written as it is made: held in memory up to spoolBytes, so
// that a request failing before then still gets its own status (and a
// small answer its Content-Length), then sent as it grows (chunked), a
// result at a time. So a request holds the results being searched and
// one spool, never its whole answer. Once sent, an answer can no longer
// become an error: a failure after that cuts the connection (the client
// sees an incomplete body, never a short answer that looks whole).

// spoolBytes is how much of an answer is held before it is sent.
const spoolBytes = 256 << 10

// answerWriter writes one answer of at most max bytes.
type answerWriter struct {
	w       http.ResponseWriter
	max     int64
	buf     bytes.Buffer
	sent    int64
	started time.Time // when the first bytes were sent; zero before
	err     error     // a failed write: the client is gone
	cut     func()    // counts an answer cut off
}

func newAnswerWriter(w http.ResponseWriter, max int64, cut func()) *answerWriter {
	a := &answerWriter{w: w, max: max, cut: cut}
	if b, ok := spools.Get().(*bytes.Buffer); ok {
		a.buf = *b
	}
	return a
}

// spools keeps answers' buffers for the next (an answer grows one to a
// few KiB, or to the spool's size).
var spools sync.Pool

// release gives the buffer back once the answer is sent.
func (a *answerWriter) release() {
	if a.buf.Cap() <= 2*spoolBytes {
		b := a.buf
		b.Reset()
		spools.Put(&b)
	}
	a.buf = bytes.Buffer{}
}

// tooLarge is the error of an answer that outgrew Limits.MaxResponse.
type tooLarge struct{ max int64 }

func (e tooLarge) Error() string { return "the answer outgrew " + mib(e.max) }

// Write adds to the answer; past the spool, it sends.
func (a *answerWriter) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	if a.sent+int64(a.buf.Len()+len(p)) > a.max {
		a.err = tooLarge{a.max}
		return 0, a.err
	}
	a.buf.Write(p)
	if a.buf.Len() >= spoolBytes {
		a.flush()
	}
	return len(p), a.err
}

// result writes r as JSON (one line; encode.go).
func (a *answerWriter) result(r *Result) error {
	b, err := appendResult(a.buf.AvailableBuffer(), r)
	if err != nil {
		return err
	}
	_, err = a.Write(b)
	return err
}

// flush sends what is held, with a write deadline in proportion to what
// has been sent.
func (a *answerWriter) flush() {
	if a.buf.Len() == 0 || a.err != nil {
		return
	}
	now := time.Now()
	if a.started.IsZero() {
		a.started = now
		a.w.Header().Set("Content-Type", "application/json; charset=utf-8")
		a.w.WriteHeader(http.StatusOK)
	}
	// Sending is bounded in proportion to what is sent (httpserve.Send).
	rc := http.NewResponseController(a.w)
	rc.SetWriteDeadline(httpserve.DefaultSend.Deadline(a.started, now, a.sent+int64(a.buf.Len()))) // unsupported only by test recorders, which do not block
	n, err := a.w.Write(a.buf.Bytes())
	a.sent += int64(n)
	a.buf.Reset()
	if err == nil {
		if err = rc.Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil // a writer that cannot flush sends at the end
		}
	}
	if err != nil {
		a.err = err
	}
}

// finish sends the rest of a whole answer, or, when err is set, the
// error's answer if nothing was sent yet, else cuts the connection.
func (a *answerWriter) finish(err error) {
	defer a.release()
	if err == nil {
		err = a.err
	}
	if err == nil && a.started.IsZero() {
		h := a.w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(a.buf.Len()))
		a.w.WriteHeader(http.StatusOK)
		a.w.Write(a.buf.Bytes()) // the status is sent; a failed write is the client gone
		return
	}
	if err == nil {
		a.flush()
		if a.err == nil {
			return
		}
		err = a.err
	}
	if a.started.IsZero() {
		if tl, ok := err.(tooLarge); ok {
			err = badRequest("the answer outgrew the %s this service sends per request: ask for fewer hits, shorter snippets (snippet) or fewer queries per request", mib(tl.max))
		}
		writeError(a.w, err)
		return
	}
	a.cut()
	panic(http.ErrAbortHandler) // the only way to tell the client the body is incomplete
}
