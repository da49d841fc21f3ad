package dataset

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// ReadQrelsFile reads a qrels file of any of the three formats tasks
// ship, told apart by its first non-blank line, gzip or plain: TREC qrels
// (query-id iteration doc-id grade, four fields, as trec_eval reads
// them), R2MED's qrels.jsonl (a JSON object per line: "q_id", "p_id",
// "score") or BEIR's qrels TSV (three columns after a header line). Each
// is read by its own reader (trec.ReadQrels, ReadQrelsJSONL,
// ReadBEIRQrels), so errors name the file, the line and the format's
// fields.
func ReadQrelsFile(path string) (ir.Qrels, error) {
	rc, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadQrels(rc, path)
}

// ReadQrels is ReadQrelsFile over a reader; name is the file named in
// errors.
func ReadQrels(r io.Reader, name string) (ir.Qrels, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	switch qrelsFormat(firstLine(br)) {
	case "jsonl":
		return ReadQrelsJSONL(br, name)
	case "beir":
		return ReadBEIRQrels(br, name)
	}
	return trec.ReadQrels(br, name)
}

// firstLine is the first non-blank line br holds in its buffer, without
// consuming it (a line longer than the buffer is cut there, which is
// enough to tell the formats apart).
func firstLine(br *bufio.Reader) []byte {
	buf, _ := br.Peek(br.Size())
	for len(buf) > 0 {
		line, rest, _ := bytes.Cut(buf, []byte{'\n'})
		if t := bytes.TrimSpace(bytes.TrimPrefix(line, fileio.BOM)); len(t) > 0 {
			return t
		}
		buf = rest
	}
	return nil
}

// qrelsFormat tells the formats apart by a first line: a JSON object is
// R2MED's JSON lines; three fields are BEIR's when they are its header
// (a grade column named score, relevance or label) or a judgment (whose
// reader then asks for the header BEIR's loader needs); anything else is
// read as TREC qrels, whose reader says what is wrong with it.
func qrelsFormat(line []byte) string {
	if len(line) > 0 && line[0] == '{' {
		return "jsonl"
	}
	if f := bytes.Fields(line); len(f) == 3 {
		if _, err := strconv.Atoi(string(f[2])); err == nil {
			return "beir"
		}
		switch strings.ToLower(string(f[2])) {
		case "score", "relevance", "label":
			return "beir"
		}
	}
	return "trec"
}
