package nano

import (
	"crypto/sha512"
	"math/bits"
)

// pyRandom is CPython's random.Random: MT19937 seeded the way
// random.seed(str) seeds it (version 2), enough of it to reproduce
// Random(s).choice(seq). HAKARI-Bench draws its rank-101 safeguard that way,
// so reproducing the generator bit for bit is the only way to pick the same
// document.
type pyRandom struct {
	mt  [624]uint32
	mti int
}

// newPyRandom seeds like CPython's random.Random(s) for a str s: the integer
// int.from_bytes(s.encode() + sha512(s.encode()).digest(), "big") is cut into
// 32-bit words, least significant first, and fed to init_by_array.
func newPyRandom(s string) *pyRandom {
	b := []byte(s)
	sum := sha512.Sum512(b)
	b = append(b, sum[:]...)
	// Leading zero bytes do not change the integer; CPython sizes the key
	// by the integer's bit length (at least one word).
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	key := make([]uint32, max(1, (len(b)+3)/4))
	for i := range b {
		// byte i from the end is bits 8i..8i+7 of the integer
		j := len(b) - 1 - i
		key[i/4] |= uint32(b[j]) << (8 * (i % 4))
	}
	r := &pyRandom{}
	r.initByArray(key)
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < len(r.mt); i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.mti = len(r.mt)
}

// initByArray is MT19937's init_by_array, as _randommodule.c has it.
func (r *pyRandom) initByArray(key []uint32) {
	const n = 624
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

// uint32 is genrand_uint32.
func (r *pyRandom) uint32() uint32 {
	const (
		n, m      = 624, 397
		upperMask = 0x80000000
		lowerMask = 0x7fffffff
		matrixA   = 0x9908b0df
	)
	if r.mti >= n {
		for k := 0; k < n; k++ {
			y := (r.mt[k] & upperMask) | (r.mt[(k+1)%n] & lowerMask)
			v := r.mt[(k+m)%n] ^ (y >> 1)
			if y&1 != 0 {
				v ^= matrixA
			}
			r.mt[k] = v
		}
		r.mti = 0
	}
	y := r.mt[r.mti]
	r.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// getrandbits is Random.getrandbits for 0 < k ≤ 64: 32-bit words, least
// significant first, the last one shifted down to the bits still wanted.
func (r *pyRandom) getrandbits(k int) uint64 {
	var x uint64
	for shift := 0; k > 0; shift += 32 {
		w := r.uint32()
		if k < 32 {
			w >>= 32 - k
		}
		x |= uint64(w) << shift
		k -= 32
	}
	return x
}

// randbelow is Random._randbelow_with_getrandbits: rejection sampling on
// n.bit_length() random bits. n must be positive.
func (r *pyRandom) randbelow(n int) int {
	k := bits.Len64(uint64(n))
	v := r.getrandbits(k)
	for v >= uint64(n) {
		v = r.getrandbits(k)
	}
	return int(v)
}

// choiceIndex is the index Random(seed).choice(seq) picks from a sequence of
// n elements (n > 0).
func choiceIndex(seed string, n int) int {
	return newPyRandom(seed).randbelow(n)
}
