package analysis

//go:generate go run ../internal/gen/wordbreak -ucd /usr/share/unicode -o wordbreak_tables.go

// propRange gives the property word p (Word_Break value | flags, see
// wordbreak_tables.go) to the code points lo..hi.
type propRange struct {
	lo, hi rune
	p      uint16
}

// fastLimit bounds the directly indexed part of the property table. It
// covers Latin, Greek, Cyrillic, the general punctuation block (dashes, curly
// quotes) and the symbol blocks, i.e. nearly every rune of English biomedical
// text, so the binary search below is reserved for CJK, emoji and the like.
const fastLimit = 0x3000

// fastProps holds the property words below fastLimit; slowStart is the first
// range reaching past it, where searches start. Package-level initializers
// rather than init functions, so that tables derived from these (in other
// files) are ordered after them by dependency, not by file name.
var fastProps, slowStart = buildFastProps()

func buildFastProps() (t *[fastLimit]uint16, slow int) {
	t = new([fastLimit]uint16)
	for _, r := range propRanges {
		if r.lo >= fastLimit {
			break
		}
		for c := r.lo; c <= r.hi && c < fastLimit; c++ {
			t[c] = r.p
		}
	}
	for slow < len(propRanges) && propRanges[slow].hi < fastLimit {
		slow++
	}
	return t, slow
}

// propsOf returns the property word of r; 0 (Word_Break Other, no flags) for
// code points the tables do not list, including invalid ones.
func propsOf(r rune) uint16 {
	if uint32(r) < fastLimit {
		return fastProps[r]
	}
	lo, hi := slowStart, len(propRanges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if propRanges[m].hi < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(propRanges) && propRanges[lo].lo <= r {
		return propRanges[lo].p
	}
	return 0
}
