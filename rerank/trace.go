package rerank

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// TraceFile is where a Job with a checkpoint keeps its traces: beside the
// checkpoint, its ".partial" replaced by ".trace.jsonl" (r2med rerank's
// OUT.partial gives OUT.trace.jsonl, beside the reranked run).
func TraceFile(checkpoint string) string {
	return strings.TrimSuffix(checkpoint, ".partial") + ".trace.jsonl"
}

// traceLog writes a rerank's traces as JSON lines, one query at a time:
// a query's traces are held until the query is finished and then written
// in Step order (a Merge's part by part: see partOrder), just before its
// checkpoint line, so the file holds whole queries only and resumes with
// the checkpoint. The file is created at the first trace: scorers without
// traces leave none.
type traceLog struct {
	path    string
	mu      sync.Mutex
	pending map[string][]Trace
	f       *os.File
	w       *bufio.Writer
}

// openTraceLog prepares path for a rerank that resumes the queries in
// done: their traces are kept (lines of other queries, and a line cut off
// by a crash, are dropped); with none done, an earlier file is removed.
func openTraceLog(path string, done ir.Run) (*traceLog, error) {
	t := &traceLog{path: path, pending: map[string][]Trace{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	if len(done) == 0 {
		return t, os.Remove(path)
	}
	var keep [][]byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		var tr struct {
			QID string `json:"qid"`
		}
		if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &tr) != nil {
			continue
		}
		if _, ok := done[tr.QID]; ok {
			keep = append(keep, line)
		}
	}
	err = fileio.WriteAtomic(path, func(w io.Writer) error {
		for _, line := range keep {
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
	return t, err
}

// add holds a trace until its query is finished.
func (t *traceLog) add(tr Trace) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[tr.QueryID] = append(t.pending[tr.QueryID], tr)
}

// flush writes a finished query's traces.
func (t *traceLog) flush(qid string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	trs := t.pending[qid]
	delete(t.pending, qid)
	if len(trs) == 0 {
		return nil
	}
	if t.f == nil {
		f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		t.f, t.w = f, bufio.NewWriter(f)
	}
	slices.SortStableFunc(trs, func(a, b Trace) int {
		if c := partOrder(a.Part) - partOrder(b.Part); c != 0 {
			return c
		}
		return a.Step - b.Step
	})
	enc := json.NewEncoder(t.w)
	enc.SetEscapeHTML(false)
	for _, tr := range trs {
		if err := enc.Encode(tr); err != nil {
			return err
		}
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("writing traces %s: %w", t.path, err)
	}
	return nil
}

func (t *traceLog) Close() error {
	if t.f == nil {
		return nil
	}
	return t.f.Close()
}

// partOrder orders a Merge's traces: its pointwise scorer's, then its
// listwise scorer's, then its own; a scorer's own traces have no part.
func partOrder(part string) int {
	switch part {
	case "":
		return 0
	case MergePointwise:
		return 1
	case MergeListwise:
		return 2
	}
	return 3
}
