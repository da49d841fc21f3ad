package significance

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/r2med/r2med/tasks"
)

// Test is the test AllPairs compares every two systems with.
type Test string

// The all-pairs tests, as ranx offers them.
const (
	// Rand is the two-sided paired randomization test (Fisher's; ranx's
	// "fisher"), its p-values adjusted by Holm–Bonferroni over the pairs.
	Rand Test = "rand"
	// T is the two-sided paired t-test (ranx's "student"), Holm over the
	// pairs.
	T Test = "t"
	// Tukey is the randomised Tukey HSD test (Carterette 2012, Sakai
	// 2014): each query's values are shuffled among the systems and a
	// pair's p is the share of shuffles whose largest difference of
	// means reaches the pair's; it controls the family-wise error over
	// all pairs by itself. (ranx's "tukey" is SciPy's one-way, unpaired
	// HSD; this one keeps the queries paired, as IR evaluation does.)
	Tukey Test = "tukey"
)

// ParseTest reads a test name; "" is Rand.
func ParseTest(s string) (Test, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "rand", "randomization", "fisher", "permutation":
		return Rand, nil
	case "t", "ttest", "t-test", "student":
		return T, nil
	case "tukey", "hsd", "tukey-hsd":
		return Tukey, nil
	}
	return "", fmt.Errorf("unknown test %q; want rand (paired randomization, Fisher's), t (paired t-test, Student's) or tukey (randomised Tukey HSD)", s)
}

// Describe says what the test is and how its p-values are adjusted, for
// legends and captions.
func (t Test) Describe(pairs int) string {
	switch t {
	case T:
		return fmt.Sprintf("two-sided paired t-test, Holm–Bonferroni over the %s of each column", count(pairs, "pair"))
	case Tukey:
		return fmt.Sprintf("randomised Tukey HSD test (each query's values shuffled among the systems; family-wise over the %s of each column)", count(pairs, "pair"))
	}
	return fmt.Sprintf("two-sided paired randomization test, Holm–Bonferroni over the %s of each column", count(pairs, "pair"))
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// DefaultMaxP is the p-value at or below which AllPairs calls a
// difference significant, unless Options.MaxP says otherwise.
const DefaultMaxP = 0.05

// AllPairs compares every system with every other, ranx's way: in each
// group of queries (each task, and all of them pooled when there are
// several) every pair is tested, and a system's value carries the
// letters of the systems it is significantly better than.
type AllPairs struct {
	// Systems are the systems compared, in the order given; system i is
	// lettered Letter(i).
	Systems []string `json:"systems"`
	Test    Test     `json:"test"`
	// MaxP is the significance level: an adjusted p at or below it is a
	// significant difference.
	MaxP   float64     `json:"max_p"`
	Groups []PairGroup `json:"groups"`
}

// PairGroup is the all-pairs comparison on one group of queries.
type PairGroup struct {
	// Task is the group's task ("" for one unnamed task); Pooled marks
	// the group of every task's queries together.
	Task    string    `json:"task"`
	Pooled  bool      `json:"pooled,omitempty"`
	Queries int       `json:"queries"`
	Means   []float64 `json:"means"`
	// P holds the adjusted p-value of each pair, P[i][j] = P[j][i]; 1 on
	// the diagonal.
	P [][]float64 `json:"p"`
	// Exact is set when every p-value was computed exactly (every sign
	// flip of the randomization test enumerated).
	Exact bool `json:"exact,omitempty"`
	// Permutations is how many random sign flips or shuffles were drawn
	// (0 when exact or for the t-test).
	Permutations int `json:"permutations,omitempty"`
}

// Better reports whether system i is significantly better than system j
// in the group.
func (p *AllPairs) Better(g PairGroup, i, j int) bool {
	return i != j && g.Means[i] > g.Means[j] && g.P[i][j] <= p.MaxP
}

// Letters are the letters of the systems system i is significantly
// better than in the group, in order.
func (p *AllPairs) Letters(g PairGroup, i int) string {
	var b strings.Builder
	for j := range p.Systems {
		if p.Better(g, i, j) {
			b.WriteString(Letter(j))
		}
	}
	return b.String()
}

// MaxSystems is how many systems AllPairs letters: a to z.
const MaxSystems = 26

// Letter is system i's letter: a, b, c…
func Letter(i int) string { return string(rune('a' + i)) }

// allPairs compares the systems on every group: each task of the task
// grouping (in R2MED's order, then by name) and all queries pooled when
// there are several, else all queries as one group named by their task.
func allPairs(queries []string, systems []System, groupings []Grouping, opt Options) (*AllPairs, error) {
	if len(systems) > MaxSystems {
		return nil, fmt.Errorf("significance: %d systems; all-pairs letters go to %d (a–z)", len(systems), MaxSystems)
	}
	test, err := ParseTest(string(opt.Test))
	if err != nil {
		return nil, err
	}
	out := &AllPairs{Test: test, MaxP: opt.MaxP}
	if out.MaxP == 0 {
		out.MaxP = DefaultMaxP
	}
	for _, s := range systems {
		out.Systems = append(out.Systems, s.Name)
	}
	byTask := map[string][]string{}
	for _, g := range groupings {
		if g.Name != TaskGrouping {
			continue
		}
		for _, q := range queries {
			byTask[g.Of[q]] = append(byTask[g.Of[q]], q)
		}
	}
	names := make([]string, 0, len(byTask))
	for t := range byTask {
		names = append(names, t)
	}
	slices.SortFunc(names, compareTasks)
	if len(names) > 1 {
		for _, t := range names {
			out.Groups = append(out.Groups, pairGroup(t, false, byTask[t], systems, test, opt))
		}
		out.Groups = append(out.Groups, pairGroup("", true, queries, systems, test, opt))
	} else {
		task := ""
		if len(names) == 1 {
			task = names[0]
		}
		out.Groups = append(out.Groups, pairGroup(task, false, queries, systems, test, opt))
	}
	return out, nil
}

// compareTasks orders R2MED's tasks as R2MED does, then others by name.
func compareTasks(a, b string) int {
	idx := func(s string) int {
		for i, t := range tasks.All() {
			if t.Name == s {
				return i
			}
		}
		return len(tasks.All())
	}
	return cmp.Or(idx(a)-idx(b), strings.Compare(a, b))
}

func pairGroup(task string, pooled bool, queries []string, systems []System, test Test, opt Options) PairGroup {
	opt, _ = opt.withDefaults() // validated by Compare's first Paired call
	g := PairGroup{Task: task, Pooled: pooled, Queries: len(queries), Exact: test == Rand}
	vals := make([][]float64, len(systems))
	for i, s := range systems {
		vals[i] = make([]float64, len(queries))
		for k, q := range queries {
			vals[i][k] = s.Values[q]
		}
		g.Means = append(g.Means, mean(vals[i]))
	}
	n := len(systems)
	g.P = make([][]float64, n)
	for i := range g.P {
		g.P[i] = make([]float64, n)
		g.P[i][i] = 1
	}
	if test == Tukey {
		tukeyHSD(&g, vals, opt)
		return g
	}
	type pair struct{ i, j int }
	var pairs []pair
	var ps []float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			d := make([]float64, len(queries))
			for k := range d {
				d[k] = vals[j][k] - vals[i][k]
			}
			var p float64
			if test == T {
				_, _, p = TTest(d)
			} else {
				rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
				var exact bool
				var perms int
				p, exact, perms = Randomization(d, opt.Permutations, rng)
				if !exact {
					g.Exact = false
					g.Permutations = max(g.Permutations, perms)
				}
			}
			pairs, ps = append(pairs, pair{i, j}), append(ps, p)
		}
	}
	for k, p := range Holm(ps) {
		g.P[pairs[k].i][pairs[k].j], g.P[pairs[k].j][pairs[k].i] = p, p
	}
	return g
}

