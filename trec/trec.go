// Package trec holds relevance judgments (qrels) and ranked runs, the two
// things every evaluation consumes, and reads and writes them in the TREC
// text formats that trec_eval, Pyserini and ir_measures exchange.
package trec

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// QueryIDs returns the query ids in byte order, the order trec_eval prints.
func QueryIDs[M ~map[string]V, V any](m M) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ReadQrels parses TREC qrels: "qid iter docid grade" per line. name is used
// in error messages. Duplicate (qid, docid) pairs and non-integer grades are
// errors, not silently merged. A byte-order mark at the start is skipped,
// one at the start of a later line (files joined with cat) is an error;
// text that is not UTF-8 is an error naming the line and byte, and so is
// an id holding a character Python's str.split() splits on (U+00A0,
// U+2003, U+001C to U+001F, ...: fileio.CheckID), where pytrec_eval would
// cut it.
func ReadQrels(r io.Reader, name string) (ir.Qrels, error) {
	q := make(ir.Qrels)
	sc := newScanner(r)
	var f []string
	line := 0
	for sc.Scan() {
		line++
		b, err := fileio.SkipBOM(sc.Bytes(), line)
		if err != nil {
			return nil, fileio.Errorf(name, line, "%v", err)
		}
		if err := errtext.CheckUTF8(b, "line"); err != nil {
			return nil, fileio.Errorf(name, line, "%v", err)
		}
		f = fileio.Fields(f, string(b))
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			if len(f) < 4 && truncated(sc) {
				return nil, truncatedError(name, line)
			}
			if isJSON(b) {
				return nil, fileio.Errorf(name, line, "the line is JSON, not a qrels line (query-id iteration doc-id grade)%s", notJSON)
			}
			hint := ""
			if len(f) == 6 && f[1] == "Q0" {
				hint = "; the line looks like a run's (query-id Q0 doc-id rank score tag): is the file a run, given where the qrels go?"
			}
			return nil, fileio.Errorf(name, line, "qrels line has %d fields, want 4 (query-id iteration doc-id grade)%s", len(f), hint)
		}
		grade, err := strconv.Atoi(f[3])
		if err != nil {
			if truncated(sc) {
				return nil, truncatedError(name, line)
			}
			return nil, fileio.Errorf(name, line, "grade %q is not an integer; TREC qrels grades are whole numbers (0 not relevant, 1 and up relevant)", f[3])
		}
		if err := pythonSplits(f, qrelsColumns); err != nil {
			return nil, fileio.Errorf(name, line, "%v", err)
		}
		if !q.Add(f[0], f[2], grade) {
			return nil, fileio.Errorf(name, line, "document %q is judged twice for query %q; keep one judgment per pair", f[2], f[0])
		}
	}
	if err := fileio.ScanError(name, line+1, maxLine, "TREC qrels", sc.Err()); err != nil {
		return nil, err
	}
	return q, nil
}

