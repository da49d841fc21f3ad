// Package significance says whether one retrieval system's per-query
// scores differ from another's by more than chance: the paired
// randomization (sign-flip permutation) test and the paired t-test, both
// two-sided, Cohen's d for paired samples, a percentile bootstrap interval
// of the mean difference, per-query wins and losses, and Holm–Bonferroni
// adjustment when several systems are compared with one baseline.
//
// Every random choice comes from a seeded generator, so a report is the
// same on every run with the same seed.
package significance

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Options tune the resampling. The zero value is 10,000 permutations,
// 10,000 bootstrap resamples, a 95% interval and seed 1.
type Options struct {
	// Permutations is the number of random sign flips of the sampled
	// randomization test. When the pairs that differ are at most
	// ExactLimit, all 2^n flips are enumerated instead and the p-value is
	// exact.
	Permutations int
	// Resamples is the number of bootstrap resamples.
	Resamples int
	// Level is the confidence level of the interval, in (0, 1).
	Level float64
	// Seed seeds the generator; 0 means 1.
	Seed uint64
	// Test is the test Compare's all-pairs comparison uses ("": Rand),
	// and MaxP the adjusted p-value at or below which it calls a pair
	// different (0: DefaultMaxP).
	Test Test
	MaxP float64
}

// ExactLimit is the largest number of non-zero differences for which the
// randomization test enumerates every sign assignment (2^20 ≈ 10^6).
const ExactLimit = 20

func (o Options) withDefaults() (Options, error) {
	if o.Permutations == 0 {
		o.Permutations = 10000
	}
	if o.Resamples == 0 {
		o.Resamples = 10000
	}
	if o.Level == 0 {
		o.Level = 0.95
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	switch {
	case o.Permutations < 0:
		return o, fmt.Errorf("significance: %d permutations", o.Permutations)
	case o.Resamples < 0:
		return o, fmt.Errorf("significance: %d bootstrap resamples", o.Resamples)
	case !(o.Level > 0 && o.Level < 1):
		return o, fmt.Errorf("significance: confidence level %v is not in (0, 1)", o.Level)
	case o.MaxP < 0 || o.MaxP >= 1:
		return o, fmt.Errorf("significance: significance level %v is not in (0, 1)", o.MaxP)
	}
	return o, nil
}

// Result compares system B with baseline A on the same queries.
// Differences are B − A.
type Result struct {
	N            int     `json:"n"`
	MeanA        float64 `json:"mean_a"`
	MeanB        float64 `json:"mean_b"`
	Diff         float64 `json:"diff"` // mean of B − A
	Wins         int     `json:"wins"` // queries where B > A
	Losses       int     `json:"losses"`
	Ties         int     `json:"ties"`
	T            float64 `json:"t"`
	DF           int     `json:"df"`
	TTestP       float64 `json:"ttest_p"`
	RandP        float64 `json:"randomization_p"`
	Exact        bool    `json:"exact"`        // RandP enumerated every sign flip
	Permutations int     `json:"permutations"` // flips drawn or enumerated
	CohenD       float64 `json:"cohen_d"`
	// CohenDefined is false when the differences do not vary (or there
	// is one pair): d is then undefined, stored as 0 and printed "—".
	CohenDefined bool    `json:"cohen_d_defined"`
	Level        float64 `json:"level"`
	CILow        float64 `json:"ci_low"` // bootstrap interval of Diff
	CIHigh       float64 `json:"ci_high"`
}

// ErrNoPairs reports a comparison with no queries.
var ErrNoPairs = errors.New("significance: no paired values to compare")

// Paired compares b with baseline a, pairs by index.
func Paired(a, b []float64, opt Options) (Result, error) {
	if len(a) != len(b) {
		return Result{}, fmt.Errorf("significance: %d baseline values but %d system values; pairs must align", len(a), len(b))
	}
	if len(a) == 0 {
		return Result{}, ErrNoPairs
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return Result{}, err
	}
	d := make([]float64, len(a))
	r := Result{N: len(a), Level: opt.Level}
	for i := range a {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) {
			return Result{}, fmt.Errorf("significance: value %d is NaN", i)
		}
		d[i] = b[i] - a[i]
		switch {
		case d[i] > 0:
			r.Wins++
		case d[i] < 0:
			r.Losses++
		default:
			r.Ties++
		}
	}
	r.MeanA, r.MeanB, r.Diff = mean(a), mean(b), mean(d)
	r.T, r.DF, r.TTestP = TTest(d)
	r.CohenD = CohenD(d)
	r.CohenDefined = len(d) > 1 && sd(d) > noSpread
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	r.RandP, r.Exact, r.Permutations = Randomization(d, opt.Permutations, rng)
	r.CILow, r.CIHigh = Bootstrap(d, opt.Resamples, opt.Level, rng)
	return r, nil
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// sd is the sample standard deviation (n − 1 in the denominator).
func sd(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := mean(x)
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(x)-1))
}

