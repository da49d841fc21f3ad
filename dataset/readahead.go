package dataset

import "io"

// readahead reads its source in a goroutine, a few buffers ahead of the
// consumer. For a gzipped corpus it lets decompression (about as costly as
// decoding the JSON) run on a second core while the lines are parsed, so a
// load takes the longer of the two rather than their sum. Data and the
// source's error arrive in order, so errors keep their line numbers.
type readahead struct {
	chunks chan chunk
	free   chan []byte
	done   chan struct{} // closed by Close to stop the reader
	exited chan struct{} // closed when the reader goroutine returns
	cur    []byte        // unread part of the current chunk
	held   []byte        // the current chunk's buffer, to recycle
	err    error
}

type chunk struct {
	b   []byte
	err error
}

const (
	readaheadSize    = 1 << 20
	readaheadBuffers = 4
)

func newReadahead(r io.Reader) *readahead {
	ra := &readahead{
		chunks: make(chan chunk, readaheadBuffers),
		free:   make(chan []byte, readaheadBuffers+1),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	for range readaheadBuffers + 1 {
		ra.free <- make([]byte, readaheadSize)
	}
	go ra.fill(r)
	return ra
}

func (ra *readahead) fill(r io.Reader) {
	defer close(ra.exited)
	for {
		var b []byte
		select {
		case b = <-ra.free:
		case <-ra.done:
			return
		}
		n := 0
		var err error
		for n < len(b) && err == nil {
			var m int
			m, err = r.Read(b[n:])
			n += m
		}
		select {
		case ra.chunks <- chunk{b[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (ra *readahead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.held != nil {
			ra.free <- ra.held[:cap(ra.held)]
			ra.held = nil
		}
		c := <-ra.chunks
		ra.cur, ra.held, ra.err = c.b, c.b, c.err
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the reader goroutine and waits for it, so that the source can
// be closed safely afterwards.
func (ra *readahead) Close() error {
	close(ra.done)
	<-ra.exited
	return nil
}