// ReadRun parses a TREC run: "qid Q0 docid rank score tag" per line. The rank
// column must be an integer but is otherwise ignored, as trec_eval ignores
// it. Scores must be finite decimal numbers (no hexadecimal, no '_'), and a
// document may appear once per query. As in ReadQrels, a leading
// byte-order mark is skipped, one inside the file is an error, and ids
// must be UTF-8 that pytrec_eval splits as trec_eval does.
//
// Runs are large (a million lines for 1,000 queries at depth 1,000), so the
// reader works on the scanner's bytes, allocates only each document id, and
// checks for duplicates once per query after reading instead of keeping a
// map per query.
func ReadRun(r io.Reader, name string) (ir.Run, error) {
	run := make(ir.Run)
	lines := make(map[string][]int32) // per query, the line of each hit
	sc := newScanner(r)
	var f [6][]byte
	var qid string
	var hits []ir.Hit
	var at []int32
	flush := func() {
		if qid != "" || hits != nil {
			run[qid], lines[qid] = hits, at
		}
	}
	line := 0
	for sc.Scan() {
		line++
		b, err := fileio.SkipBOM(sc.Bytes(), line)
		if err != nil {
			return nil, fileio.Errorf(name, line, "%v", err)
		}
		if err := errtext.CheckUTF8(b, "line"); err != nil {
			return nil, fileio.Errorf(name, line, "%v", err)
		}
		n := splitFields(&f, b)
		if n == 0 {
			continue
		}
		if n != 6 {
			if n > 6 {
				n = len(fileio.Fields(nil, string(b)))
			} else if truncated(sc) {
				return nil, truncatedError(name, line)
			}
			if isJSON(b) {
				return nil, fileio.Errorf(name, line, "the line is JSON, not a run line (query-id Q0 doc-id rank score tag)%s", notJSON)
			}
			hint := ""
			if n == 4 && isInteger(f[3]) {
				hint = "; the line looks like a qrels line (query-id iteration doc-id grade): is the file the qrels, given where a run goes?"
			}
			return nil, fileio.Errorf(name, line, "run line has %d fields, want 6 (query-id Q0 doc-id rank score tag)%s", n, hint)
		}
		if !isInteger(f[3]) {
			if isJSON(b) {
				return nil, fileio.Errorf(name, line, "the line is JSON, not a run line (query-id Q0 doc-id rank score tag)%s", notJSON)
			}
			return nil, fileio.Errorf(name, line, "rank %q is not an integer; the fourth column is the rank, a whole number (trec_eval ignores its value)", f[3])
		}
		score, err := strconv.ParseFloat(string(f[4]), 64)
		if errors.Is(err, strconv.ErrRange) {
			return nil, fileio.Errorf(name, line, "score %q is out of range for a float64; scale the run's scores down", f[4])
		}
		if err != nil {
			if truncated(sc) {
				return nil, truncatedError(name, line)
			}
			return nil, fileio.Errorf(name, line, "score %q is not a number; the fifth column is the score, a decimal number such as 12.5", f[4])
		}
		if math.IsNaN(score) || math.IsInf(score, 0) {
			return nil, fileio.Errorf(name, line, "score %q is not finite; a run needs real-valued scores: give the document a finite score or leave it out", f[4])
		}
		if why := notDecimal(f[4]); why != "" {
			return nil, fileio.Errorf(name, line, "score %q is not a decimal number (digits, an optional '.' and exponent): %s", f[4], why)
		}
		if err := pythonSplits(f[:], runColumns); err != nil {
			return nil, fileio.Errorf(name, line, "%v", err)
		}
		if hits == nil || qid != string(f[0]) {
			flush()
			qid = string(f[0])
			hits, at = run[qid], lines[qid]
		}
		hits = append(hits, ir.Hit{DocID: string(f[2]), Score: score})
		at = append(at, int32(line))
	}
	if err := fileio.ScanError(name, line+1, maxLine, "TREC run", sc.Err()); err != nil {
		return nil, err
	}
	flush()
	if err := checkDuplicates(run, lines, name); err != nil {
		return nil, err
	}
	return run, nil
}

// checkDuplicates reports the duplicate whose second occurrence comes first
// in the file, as a reader that checked line by line would. One map, cleared
// per query, keeps its table instead of growing a new one per query.
func checkDuplicates(run ir.Run, lines map[string][]int32, name string) error {
	var bad *fileio.LineError
	seen := make(map[string]int32)
	for qid, hits := range run {
		at := lines[qid]
		clear(seen)
		for i, h := range hits {
			if first, dup := seen[h.DocID]; dup {
				// Lines grow along a query's list, so the first duplicate
				// found is this query's earliest.
				if bad == nil || int(at[i]) < bad.Line {
					bad = fileio.Errorf(name, int(at[i]), "document %q appears twice for query %q (first on line %d); a run ranks each document once", h.DocID, qid, first)
				}
				break
			}
			seen[h.DocID] = at[i]
		}
	}
	if bad != nil {
		return bad
	}
	return nil
}

// splitFields splits b on ASCII white space into at most len(f) fields and
// returns how many it found (len(f)+1 meaning "more").
func splitFields(f *[6][]byte, b []byte) int {
	n := 0
	i := 0
	for i < len(b) {
		for i < len(b) && fileio.IsSpace(b[i]) {
			i++
		}
		start := i
		for i < len(b) && !fileio.IsSpace(b[i]) {
			i++
		}
		if i > start {
			if n == len(f) {
				return n + 1
			}
			f[n] = b[start:i]
			n++
		}
	}
	return n
}

