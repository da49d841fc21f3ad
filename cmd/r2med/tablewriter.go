package main

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/r2med/r2med/internal/textwrap"
)

// tableWriter takes tab-separated lines, as text/tabwriter does, and lays
// them out with textwrap.Table on Flush: for people (a terminal, or
// $COLUMNS set) fitted to terminalWidth as its layout allows, nothing
// cut; piped, each row on one line, whole, for scripts.
type tableWriter struct {
	out    io.Writer
	buf    bytes.Buffer
	layout textwrap.Layout
}

func newTableWriter(out io.Writer, layout textwrap.Layout) *tableWriter {
	return &tableWriter{out: out, layout: layout}
}

func (t *tableWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

func (t *tableWriter) Flush() error {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(t.buf.String(), "\n"), "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	t.buf.Reset()
	var b strings.Builder
	for _, l := range textwrap.Table(rows, peopleWidth(t.out), t.layout) {
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(t.out, b.String())
	return err
}

// peopleWidth is the width a table for people keeps to: terminalWidth
// when out is a terminal or $COLUMNS is set, else 0 (piped: no limit, a
// row a line).
func peopleWidth(out io.Writer) int {
	if isTerminal(out) || os.Getenv("COLUMNS") != "" {
		return terminalWidth(out)
	}
	return 0
}
