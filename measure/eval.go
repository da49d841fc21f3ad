package measure

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// Options are the evaluation switches trec_eval takes on its command line.
type Options struct {
	// RelevanceLevel is trec_eval's -l: a judged document is relevant when its
	// grade is at least this. Zero selects trec_eval's default, 1, which is
	// also HAKARI-Bench's rule (grade > 0) for positives; levels below 1 are
	// rejected, since they would make judged non-relevant documents relevant.
	RelevanceLevel int
	// Complete is trec_eval's -c: means are taken over every query in the
	// qrels, a query the run lacks counting 0 (its relevant documents still
	// count in num_rel's total). Without it, means are over the queries
	// evaluated. For HAKARI measures it likewise adds the judged queries the
	// run lacks, as zeros, to the run's queries.
	Complete bool
	// QueryOrder is the order a HAKARI-Bench evaluation holds its queries
	// in: the task's query order, in which it builds its rankings.
	// metrics.py adds the per-query values up in that order, one float
	// addition each, so the means' last bits depend on it. Run queries it
	// does not name follow in byte order of their ids, as do all of them
	// when it is nil. trec_eval measures ignore it.
	QueryOrder []string
	// RunID is the run's tag, which the runid measure prints: trec_eval
	// prints the sixth column of the run file's last line (trec.ReadRunLastTag).
	RunID string
}

func (o Options) level() (int, error) {
	switch {
	case o.RelevanceLevel == 0:
		return 1, nil
	case o.RelevanceLevel < 0:
		return 0, fmt.Errorf("measure: relevance level %d is below 1", o.RelevanceLevel)
	}
	return o.RelevanceLevel, nil
}

// Result holds per-query values and the summary row of one evaluation.
type Result struct {
	// Measures in output order: trec_eval's table order, cutoffs ascending,
	// each measure once.
	Measures []Measure
	// Queries in byte order of their ids. For trec_eval measures these are the
	// queries with both results and judgments; for HAKARI measures, every
	// query of the run.
	Queries []QueryResult
	// All is the summary row ("all" in trec_eval's output), parallel to
	// Measures: the sum for counts (Measure.Integer), the number of queries
	// for num_q, the geometric mean for gm_map, the mean otherwise.
	All []float64
	// NumQueries is the number of queries the means are taken over.
	NumQueries int
	// RunID is what the runid measure prints (Options.RunID).
	RunID string
}

// QueryResult is one query's values, parallel to Result.Measures.
type QueryResult struct {
	ID     string
	Values []float64
	// Text is parallel to Values when a measure is a text (relstring,
	// Family.Text), whose value is 0; nil otherwise.
	Text []string
}

// Index returns m's position in r.Measures, or -1.
func (r *Result) Index(m Measure) int {
	i, ok := slices.BinarySearchFunc(r.Measures, m, compare)
	if !ok {
		return -1
	}
	return i
}

// ErrNoQueries reports a trec_eval evaluation with no query in both the run
// and the qrels, almost always mismatched query ids; trec_eval refuses it too.
var ErrNoQueries = errors.New("measure: no query has both results and relevance judgments")

// noQueries is ErrNoQueries with what the two sides hold: which one is
// empty, or a few query ids of each, which shows the mismatch (another
// task's run, ids spelled differently).
func noQueries(qrels ir.Qrels, run ir.Run) error {
	switch {
	case len(run) == 0:
		return fmt.Errorf("%w: the run is empty (no result lines)", ErrNoQueries)
	case len(qrels) == 0:
		return fmt.Errorf("%w: the qrels hold no judgments", ErrNoQueries)
	}
	rq := slices.Sorted(maps.Keys(run))
	jq := slices.Sorted(maps.Keys(qrels))
	return fmt.Errorf("%w: the run's %d %s (%s) are none of the qrels' %d (%s); check that the run and the qrels come from the same task (query ids must match exactly)",
		ErrNoQueries, len(rq), errtext.Plural(len(rq), "query", "queries"), errtext.QuoteList(rq, 3), len(jq), errtext.QuoteList(jq, 3))
}

