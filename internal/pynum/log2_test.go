package pynum

import (
	"math"
	"math/big"
	"testing"
)

func TestLog2TableMatchesGlibc(t *testing.T) {
	tab := Log2Table(2000)
	// glibc 2.36's log2 bits, at integers where Go's math.Log2 is one ulp
	// off, plus two where both agree.
	glibc := map[int]uint64{
		3:    0x3ff95c01a39fbd68,
		9:    0x40095c01a39fbd68,
		107:  0x401af7431f26a05d,
		137:  0x401c646285b918cd,
		149:  0x401ce06db66eca6f,
		159:  0x401d406463b1b045,
		211:  0x401ee267d362ad8f,
		100:  0x401a934f0979a371,
		1000: 0x4023ee7b471b3a95,
	}
	for n, bits := range glibc {
		if got := math.Float64bits(tab[n]); got != bits {
			t.Errorf("log2(%d) = %#x, glibc gives %#x", n, got, bits)
		}
	}
	if math.Float64bits(math.Log2(3)) == glibc[3] {
		t.Log("math.Log2(3) now agrees with glibc; the table may be unnecessary")
	}
	for k := 1; k < 11; k++ {
		if tab[1<<k] != float64(k) {
			t.Errorf("log2(2^%d) = %v", k, tab[1<<k])
		}
	}
}

// TestLog2TableCorrectlyRounded checks the double-double table against
// 200-bit arithmetic. (At 1621, 3242, ... glibc itself rounds the other way;
// there the table is right and glibc is not.)
func TestLog2TableCorrectlyRounded(t *testing.T) {
	const n = 5000
	tab := Log2Table(n + 1)
	const prec = 200
	ln := new(big.Float).SetPrec(prec) // ln(1)
	var ln2 *big.Float
	for i := 2; i <= n; i++ {
		// ln(i) = ln(i-1) + 2·atanh(1/(2i-1)), summed to 200 bits.
		x := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetInt64(int64(2*i-1)))
		x2 := new(big.Float).SetPrec(prec).Mul(x, x)
		term := new(big.Float).SetPrec(prec).Set(x)
		sum := new(big.Float).SetPrec(prec).Set(x)
		for k := int64(3); term.MantExp(nil) > sum.MantExp(nil)-prec; k += 2 {
			term.Mul(term, x2)
			sum.Add(sum, new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetInt64(k)))
		}
		ln.Add(ln, sum.Add(sum, sum))
		if i == 2 {
			ln2 = new(big.Float).Copy(ln)
		}
		want, _ := new(big.Float).SetPrec(prec).Quo(ln, ln2).Float64()
		if tab[i] != want {
			t.Fatalf("log2(%d) = %v, correctly rounded %v", i, tab[i], want)
		}
	}
}
