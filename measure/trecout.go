package measure

import (
	"bufio"
	"io"
	"math"
	"strconv"
)

// WriteTrecEval prints res as trec_eval 9.0.8 does: with perQuery (its -q),
// one block per query in query-id order, then the "all" block. Each line is
// C's "%-22s\t%s\t%6.4f" for measures with fractional values and
// "%-22s\t%s\t%ld" for counts, "%-22s\t%s\t%s" with the run's tag for
// runid, and "%-22s\t%s\t'%s'" for relstring's text; measures trec_eval
// prints in the summary only (runid, num_q, gm_map, gm_bpref) have no
// per-query lines, and relstring no summary line. Go's fixed-point
// formatting rounds the exact binary value half to even, as glibc's printf
// does, so the digits agree; a NaN or an infinity (Rndcg or G with gains
// none above 0 or negative) prints as glibc prints it, "-nan", "inf"….
func WriteTrecEval(w io.Writer, res *Result, perQuery bool) error {
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 64)
	line := func(m Measure, qid string, v float64, text string) error {
		buf = append(buf[:0], m.Name()...)
		for len(buf) < 22 {
			buf = append(buf, ' ')
		}
		buf = append(buf, '\t')
		buf = append(buf, qid...)
		buf = append(buf, '\t')
		switch {
		case m.Family == RunID:
			buf = append(buf, res.RunID...)
		case m.Family.Text():
			buf = append(buf, '\'')
			buf = append(buf, text...)
			buf = append(buf, '\'')
		case (math.IsNaN(v) || math.IsInf(v, 0)) && !m.Integer():
			// glibc's %6.4f: "nan", "inf", signed when the sign bit is.
			word := "inf"
			if math.IsNaN(v) {
				word = "nan"
			}
			if math.Signbit(v) {
				word = "-" + word
			}
			buf = append(buf, "      "[len(word):]...)
			buf = append(buf, word...)
		case m.Integer():
			buf = strconv.AppendInt(buf, int64(v), 10)
		default:
			start := len(buf)
			buf = strconv.AppendFloat(buf, v, 'f', 4, 64)
			for len(buf)-start < 6 { // %6.4f pads on the left
				buf = append(buf[:start+1], buf[start:]...)
				buf[start] = ' '
			}
		}
		buf = append(buf, '\n')
		_, err := bw.Write(buf)
		return err
	}
	if perQuery {
		for _, q := range res.Queries {
			for j, m := range res.Measures {
				if m.Family.SummaryOnly() {
					continue
				}
				var text string
				if q.Text != nil {
					text = q.Text[j]
				}
				if err := line(m, q.ID, q.Values[j], text); err != nil {
					return err
				}
			}
		}
	}
	for j, m := range res.Measures {
		if m.Family.Text() {
			continue
		}
		if err := line(m, "all", res.All[j], ""); err != nil {
			return err
		}
	}
	return bw.Flush()
}