// notDecimal says why a score strconv.ParseFloat accepted is still not
// one every evaluator reads alike, or returns "". Go reads hexadecimal
// floats and '_' between digits; trec_eval's C reader stops at a '_'
// ("1_000" is 1) and Python's float(), which pytrec_eval and ranx use,
// skips it (1000) and refuses hexadecimal, so the same line would rank
// differently in each.
func notDecimal(b []byte) string {
	switch {
	case bytes.IndexByte(b, '_') >= 0:
		return "trec_eval reads only what comes before the '_' but Python's float() skips it; write the score without '_'"
	case bytes.IndexAny(b, "xX") >= 0:
		return "it is hexadecimal, which Python's float() (pytrec_eval, ranx) refuses; write the score in decimal"
	}
	return ""
}

// notJSON ends the error of a JSON line where a TREC line is wanted.
const notJSON = ": a TREC file is whitespace-separated columns, not JSON lines"

// isJSON reports a line that opens a JSON object or array.
func isJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// isInteger accepts what strconv.ParseInt(s, 10, 64) accepts, without
// converting in the common case: an optional sign and up to 18 digits, which
// always fit; longer ones go through ParseInt.
func isInteger(b []byte) bool {
	digits := b
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		_, err := strconv.ParseInt(string(b), 10, 64)
		return err == nil
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ReadQrelsFile reads a qrels file, gzip or plain.
func ReadQrelsFile(path string) (ir.Qrels, error) {
	rc, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadQrels(rc, path)
}

// ReadRunFile reads a run file, gzip or plain.
func ReadRunFile(path string) (ir.Run, error) {
	rc, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadRun(rc, path)
}

// WriteRun writes run in TREC format, queries in byte order and hits in their
// list order, ranks from 1. Scores are written with the fewest digits that
// read back to the same float32 when the run came from a float32 scorer, and
// the same float64 otherwise, so re-evaluating the file reproduces the
// in-memory evaluation.
//
// Every score must be Writable: finite, and finite as trec_eval reads it
// (float32); a score beyond float32's range is refused (RangeError),
// naming the query and document.
//
// Every list's float32 scores must strictly decrease, as ir.Rank leaves
// them: trec_eval ignores the rank column and orders equal float32 scores
// by doc id, so a list with ties would be evaluated in another order than
// the one written. Such a run is refused, naming the query and rank, and
// nothing is written; rank it first (ir.Run.Rank with the stage's tie
// rule).
func WriteRun(w io.Writer, run ir.Run, tag string) error {
	if tag == "" {
		tag = "r2med"
	}
	// Refuse what ReadRun and trec_eval would refuse, rather than write a
	// file nothing can read back.
	if err := checkTag(tag); err != nil {
		return err
	}
	qids := QueryIDs(run)
	for _, qid := range qids {
		hits := run[qid]
		if err := fileio.CheckID(qid); err != nil {
			return fmt.Errorf("query id %v", err)
		}
		for _, h := range hits {
			if err := fileio.CheckID(h.DocID); err != nil {
				return fmt.Errorf("query %q: document id %v", qid, err)
			}
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
				return fmt.Errorf("query %q: document %q has score %v; a run needs finite scores", qid, h.DocID, h.Score)
			}
			if !Writable(h.Score) {
				return &RangeError{Query: qid, Doc: h.DocID, Score: h.Score}
			}
		}
		if i := ir.TieAt(hits); i >= 0 {
			return &TieError{Query: qid, Rank: i + 1, Doc: hits[i].DocID, Score: hits[i].Score, Prev: hits[i-1].Score}
		}
	}
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriter(w)
	}
	buf := make([]byte, 0, 128)
	for _, qid := range qids {
		for i, h := range run[qid] {
			buf = buf[:0]
			buf = append(buf, qid...)
			buf = append(buf, " Q0 "...)
			buf = append(buf, h.DocID...)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(i+1), 10)
			buf = append(buf, ' ')
			buf = AppendScore(buf, h.Score)
			buf = append(buf, ' ')
			buf = append(buf, tag...)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// TieError is WriteRun's refusal of a list whose float32 scores do not
// strictly decrease: the hit at Rank (1-based) scores Score, not below
// Prev, the score of the hit above it.
type TieError struct {
	Query, Doc  string
	Rank        int
	Score, Prev float64
}

func (e *TieError) Error() string {
	return fmt.Sprintf("query %q rank %d: document %q scores %v, not below rank %d's %v as trec_eval reads scores (float32), "+
		"so it would not be evaluated at the rank written; rank the run first (ir.Run.Rank) so that its scores strictly decrease",
		e.Query, e.Rank, e.Doc, float32(e.Score), e.Rank-1, float32(e.Prev))
}

// Writable reports whether a run file can carry the score s: s is finite
// and so is float32(s), the value trec_eval 9.0.8 ranks by. trec_eval
// reads a run's score with atof into the C float of its results
// (get_trec_results.c, trec_format.h); a double beyond float32's range
// (±3.4028235e38, rounded) becomes ±Inf there, as IEEE 754 conversion
// has it, while pytrec_eval's and ranx's float64 readers keep the number.
// A lone such score still ranks first (or last) everywhere, but its value
// is no longer the same number to every reader (a tool that adds it to
// another run's reads Inf, or 1e39), two of them tie at ±Inf for
// trec_eval only, and a tie at −Inf cannot be stepped apart (ir.Rank). So
// the file must not hold one: WriteRun refuses it, and fusion refuses a
// fused score so.
func Writable(s float64) bool {
	return !math.IsNaN(s) && !math.IsInf(s, 0) && !math.IsInf(float64(float32(s)), 0)
}

// RangeError is WriteRun's refusal of a finite score that is not Writable:
// beyond float32's range, which trec_eval reads as ±Inf.
type RangeError struct {
	Query, Doc string
	Score      float64
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("query %q: document %q has score %g, beyond float32's range (±%.8g), in which trec_eval reads a run's scores: "+
		"it would read %v, and tie it with any other score beyond the range; scale the scores down (or normalize them: min-max, z-score) before writing the run",
		e.Query, e.Doc, e.Score, math.MaxFloat32, float32(e.Score))
}

// WriteQrels writes q in TREC qrels format ("qid 0 docid grade"), queries
// and documents in byte order, so equal qrels give equal files.
func WriteQrels(w io.Writer, q ir.Qrels) error {
	bw := bufio.NewWriter(w)
	for _, qid := range QueryIDs(q) {
		for _, docid := range QueryIDs(q[qid]) {
			if _, err := fmt.Fprintf(bw, "%s 0 %s %d\n", qid, docid, q[qid][docid]); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// AppendScore formats a score compactly and losslessly (see WriteRun). A
// float32 score gets the shortest digits that bring back the same float32
// when read as a float64 and then narrowed, which is how trec_eval and our
// evaluator read it; for two float32 values the shortest float32 digits do
// not survive that double rounding, and those get float64 digits. A score
// that is not a float32 keeps float64 digits; as a float32 it then reads
// back to its nearest float32, which is what evaluation ranks on anyway.
func AppendScore(buf []byte, s float64) []byte {
	if float64(float32(s)) == s {
		start := len(buf)
		buf = strconv.AppendFloat(buf, s, 'f', -1, 32)
		back, err := strconv.ParseFloat(string(buf[start:]), 64)
		if err == nil && float32(back) == float32(s) {
			return buf
		}
		buf = buf[:start]
	}
	return strconv.AppendFloat(buf, s, 'f', -1, 64)
}

// AsWritten is the score s reads back as from a file WriteRun wrote: s
// itself when AppendScore gives it float64 digits, the float64 nearest
// its float32 digits otherwise (the same float32, which is what
// evaluation ranks by).
func AsWritten(s float64) float64 {
	var buf [32]byte
	back, err := strconv.ParseFloat(string(AppendScore(buf[:0], s)), 64)
	if err != nil {
		return s
	}
	return back
}

// CompareWritten compares scores a and b as AsWritten gives them back
// (cmp.Compare's order), formatting neither where that cannot change the
// answer: two float32 values (every BM25 score) or two values that are
// not float32 compare as they are, because AsWritten leaves a value that
// is not a float32 as it is, and gives each float32 a number inside its
// own rounding interval, so distinct float32 values keep their order. A
// float32 against a value that is not one (0.1 against float32(0.1)) is
// formatted.
func CompareWritten(a, b float64) int {
	if (float64(float32(a)) == a) == (float64(float32(b)) == b) {
		return cmp.Compare(a, b)
	}
	return cmp.Compare(AsWritten(a), AsWritten(b))
}

// Rank makes run what a stage hands on: ranked by the tie rule t
// (ir.Run.Rank), so that WriteRun accepts it and every evaluator reads
// its list order, and with the scores its file reads back with
// (AsWritten), so that the stages after it see the same numbers whether
// it was just made, read back from a kept stage, or made by the search
// service.
func Rank(run ir.Run, t ir.Ties) {
	for _, hits := range run {
		RankHits(hits, t)
	}
}

// RankHits is Rank for one query's hits.
func RankHits(hits []ir.Hit, t ir.Ties) {
	ir.Rank(hits, t)
	for i := range hits {
		hits[i].Score = AsWritten(hits[i].Score)
	}
}

// checkTag refuses a run tag that ReadRun, trec_eval or pytrec_eval
// would not read back as one column.
func checkTag(tag string) error {
	for i := 0; i < len(tag); i++ {
		if fileio.IsSpace(tag[i]) {
			return fmt.Errorf("run tag %q contains white space; a run's tag is one column: join its words with _ or -", tag)
		}
	}
	return pythonSplits([]string{tag}, []column{{name: "run tag"}})
}

// A column of a TREC line: its name in messages, and whether it holds an
// id (fileio.CheckID's rule and message).
type column struct {
	name string
	id   bool
}

var (
	qrelsColumns = []column{{"query id", true}, {"iteration", false}, {"document id", true}, {"grade", false}}
	runColumns   = []column{{"query id", true}, {"second column (Q0)", false}, {"document id", true}, {"rank", false}, {"score", false}, {"run tag", false}}
)

// pythonSplits refuses a line whose fields (split on ASCII white space,
// as trec_eval splits) hold a character Python's str.split() also splits
// on (fileio.PythonSpace): pytrec_eval would cut an id there and read
// another query or document, or count more columns and refuse the line.
// The rank, grade and score columns are numbers, checked before.
func pythonSplits[T ~string | ~[]byte](fields []T, cols []column) error {
	for j, c := range cols {
		r, i := fileio.PythonSpace(fields[j])
		if i < 0 {
			continue
		}
		if c.id {
			return fmt.Errorf("%s %v", c.name, fileio.CheckID(string(fields[j])))
		}
		return fmt.Errorf("%s %q contains %U, which Python's str.split() takes for whitespace, at byte %d; pytrec_eval would split the line there and refuse it, so rename the %s", c.name, fields[j], r, i, c.name)
	}
	return nil
}

// truncated reports whether the input ends in a truncated gzip stream right
// after the line just read: the scanner hands over a cut last line before
// the decompressor's error, and that line's parse error would hide the real
// problem.
func truncated(sc *bufio.Scanner) bool {
	return !sc.Scan() && errors.Is(sc.Err(), io.ErrUnexpectedEOF)
}

func truncatedError(name string, line int) error {
	return fileio.ScanError(name, line, maxLine, "", io.ErrUnexpectedEOF)
}

// WriteRunFile writes run to path atomically.
func WriteRunFile(path string, run ir.Run, tag string) error {
	return fileio.WriteAtomic(path, func(w io.Writer) error { return WriteRun(w, run, tag) })
}

// maxLine is the longest line the readers take (fileio.MaxLineBytes),
// lowered by tests.
var maxLine = fileio.MaxLineBytes

func newScanner(r io.Reader) *bufio.Scanner { return fileio.NewScanner(r, maxLine) }