// Evaluate computes measures for every query of run against qrels, and
// their summary. The measures must be all trec_eval measures or all HAKARI
// ones: the two kinds average over different sets of queries. Duplicates in
// measures are dropped.
//
// Run scores must not be NaN. Queries are evaluated in parallel; the result
// does not depend on how they are scheduled.
func Evaluate(qrels ir.Qrels, run ir.Run, measures []Measure, opt Options) (*Result, error) {
	level, err := opt.level()
	if err != nil {
		return nil, err
	}
	ms := slices.Clone(measures)
	slices.SortFunc(ms, compare)
	ms = slices.Compact(ms)
	if len(ms) == 0 {
		return nil, errors.New("measure: no measures to evaluate")
	}
	for _, m := range ms {
		if err := m.validate(); err != nil {
			return nil, err
		}
	}
	hakari := ms[0].Family.Hakari()
	if hakari != ms[len(ms)-1].Family.Hakari() {
		return nil, errors.New("measure: trec_eval and HAKARI-Bench measures cannot share one evaluation; they average over different queries")
	}

	var qids []string
	if hakari {
		qids = trec.QueryIDs(run)
	} else {
		qids = make([]string, 0, len(run))
		for qid := range run {
			if _, ok := qrels[qid]; ok {
				qids = append(qids, qid)
			}
		}
		slices.Sort(qids)
		if len(qids) == 0 {
			return nil, noQueries(qrels, run)
		}
	}

	p, err := newPlan(ms, level, hakari, qrels, run, qids)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Measures: ms,
		Queries:  make([]QueryResult, len(qids)),
		All:      make([]float64, len(ms)),
		RunID:    opt.RunID,
	}
	vals := make([]float64, len(qids)*len(ms))
	var texts []string
	if p.text {
		texts = make([]string, len(qids)*len(ms))
	}
	for i, qid := range qids {
		res.Queries[i] = QueryResult{ID: qid, Values: vals[i*len(ms) : (i+1)*len(ms) : (i+1)*len(ms)]}
		if p.text {
			res.Queries[i].Text = texts[i*len(ms) : (i+1)*len(ms) : (i+1)*len(ms)]
		}
	}
	if err := p.run(qrels, run, res.Queries); err != nil {
		return nil, err
	}
	p.summarize(res, qrels, opt)
	return res, nil
}

// plan is what every query's evaluation shares: which quantities to track
// and where each measure's value comes from.
type plan struct {
	ms     []Measure
	level  int
	hakari bool
	cuts   []int // distinct cutoffs of all measures, ascending
	cutAt  []int // per measure, its index in cuts (-1 without a cutoff)
	maxK   int   // deepest rank any HAKARI measure looks at
	ideal  bool  // an nDCG measure needs the ideal ranking
	log2   []float64
	// hakariIdeal[m] is HAKARI's ideal DCG of m relevant documents.
	hakariIdeal []float64
	params      []measureParams // per measure, its free parameters
	text        bool            // a measure is a text (relstring)
	gains       bool            // a measure walks trec_eval's gain levels
}

// computedBy lists the families each per-query pass computes: trecQuery
// (false) and hakariQuery (true). newPlan refuses any other, so a family
// added to the table but to neither pass is an error, never a 0.
var computedBy = map[bool][]Family{
	false: {RunID, NumQ, NumRet, NumRel, NumRelRet, MAP, GMMAP, RPrec, BPref, RecipRank, IPrecAtRecall, P,
		RelString, Recall, InfAP, GMBPref, RPrecMult, Utility, PtAvg11, BinG, G, NDCG, NDCGRel, RNDCG, NDCGCut,
		MAPCut, RelativeP, Success, SetP, SetRelativeP, SetRecall, SetMAP, SetF, NumNonrelJudgedRet},
	true: {Hit, HakariPrecision, HakariRecall, HakariMRR, HakariNDCG, HakariMAP},
}

