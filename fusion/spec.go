package fusion

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// Spec is a fusion stage's settings, as pipeline files (fuse:), the run
// flags and the search service's requests give them. The zero value is
// RRF with k = 60 over each run's top max(k, 100).
type Spec struct {
	Method  string    `yaml:"method" json:"method,omitempty"`   // "rrf" (default) or "combsum"
	K       float64   `yaml:"k" json:"k,omitempty"`             // RRF constant; 0 means 60
	Norm    string    `yaml:"norm" json:"norm,omitempty"`       // combsum: minmax (default), zscore, none
	Weights []float64 `yaml:"weights" json:"weights,omitempty"` // combsum: one per run; nil means all 1
	Depth   int       `yaml:"depth" json:"depth,omitempty"`     // documents each run contributes; 0 means max(top k, 100)
	// Ties orders equal fused scores: BestRank (HAKARI-Bench's, the
	// zero value) or DocID (Pyserini's), as `r2med fuse --ties` says.
	Ties Ties `yaml:"-" json:"-"`
}

// DefaultRRFK is the RRF constant of the RRF paper and Pyserini.
const DefaultRRFK = 60

// DefaultDepth is the least depth each fused run contributes.
const DefaultDepth = 100

// Name is the method's name, "rrf" when none is given.
func (s Spec) Name() string {
	if m := strings.ToLower(s.Method); m != "" {
		return m
	}
	return "rrf"
}

// RRFK is the RRF constant, DefaultRRFK when none is given.
func (s Spec) RRFK() float64 {
	if s.K == 0 {
		return DefaultRRFK
	}
	return s.K
}

// Normalization is CombSUM's normalization, MinMax when none is given.
func (s Spec) Normalization() (Norm, error) {
	if s.Norm == "" {
		return MinMax, nil
	}
	return ParseNorm(s.Norm)
}

// DepthFor is how deep each fused run is for a final top k: fusing only
// the final top k would drop what one run ranks 11th and the other 1st.
func (s Spec) DepthFor(topK int) int {
	if s.Depth > 0 {
		return s.Depth
	}
	return max(topK, DefaultDepth)
}

// FieldError is a setting of a Spec that cannot be used; Field is its key
// ("method", "k", "norm", "weights", "depth").
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// WrittenZero is the error for k or depth written out as 0 in a file or
// request: a Spec reads their zero as the default (DefaultRRFK, DepthFor's
// depth), so a reader that can tell a 0 written from one left out refuses
// it rather than fuse otherwise than asked. Errors are *FieldError.
func WrittenZero(field string) error {
	msg := fmt.Sprintf("RRF k must be above 0, got 0 (leave k out for %d)", DefaultRRFK)
	if field == "depth" {
		msg = fmt.Sprintf("fusion depth must be above 0, got 0 (leave depth out for the default: the top k, at least %d)", DefaultDepth)
	}
	return &FieldError{Field: field, Err: errors.New(msg)}
}

// Validate checks the settings for fusing runs runs; errors are
// *FieldError.
func (s Spec) Validate(runs int) error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	if s.Depth < 0 {
		return bad("depth", "fusion depth must be above 0 (left out, the top k, at least %d), got %d", DefaultDepth, s.Depth)
	}
	if s.Ties > DocID {
		return bad("ties", "unknown fusion tie order %d", s.Ties)
	}
	switch s.Name() {
	case "rrf":
		if !(s.K >= 0) || math.IsInf(s.K, 0) {
			return bad("k", "RRF k must be a finite number above 0 (left out, %d), got %v", DefaultRRFK, s.K)
		}
	case "combsum":
		if _, err := s.Normalization(); err != nil {
			return &FieldError{Field: "norm", Err: err}
		}
		if s.Weights != nil && len(s.Weights) != runs {
			return bad("weights", "%d fusion weights for %d retrievers; give one per retriever", len(s.Weights), runs)
		}
		for i, w := range s.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				return bad("weights", "fusion weight %d is %v; weights must be finite numbers ≥ 0", i+1, w)
			}
		}
	default:
		return bad("method", "unknown fusion method %q (rrf or combsum)", s.Method)
	}
	return nil
}

// Describe lists the settings that change the fused ranking, for
// manifests and fingerprints.
func (s Spec) Describe() map[string]any {
	m := map[string]any{"method": s.Name()}
	if m["method"] == "rrf" {
		m["k"] = s.RRFK()
	} else {
		n, _ := s.Normalization()
		m["norm"] = n.String()
		if s.Weights != nil {
			m["weights"] = s.Weights
		}
	}
	if s.Depth > 0 {
		m["depth"] = s.Depth
	}
	if s.Ties == DocID {
		m["ties"] = "docid"
	}
	return m
}

// Fuse fuses runs, keeping depth documents per query, ties as s.Ties says
// (HAKARI's way unless DocID), and ranks the result as listed
// (trec.Rank with ir.TiesAsListed): the fusion stage's output, which every
// evaluator reads in the order fused.
func (s Spec) Fuse(runs []ir.Run, depth int) (ir.Run, error) {
	if err := s.Validate(len(runs)); err != nil {
		return nil, err
	}
	f := Fuser{Ties: s.Ties}
	var fused ir.Run
	switch s.Name() {
	case "rrf":
		fused = f.RRF(runs, s.RRFK(), depth)
	case "combsum":
		n, _ := s.Normalization()
		fused = f.CombSUM(runs, s.Weights, n, depth)
	default:
		return nil, errors.New("unreachable: Validate accepts rrf and combsum only")
	}
	if err := s.checkRange(fused); err != nil {
		return nil, err
	}
	trec.Rank(fused, ir.TiesAsListed)
	return fused, nil
}

// checkRange refuses fused scores a run file cannot carry (trec.Writable:
// the rule trec.WriteRun applies), which CombSUM can reach summing raw
// scores (norm none) or with large weights: trec_eval reads a run's
// scores as float32, so all of them would read as ±Inf, equal, and be
// ranked by doc id instead of as fused (and ir.Rank cannot step a tie at
// −Inf apart). It is checked here, before ranking, so that the error says
// what to change in the fusion. The first such score in query order is
// named.
func (s Spec) checkRange(run ir.Run) error {
	for _, qid := range trec.QueryIDs(run) {
		for _, h := range run[qid] {
			if trec.Writable(h.Score) {
				continue
			}
			how := s.Name()
			if n, _ := s.Normalization(); how == "combsum" {
				how += ", norm " + n.String()
			}
			return fmt.Errorf("query %q: document %q has the fused score %g (%s), beyond float32's range (±%.2g), in which trec_eval reads a run's scores: "+
				"it would read %v and rank the document otherwise than fused; normalize the runs' scores (norm minmax or zscore), lower the weights or scale the runs' scores down",
				qid, h.DocID, h.Score, how, math.MaxFloat32, float32(h.Score))
		}
	}
	return nil
}