// tukeyHSD fills a group's p-values by the randomised Tukey HSD test:
// opt.Permutations times, each query's values are shuffled among the
// systems, and the largest difference of the systems' means recorded; a
// pair's p is (hits+1)/(shuffles+1), hits the shuffles whose largest
// difference is at least the pair's observed one.
func tukeyHSD(g *PairGroup, vals [][]float64, opt Options) {
	n := len(vals)
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	nq := 0
	if n > 0 {
		nq = len(vals[0])
	}
	row := make([]float64, n)
	sums := make([]float64, n)
	var ranges []float64
	for range opt.Permutations {
		clear(sums)
		for k := range nq {
			for i := range n {
				row[i] = vals[i][k]
			}
			rng.Shuffle(n, func(a, b int) { row[a], row[b] = row[b], row[a] })
			for i := range n {
				sums[i] += row[i]
			}
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range sums {
			lo, hi = min(lo, s), max(hi, s)
		}
		ranges = append(ranges, (hi-lo)/float64(max(nq, 1)))
	}
	slices.Sort(ranges)
	g.Permutations = opt.Permutations
	for i := range n {
		for j := i + 1; j < n; j++ {
			obs := math.Abs(g.Means[i] - g.Means[j])
			// Ranges equal to the observed difference up to rounding count
			// as reaching it, as in Randomization.
			thr := obs - 1e-12*max(1, obs)
			hits := len(ranges) - firstNotBelow(ranges, thr)
			p := float64(hits+1) / float64(len(ranges)+1)
			if obs == 0 {
				p = 1
			}
			g.P[i][j], g.P[j][i] = p, p
		}
	}
}

// firstNotBelow is the index of the first of the sorted xs not below v.
func firstNotBelow(xs []float64, v float64) int {
	i, _ := slices.BinarySearch(xs, v)
	return i
}
