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

var (
	fastProps [fastLimit]uint16
	// slowStart is the first range that reaches past fastLimit; searches
	// start there.
	slowStart int
)

func init() {
	for _, r := range propRanges {
		if r.lo >= fastLimit {
			break
		}
		for c := r.lo; c <= r.hi && c < fastLimit; c++ {
			fastProps[c] = r.p
		}
	}
	for slowStart < len(propRanges) && propRanges[slowStart].hi < fastLimit {
		slowStart++
	}
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
