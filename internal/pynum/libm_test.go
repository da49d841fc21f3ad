package pynum

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestExpLogGlibc compares Exp, Log and Log2Of with glibc's exp, log and
// log2 (testdata/libm.c printed them) over the arguments trec_eval's
// geometric means and G take, and with the case that made gm_bpref print 0.2188 where
// trec_eval prints 0.2187: exp(log(0.21875)), one ulp below 0.21875 in
// glibc, 0.21875 in Go's math.
func TestExpLogGlibc(t *testing.T) {
	f, err := os.Open("testdata/libm.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, goOff := 0, 0
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		x, err1 := strconv.ParseFloat(parts[1], 64)
		want, err2 := strconv.ParseFloat(parts[2], 64)
		if err1 != nil || err2 != nil || len(parts) != 3 {
			t.Fatalf("testdata/libm.txt: bad line %q", sc.Text())
		}
		got, goGot := Exp(x), math.Exp(x)
		switch parts[0] {
		case "log":
			got, goGot = Log(x), math.Log(x)
		case "log2":
			got, goGot = Log2Of(x), math.Log2(x)
		}
		if got != want {
			t.Errorf("%s(%s) = %x, glibc %x", parts[0], parts[1], got, want)
		}
		if goGot != want {
			goOff++
		}
		n++
	}
	if n != 600 {
		t.Fatalf("read %d lines of testdata/libm.txt, want 600", n)
	}
	t.Logf("Go's math differs from glibc on %d of %d", goOff, n)
	if got, want := Exp(Log(0.21875)), math.Nextafter(0.21875, 0); got != want {
		t.Errorf("exp(log(0.21875)) = %x, glibc %x", got, want)
	}
}