func newPlan(ms []Measure, level int, hakari bool, qrels ir.Qrels, run ir.Run, qids []string) (*plan, error) {
	p := &plan{ms: ms, level: level, hakari: hakari, cutAt: make([]int, len(ms)), params: make([]measureParams, len(ms))}
	for _, m := range ms {
		if !slices.Contains(computedBy[hakari], m.Family) {
			return nil, fmt.Errorf("measure: %s has no computation in the %s pass (add it to computedBy and to the pass)", m.Family, passName(hakari))
		}
	}
	for i, m := range ms {
		if m.Family.HasCutoff() {
			p.cuts = append(p.cuts, m.Cutoff)
		}
		var err error
		if p.params[i], err = m.params(); err != nil {
			return nil, fmt.Errorf("measure %s: %v", m, err)
		}
		defaultNDCG := m.Family == NDCG && m.Params == ""
		p.ideal = p.ideal || defaultNDCG || m.Family == NDCGCut
		p.gains = p.gains || families[m.Family].params == gainPairs && !defaultNDCG
		p.text = p.text || m.Family.Text()
	}
	slices.Sort(p.cuts)
	p.cuts = slices.Compact(p.cuts)
	for i, m := range ms {
		p.cutAt[i] = -1
		if m.Family.HasCutoff() {
			p.cutAt[i], _ = slices.BinarySearch(p.cuts, m.Cutoff)
		}
	}
	depth := 0
	for _, qid := range qids {
		depth = max(depth, len(run[qid]))
	}
	if hakari {
		// HAKARI's ideal ranking has min(R,k) documents, which may be more
		// than were retrieved.
		for _, qid := range qids {
			depth = max(depth, len(qrels[qid]))
		}
		p.maxK = p.cuts[len(p.cuts)-1]
		depth = min(depth, p.maxK)
	}
	// The ideal ranking of a trec_eval query is as long as its relevant
	// documents, which may outnumber the retrieved ones; extend lazily then.
	p.log2 = pynum.Log2Table(depth + 2)
	if hakari {
		p.hakariIdeal = hakariIdealTable(p.log2, depth)
	}
	return p, nil
}

func passName(hakari bool) string {
	if hakari {
		return "HAKARI-Bench"
	}
	return "trec_eval"
}

