package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// measureParams are a measure's free parameters, read from Measure.Params
// or, when that is empty, trec_eval's defaults (m_utility.c, m_set_F.c,
// m_11pt_avg.c, m_relstring.c; the gain families default to no pairs).
type measureParams struct {
	floats []float64  // floatList families, in the order given
	gains  []gainPair // gainPairs families, in the order given
}

// gainPair is one "grade=gain" of ndcg, ndcg_rel, Rndcg and G.
type gainPair struct {
	level int
	gain  float64
}

// defaultFloats are trec_eval's default parameters of the floatList
// families.
var defaultFloats = map[Family][]float64{
	Utility:   {1, -1, 0, 0},
	SetF:      {1},
	PtAvg11:   {0, .1, .2, .3, .4, .5, .6, .7, .8, .9, 1},
	RelString: {10},
}

// params reads m.Params as trec_eval's get_float_params and
// get_param_pairs read them (meas_init.c), with atof's numbers read
// strictly: a part that is not wholly a finite number is an error where
// atof would read its leading digits or 0.
func (m Measure) params() (measureParams, error) {
	var p measureParams
	info := families[m.Family]
	switch info.params {
	case floatList:
		if m.Params == "" {
			p.floats = defaultFloats[m.Family]
			return p, nil
		}
		for part := range strings.SplitSeq(m.Params, ",") {
			v, err := parseNumber(part)
			if err != nil {
				return p, err
			}
			p.floats = append(p.floats, v)
		}
		if m.Family == Utility && len(p.floats) != 4 {
			return p, fmt.Errorf("utility takes four coefficients a,b,c,d (relevant retrieved, non-relevant retrieved, relevant missed, non-relevant missed), got %d in %q", len(p.floats), m.Params)
		}
	case gainPairs:
		if m.Params == "" {
			return p, nil
		}
		for part := range strings.SplitSeq(m.Params, ",") {
			lvl, gain, ok := strings.Cut(part, "=")
			if !ok {
				return p, fmt.Errorf("%s takes grade=gain pairs (%s.1=0,2=1 gives grade 1 gain 0 and grade 2 gain 1), got %q; for nDCG at a cutoff use ndcg_cut.k", m.Family, m.Family, part)
			}
			l, err := strconv.Atoi(lvl)
			if err != nil {
				return p, fmt.Errorf("%s: the grade in %q must be an integer", m.Family, part)
			}
			g, err := parseNumber(gain)
			if err != nil {
				return p, err
			}
			p.gains = append(p.gains, gainPair{l, g})
		}
	}
	return p, nil
}

// parseNumber reads one number of a parameter list as C's atof does for a
// well-formed number (strconv and glibc's strtod round alike).
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("a parameter must be a finite number, got %q", s)
	}
	return v, nil
}
