package rerank

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// Checkpoint keeps each finished query of a long rerank in a JSON-lines
// file, so an interrupted run resumes where it stopped (Options.Done and
// Options.OnQuery). The first line records a key of the settings; a file
// written under other settings is started afresh rather than mixed in.
// A last line cut short by a crash is ignored: that query is redone.
type Checkpoint struct {
	path string
	f    *os.File
	w    *bufio.Writer
}

type checkpointHeader struct {
	Checkpoint string `json:"r2med_rerank_checkpoint"`
}

type checkpointQuery struct {
	QID  string          `json:"qid"`
	Hits []checkpointHit `json:"hits"`
}

type checkpointHit struct {
	Doc   string  `json:"doc"`
	Score float64 `json:"score"`
}

// OpenCheckpoint opens (or creates) the checkpoint at path for settings
// key and returns the queries it already holds; stale reports a file that
// was written under another key and has been started afresh.
func OpenCheckpoint(path, key string) (c *Checkpoint, done ir.Run, stale bool, err error) {
	done = make(ir.Run)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return nil, nil, false, err
	}
	valid := 0 // bytes of data that are whole, parsed lines
	if len(data) > 0 {
		lines := bytes.SplitAfter(data, []byte("\n"))
		var h checkpointHeader
		if json.Unmarshal(lines[0], &h) != nil || h.Checkpoint != key || !bytes.HasSuffix(lines[0], []byte("\n")) {
			stale = true
		} else {
			valid = len(lines[0])
			for i, line := range lines[1:] {
				var q checkpointQuery
				if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &q) != nil {
					if i == len(lines)-2 {
						break // a cut-off last line: redo that query
					}
					return nil, nil, false, fileio.Errorf(path, i+2, "damaged checkpoint line; delete the file to start the rerank afresh")
				}
				hits := make([]ir.Hit, len(q.Hits))
				for j, h := range q.Hits {
					hits[j] = ir.Hit{DocID: h.Doc, Score: h.Score}
				}
				done[q.QID] = hits
				valid += len(line)
			}
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, false, err
	}
	if err := f.Truncate(int64(valid)); err != nil {
		f.Close()
		return nil, nil, false, err
	}
	if _, err := f.Seek(int64(valid), 0); err != nil {
		f.Close()
		return nil, nil, false, err
	}
	c = &Checkpoint{path: path, f: f, w: bufio.NewWriter(f)}
	if valid == 0 {
		if err := c.line(checkpointHeader{Checkpoint: key}); err != nil {
			f.Close()
			return nil, nil, false, err
		}
		done = make(ir.Run)
	}
	return c, done, stale, nil
}

// Add records one finished query. The line is flushed to the file before
// Add returns, so a crash of the process loses no finished query.
func (c *Checkpoint) Add(qid string, hits []ir.Hit) error {
	q := checkpointQuery{QID: qid, Hits: make([]checkpointHit, len(hits))}
	for i, h := range hits {
		q.Hits[i] = checkpointHit{Doc: h.DocID, Score: h.Score}
	}
	return c.line(q)
}

func (c *Checkpoint) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.w.Write(b)
	c.w.WriteByte('\n')
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("writing checkpoint %s: %w", c.path, err)
	}
	return nil
}

// Close closes the file, keeping it for a later resume.
func (c *Checkpoint) Close() error { return c.f.Close() }

// Remove closes and deletes the file, once the final output is written.
func (c *Checkpoint) Remove() error {
	c.f.Close()
	return os.Remove(c.path)
}