// run evaluates every query, spreading them over the CPUs.
func (p *plan) run(qrels ir.Qrels, run ir.Run, out []QueryResult) error {
	workers := min(runtime.GOMAXPROCS(0), (len(out)+63)/64)
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			s := &scratch{}
			for {
				i := int(next.Add(1)) - 1
				if i >= len(out) {
					return
				}
				q := &out[i]
				var err error
				if p.hakari {
					err = p.hakariQuery(s, qrels[q.ID], run[q.ID], q.Values)
				} else {
					err = p.trecQuery(s, qrels[q.ID], run[q.ID], q.Values, q.Text)
				}
				if err != nil {
					errs[w] = fmt.Errorf("measure: query %q: %w", q.ID, err)
					next.Store(int64(len(out)))
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// scratch is one worker's reusable per-query memory.
type scratch struct {
	keys  []uint64
	buf   []uint64
	rels  []int32
	gains []int
	snaps []snap
	seen  map[string]struct{}
	cuts  []int
}

// The grades scratch.rank gives documents without one, trec_eval's
// RELVALUE_NONPOOL and RELVALUE_UNJUDGED: infAP, relstring and
// num_nonrel_judged_ret tell them apart, every other measure takes both
// as not relevant.
const (
	nonPool        = -1 // not in the qrels
	unjudgedInPool = -2 // in the qrels with a negative grade
)

// snap holds running totals as they stood at one cutoff.
type snap struct {
	rel   int     // relevant documents retrieved (HAKARI: distinct positives)
	ap    float64 // sum of precisions at relevant documents
	dcg   float64
	idcg  float64
	first int // HAKARI: rank of the first positive, 0 if none yet
}

func (p *plan) trecQuery(s *scratch, judged map[string]int, hits []ir.Hit, out []float64, text []string) error {
	level := p.level
	rels, err := s.rank(judged, hits)
	if err != nil {
		return err
	}

	numRel, numNonrel := 0, 0
	gains := s.gains[:0]
	for _, g := range judged {
		switch {
		case g >= level:
			numRel++
		case g >= 0:
			numNonrel++
		}
		if p.ideal && g > 0 {
			gains = append(gains, g)
		}
	}
	s.gains = gains

	snaps := s.snapshots(len(p.cuts))
	cuts := p.cuts
	tab := p.log2
	var (
		relRet, nonrelRet, firstRel, relAtR int
		ap, dcg, bpref                      float64
		ci                                  int
	)
	for i := range rels {
		rank := i + 1
		rel := int(rels[i])
		if rel >= level {
			relRet++
			ap += float64(relRet) / float64(rank)
			if firstRel == 0 {
				firstRel = rank
			}
			if nonrelRet > 0 {
				bpref += 1.0 - float64(min(nonrelRet, numRel))/float64(min(numNonrel, numRel))
			} else {
				bpref += 1.0
			}
		} else if rel >= 0 {
			nonrelRet++
		}
		if rel > 0 {
			dcg += float64(rel) / tab[rank+1]
		}
		if rank == numRel {
			relAtR = relRet
		}
		for ci < len(cuts) && cuts[ci] == rank {
			snaps[ci] = snap{rel: relRet, ap: ap, dcg: dcg}
			ci++
		}
	}
	for ; ci < len(cuts); ci++ {
		snaps[ci] = snap{rel: relRet, ap: ap, dcg: dcg}
	}
	if len(rels) < numRel {
		relAtR = relRet
	}

	var gs []relGain
	if p.gains {
		gs = setupGains(nil, judged)
	}
	var idcg float64
	if p.ideal {
		slices.SortFunc(gains, func(a, b int) int { return cmp.Compare(b, a) })
		if len(gains)+2 > len(tab) {
			tab = pynum.Log2Table(len(gains) + 2)
		}
		ci = 0
		for i, g := range gains {
			for ci < len(cuts) && cuts[ci] == i {
				snaps[ci].idcg = idcg
				ci++
			}
			idcg += float64(g) / tab[i+2]
		}
		for ; ci < len(cuts); ci++ {
			snaps[ci].idcg = idcg
		}
	}

	for j, m := range p.ms {
		var v float64
		var c snap
		if k := p.cutAt[j]; k >= 0 {
			c = snaps[k]
		}
		switch m.Family {
		case RunID:
		case NumQ:
			v = 1
		case NumRet:
			v = float64(len(rels))
		case NumRel:
			v = float64(numRel)
		case NumRelRet:
			v = float64(relRet)
		case MAP, GMMAP:
			if relRet > 0 {
				v = ap / float64(numRel)
			}
		case IPrecAtRecall:
			v = iprecAtRecall(rels, level, numRel, relRet, m.RecallLevel())
		case RPrec:
			if numRel > 0 && len(rels) > 0 {
				v = float64(relAtR) / float64(numRel)
			}
		case BPref, GMBPref:
			if numRel > 0 {
				v = bpref / float64(numRel)
			}
		case RecipRank:
			if firstRel > 0 {
				v = 1.0 / float64(firstRel)
			}
		case P:
			v = float64(c.rel) / float64(m.Cutoff)
		case Recall:
			if numRel > 0 {
				v = float64(c.rel) / float64(numRel)
			}
		case NDCG:
			switch {
			case m.Params != "":
				v = ndcgGains(rels, p.gainsOf(j, gs, judged))
			case idcg > 0:
				v = dcg / idcg
			}
		case RelString:
			text[j] = relString(rels, p.params[j].floats[0])
		case InfAP:
			v = infAP(rels, level, numRel)
		case RPrecMult:
			v = rprecMult(rels, level, numRel, relRet, m.RecallLevel())
		case Utility:
			v = utility(p.params[j].floats, len(rels), numRel, relRet)
		case PtAvg11:
			lv := p.params[j].floats
			s.cuts = slices.Grow(s.cuts[:0], len(lv))[:len(lv)]
			v = ptAvg11(rels, level, numRel, relRet, lv, s.cuts)
		case BinG:
			v = binG(rels, level, numRel)
		case G:
			v = gMeasure(rels, p.gainsOf(j, gs, judged))
		case NDCGRel:
			v = ndcgRel(rels, p.gainsOf(j, gs, judged))
		case RNDCG:
			v = rndcg(rels, p.gainsOf(j, gs, judged), numRel)
		case RelativeP:
			if numRel > 0 {
				v = float64(c.rel) / float64(min(m.Cutoff, numRel))
			}
		case SetP:
			v = float64(relRet) / float64(len(rels))
		case SetRelativeP:
			if numRel > 0 {
				v = float64(relRet) / float64(min(len(rels), numRel))
			}
		case SetRecall:
			if numRel > 0 {
				v = float64(relRet) / float64(numRel)
			}
		case SetMAP:
			if numRel > 0 {
				v = float64(relRet) * float64(relRet) / (float64(len(rels)) * float64(numRel))
			}
		case SetF:
			v = setF(p.params[j].floats[0], len(rels), numRel, relRet)
		case NumNonrelJudgedRet:
			v = float64(nonrelRet)
		case NDCGCut:
			v = c.dcg
			if c.idcg > 0 {
				v /= c.idcg
			}
		case MAPCut:
			if numRel > 0 {
				v = c.ap / float64(numRel)
			}
		case Success:
			if c.rel > 0 {
				v = 1
			}
		default:
			// newPlan refuses families outside computedBy; this keeps a
			// missed one loud.
			return fmt.Errorf("%s is not computed by the trec_eval pass", m.Family)
		}
		if families[m.Family].geo {
			// gm_map, gm_bpref: trec_eval keeps the log per query and
			// averages the logs.
			v = pynum.Log(max(v, minGeoMean))
		}
		out[j] = v
	}
	return nil
}

// minGeoMean is trec_eval's MIN_GEO_MEAN, the floor of a value whose log
// a geometric mean averages.
const minGeoMean = .00001

// iprecAtRecall is trec_eval 9.0.8's interpolated precision at recall
// level r for a query with numRel relevant documents, relRet of them
// retrieved, rels in rank order: the highest precision at any rank from
// that of the c-th relevant document retrieved down to the last, where c
// is (long)(r·numRel + 0.9) (9.0.8's rounding; 10.0 uses lround), or 0
// when fewer than c are retrieved.
func iprecAtRecall(rels []int32, level, numRel, relRet int, r float64) float64 {
	// The conversion keeps the product from being fused with the addition,
	// as C on x86-64 computes it.
	c := int(float64(r*float64(numRel)) + 0.9)
	if c > relRet || len(rels) == 0 {
		return 0
	}
	// Walking up from the last rank, as trec_eval does, the running
	// maximum at the c-th relevant document is the value; c = 0 takes it
	// at the first relevant document, where trec_eval's walk stops.
	best := float64(relRet) / float64(len(rels))
	relSoFar := relRet
	for i := len(rels); i > 0 && relSoFar > 0; i-- {
		best = max(best, float64(relSoFar)/float64(i))
		if int(rels[i-1]) >= level {
			if relSoFar == c {
				return best
			}
			relSoFar--
		}
	}
	return best
}

// rank orders hits as trec_eval does and returns their grades in rank
// order (nonPool or unjudgedInPool for documents without a grade).
//
// Each hit becomes one integer key, the float32 score's bits made to sort
// descending above the hit's index, so one sort of plain integers does the
// ranking; only runs of equal scores then need their ids compared.
func (s *scratch) rank(judged map[string]int, hits []ir.Hit) ([]int32, error) {
	if uint64(len(hits)) > math.MaxUint32 {
		return nil, fmt.Errorf("%d results are more than one query can rank", len(hits))
	}
	keys := s.keys[:0]
	for i, h := range hits {
		sc := float32(h.Score)
		if sc != sc {
			return nil, fmt.Errorf("document %q has a NaN score", h.DocID)
		}
		keys = append(keys, uint64(descending(sc))<<32|uint64(i))
	}
	s.keys = keys
	if len(keys) < 64 {
		slices.Sort(keys)
	} else {
		s.buf = slices.Grow(s.buf[:0], len(keys))[:len(keys)]
		keys = radixSortScore(keys, s.buf)
	}
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]>>32 == keys[lo]>>32 {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(keys[lo:hi], func(a, b uint64) int {
				return strings.Compare(hits[uint32(b)].DocID, hits[uint32(a)].DocID)
			})
		}
		lo = hi
	}
	rels := s.rels[:0]
	for _, k := range keys {
		rel := int32(nonPool)
		if g, ok := judged[hits[uint32(k)].DocID]; ok {
			rel = unjudgedInPool
			if g >= 0 {
				rel = int32(min(g, math.MaxInt32))
			}
		}
		rels = append(rels, rel)
	}
	s.rels = rels
	return rels, nil
}

// radixSortScore sorts keys by their upper 32 bits, keeping the order of
// equal ones, using buf (as long as keys) as scratch; the sorted keys end up
// in whichever of the two it returns. Four byte-wide counting passes beat a
// comparison sort on the thousand-odd results of a typical query.
func radixSortScore(keys, buf []uint64) []uint64 {
	for shift := 32; shift < 64; shift += 8 {
		var count [256]int
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if count[byte(keys[0]>>shift)] == len(keys) {
			continue // every key has this digit
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for _, k := range keys {
			d := byte(k >> shift)
			buf[count[d]] = k
			count[d]++
		}
		keys, buf = buf, keys
	}
	return keys
}

// descending maps a non-NaN float32 to a uint32 that sorts in the opposite
// order, with -0 and +0 equal as C compares them.
func descending(f float32) uint32 {
	if f == 0 {
		f = 0
	}
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return b // negative: larger magnitude is smaller, and sorts later
	}
	return ^(b | 1<<31)
}

func (s *scratch) snapshots(n int) []snap {
	if cap(s.snaps) < n {
		s.snaps = make([]snap, n)
	}
	s.snaps = s.snaps[:n]
	clear(s.snaps)
	return s.snaps
}

// summarize fills the summary row the way trec_eval does: per-query values
// summed in query-id order, then divided by the number of queries, except
// for counts. HAKARI-Bench's metrics.py takes a plain mean as well, adding
// the queries in its own order (Options.QueryOrder); it used Python's
// compensated sum() until its commit 4e0abc9.
func (p *plan) summarize(res *Result, qrels ir.Qrels, opt Options) {
	complete := opt.Complete
	n := len(res.Queries)
	if complete {
		for qid := range qrels {
			if _, ok := findQuery(res.Queries, qid); !ok {
				n++
			}
		}
	}
	res.NumQueries = n
	var order []int
	if p.hakari {
		order = hakariSumOrder(res.Queries, opt.QueryOrder)
	}
	for j, m := range res.Measures {
		var sum float64
		if p.hakari {
			for _, i := range order {
				sum += res.Queries[i].Values[j]
			}
		} else {
			for _, q := range res.Queries {
				sum += q.Values[j]
			}
		}
		switch {
		case m.Family == NumQ:
			sum = float64(n)
		case families[m.Family].geo:
			// trec_eval adds log(MIN_GEO_MEAN) for each judged query -c
			// adds, then takes the exp of the mean.
			sum += float64(n-len(res.Queries)) * pynum.Log(minGeoMean)
			if n > 0 {
				sum = pynum.Exp(sum / float64(n))
			}
		case m.Family == NumRel && complete:
			// trec_eval recounts num_rel from the whole qrels here, and
			// counts grades above zero whatever the relevance level.
			sum = 0
			for _, judged := range qrels {
				for _, g := range judged {
					if g > 0 {
						sum++
					}
				}
			}
		case m.Integer():
		case n > 0:
			sum /= float64(n)
		}
		res.All[j] = sum
	}
}

// gainsOf is measure j's gain levels for a query: gs, the query's grades
// as their own gains, when j gives no gains.
func (p *plan) gainsOf(j int, gs []relGain, judged map[string]int) []relGain {
	if pairs := p.params[j].gains; len(pairs) > 0 {
		return setupGains(pairs, judged)
	}
	return gs
}

func findQuery(qs []QueryResult, qid string) (int, bool) {
	return slices.BinarySearchFunc(qs, qid, func(q QueryResult, id string) int { return strings.Compare(q.ID, id) })
}
