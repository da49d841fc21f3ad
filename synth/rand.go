package synth

import "math"

// rng is SplitMix64. The generator carries its own PRNG rather than using
// math/rand so that the bytes a seed produces cannot change with the Go
// release, and because one multiply-xorshift step per word is all the hot
// loop can afford.
type rng struct{ s uint64 }

const golden = 0x9e3779b97f4a7c15

func (r *rng) next() uint64 {
	r.s += golden
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// derive gives an independent stream for one purpose (queries, roles, one
// chunk of documents…), so that adding draws to one stream never shifts the
// output of another and chunks can be generated in any order.
func derive(seed uint64, parts ...uint64) rng {
	r := rng{s: seed}
	for _, p := range parts {
		r.s ^= p * golden
		r.s = r.next()
	}
	return r
}

// intn returns a value in [0, n) by multiply-shift. Its bias, about n/2^32,
// is immaterial for the corpus sizes used here.
func (r *rng) intn(n int) int {
	return int((r.next() >> 32) * uint64(n) >> 32)
}

// prob converts a probability p into a threshold t such that a uniform
// uint32 u satisfies u < t with probability p.
func prob(p float64) uint32 {
	if p >= 1 {
		return math.MaxUint32
	}
	if p <= 0 {
		return 0
	}
	return uint32(p * (1 << 32))
}

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// normal draws a standard normal deviate (Box–Muller; one of the pair is
// dropped, which costs nothing measurable at one draw per document).
func (r *rng) normal() float64 {
	u := 1 - r.float() // (0, 1], keeps Log finite
	v := r.float()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// logNormal draws a length whose mean is mean and whose log has standard
// deviation sigma, which gives the long right tail real text lengths show.
func (r *rng) logNormal(mean, sigma float64) float64 {
	mu := math.Log(mean) - sigma*sigma/2
	return math.Exp(mu + sigma*r.normal())
}

// poisson draws from a Poisson distribution by Knuth's product method,
// adequate for the small means (positives per query) it is used for.
func (r *rng) poisson(lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	l := math.Exp(-lambda)
	k := 0
	p := r.float()
	for p > l {
		k++
		p *= r.float()
	}
	return k
}