// TTest is the two-sided paired t-test on differences d: t = mean/(sd/√n)
// with n − 1 degrees of freedom, p from Student's t distribution. With no
// spread it returns t = 0 and p = 1 when every difference is 0, and an
// infinite t with p = 0 otherwise; with one pair, t = 0 and p = 1.
func TTest(d []float64) (t float64, df int, p float64) {
	n := len(d)
	df = n - 1
	if n < 2 {
		return 0, df, 1
	}
	m, s := mean(d), sd(d)
	if s == 0 {
		if m == 0 {
			return 0, df, 1
		}
		return math.Copysign(math.Inf(1), m), df, 0
	}
	t = m / (s / math.Sqrt(float64(n)))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Survival(math.Abs(t))
	return t, df, min(p, 1)
}

// CohenD is Cohen's d for paired samples, d_z: the mean difference over
// the standard deviation of the differences; 0 when they do not vary
// (a spread below 1e-9, float noise on values of 0–1 measures, counts as
// none: d would be a meaningless 10^15).
func CohenD(d []float64) float64 {
	s := sd(d)
	if s <= noSpread {
		return 0
	}
	return mean(d) / s
}

const noSpread = 1e-9

// Randomization is the two-sided paired randomization test of differences
// d: under the null hypothesis each difference is as likely to have the
// other sign, so p is the share of sign assignments whose sum is at least
// as far from 0 as the observed one. Zero differences do not change any
// sum and are set aside; with at most ExactLimit others every assignment
// is enumerated (exact p, n = 2^k). Otherwise perms random assignments are
// drawn and p = (hits+1)/(perms+1), which never reports an impossible 0.
func Randomization(d []float64, perms int, rng *rand.Rand) (p float64, exact bool, n int) {
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	if len(nz) == 0 {
		return 1, true, 1
	}
	var obs float64
	for _, v := range nz {
		obs += v
	}
	// Sums that equal the observed one up to rounding count as "as
	// extreme": the same values added in another order differ in the
	// last bits.
	var scale float64
	for _, v := range nz {
		scale += math.Abs(v)
	}
	thr := math.Abs(obs) - 1e-9*scale
	if len(nz) <= ExactLimit {
		k := len(nz)
		hits := 0
		for mask := uint32(0); mask < 1<<k; mask++ {
			var s float64
			for i, v := range nz {
				if mask>>i&1 == 1 {
					s -= v
				} else {
					s += v
				}
			}
			if math.Abs(s) >= thr {
				hits++
			}
		}
		return float64(hits) / float64(uint64(1)<<k), true, 1 << k
	}
	hits := 0
	for range perms {
		var s float64
		for i := 0; i < len(nz); i += 64 {
			signs := rng.Uint64()
			for j := i; j < min(i+64, len(nz)); j++ {
				if signs&1 == 1 {
					s -= nz[j]
				} else {
					s += nz[j]
				}
				signs >>= 1
			}
		}
		if math.Abs(s) >= thr {
			hits++
		}
	}
	return float64(hits+1) / float64(perms+1), false, perms
}

// Bootstrap is the percentile bootstrap interval of the mean of d at the
// given level: the means of n resamples (with replacement, same size)
// sorted, and as many cut off at each end as a share (1−level)/2 of n, as
// scipy.stats.bootstrap's percentile method does up to interpolation.
func Bootstrap(d []float64, n int, level float64, rng *rand.Rand) (lo, hi float64) {
	if n == 0 || len(d) == 0 {
		m := mean(d)
		return m, m
	}
	means := make([]float64, n)
	for r := range means {
		var s float64
		for range d {
			s += d[rng.IntN(len(d))]
		}
		means[r] = s / float64(len(d))
	}
	slices.Sort(means)
	k := tailCount(n, level)
	return means[k], means[n-1-k]
}

// tailCount is how many of n sorted resamples a two-sided interval at
// level leaves out at each end. (1−level)/2·n is rounded before the floor:
// 0.05·1000 is 49.99999999999999 in floating point, and the interval must
// not lose a resample to that.
func tailCount(n int, level float64) int {
	k := int(math.Floor((1-level)/2*float64(n) + 1e-9))
	return max(min(k, (n-1)/2), 0)
}

// Holm adjusts p-values for testing them together (Holm–Bonferroni): the
// i-th smallest is multiplied by m−i+1 (i from 1), made no smaller than
// the adjusted ones before it, and capped at 1. The result is parallel to
// p; a hypothesis is rejected at level α when its adjusted p ≤ α.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(p[a], p[b]) })
	out := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		v := min(1, float64(m-rank)*p[i])
		running = max(running, v)
		out[i] = running
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
