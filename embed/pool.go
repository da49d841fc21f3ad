package embed

import (
	"fmt"
	"strings"
)

// Pooling reduces a model's token vectors to one vector per text.
type Pooling uint8

const (
	// PoolModel, the zero value, means the model pools itself: its output
	// is already one vector per text (a sentence_embedding output).
	PoolModel Pooling = iota
	// PoolCLS takes the first attended token: [CLS] for BERT (bge, MedCPT).
	PoolCLS
	// PoolMean averages the attended tokens, weighted by the attention
	// mask (contriever, e5, INSTRUCTOR), as sentence-transformers does.
	PoolMean
	// PoolLast takes the last attended token, so it works with left and
	// right padding (decoder embedders: e5-mistral, SFR, BMRetriever).
	PoolLast
)

var poolingNames = [...]string{PoolModel: "model", PoolCLS: "cls", PoolMean: "mean", PoolLast: "last"}

func (p Pooling) String() string {
	if int(p) < len(poolingNames) {
		return poolingNames[p]
	}
	return fmt.Sprintf("Pooling(%d)", uint8(p))
}

// ParsePooling reads "cls", "mean", "last" (also "last_token",
// "lasttoken") or "model" (also ""), case-insensitively.
func ParsePooling(s string) (Pooling, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "model":
		return PoolModel, nil
	case "cls":
		return PoolCLS, nil
	case "mean":
		return PoolMean, nil
	case "last", "last_token", "lasttoken", "last-token":
		return PoolLast, nil
	}
	return 0, fmt.Errorf("unknown pooling %q (want cls, mean, last or model)", s)
}

// Pool reduces hidden, token vectors [rows, seq, dim] in row-major order,
// to rows vectors of dim, using mask [rows, seq] (0 marks padding). The
// vectors share one backing array. A row without any attended token is an
// error: pooling it would invent a vector.
func (p Pooling) Pool(hidden []float32, mask []int64, rows, seq, dim int) ([][]float32, error) {
	if rows < 0 || seq <= 0 || dim <= 0 || len(hidden) != rows*seq*dim || len(mask) != rows*seq {
		return nil, fmt.Errorf("pooling: %d values and a mask of %d for %d rows × %d tokens × %d dims",
			len(hidden), len(mask), rows, seq, dim)
	}
	out := make([][]float32, rows)
	buf := make([]float32, rows*dim)
	var acc []float64
	for r := range rows {
		m := mask[r*seq : (r+1)*seq]
		v := buf[r*dim : (r+1)*dim : (r+1)*dim]
		out[r] = v
		tok := -1
		switch p {
		case PoolCLS:
			for i, x := range m {
				if x != 0 {
					tok = i
					break
				}
			}
		case PoolLast:
			for i := seq - 1; i >= 0; i-- {
				if m[i] != 0 {
					tok = i
					break
				}
			}
		case PoolMean:
			if acc == nil {
				acc = make([]float64, dim)
			}
			clear(acc)
			var w float64
			for i, x := range m {
				if x == 0 {
					continue
				}
				f := float64(x)
				w += f
				for j, h := range hidden[(r*seq+i)*dim : (r*seq+i+1)*dim] {
					acc[j] += f * float64(h)
				}
			}
			if w == 0 {
				return nil, fmt.Errorf("pooling: row %d has no attended tokens", r)
			}
			for j := range v {
				v[j] = float32(acc[j] / w)
			}
			continue
		default:
			return nil, fmt.Errorf("pooling %s cannot reduce token vectors", p)
		}
		if tok < 0 {
			return nil, fmt.Errorf("pooling: row %d has no attended tokens", r)
		}
		copy(v, hidden[(r*seq+tok)*dim:(r*seq+tok+1)*dim])
	}
	return out, nil
}
