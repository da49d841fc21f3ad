package synth

// mixture says where a text's words come from: with probability topic a
// word is topical, taken from a (probability first) or b; otherwise it is a
// background word from the Zipf law. The zero mixture is pure background.
type mixture struct {
	topic uint16 // a 16-bit threshold: see appendText
	first uint32
	a, b  []int32
}

var (
	// Numbers, with their many forms, are what analyzers disagree on most.
	pNumber = prob16(1.0 / 40)
	pComma  = prob16(1.0 / 14)
	units   = []string{"mg", "mL", "mmol/L", "kg", "mg/dL", "IU", "mm", "cm", "h", "U/L"}
)

// prob16 is prob for a 16-bit field: per-token decisions share one 64-bit
// draw, four 16-bit fields, which is plenty of resolution for text noise.
func prob16(p float64) uint16 { return uint16(prob(p) >> 16) }

// appendText appends sentences until the text is at least target bytes
// long, then closes the sentence it is in. It is the hot loop of the
// generator: no allocation beyond growing dst, two random draws per word.
func appendText(dst []byte, r *rng, v *vocab, m *mixture, target int) []byte {
	start := len(dst)
	for len(dst)-start < target {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		words := 4 + r.intn(19)
		for w := 0; w < words; w++ {
			if w > 0 {
				dst = append(dst, ' ')
			}
			ws := len(dst)
			// x's fields: 0–15 topic, 16–31 number, 32–47 head/tail of
			// the Zipf law, 48–63 comma.
			x := r.next()
			switch {
			case uint16(x) < m.topic:
				y := r.next()
				set := m.b
				if uint32(y) < m.first {
					set = m.a
				}
				dst = v.appendWord(dst, set[(y>>32)*uint64(len(set))>>32])
			case uint16(x>>16) < pNumber:
				dst = appendNumber(dst, r)
			default:
				dst = v.appendWord(dst, v.zipf.sample(uint16(x>>32), r.next()))
			}
			if w == 0 {
				if c := dst[ws]; 'a' <= c && c <= 'z' {
					dst[ws] = c - 'a' + 'A'
				}
			}
			if len(dst)-start >= target {
				break
			}
			if w < words-1 && uint16(x>>48) < pComma {
				dst = append(dst, ',')
			}
		}
		// Dotted abbreviations already end in a period.
		if dst[len(dst)-1] != '.' {
			dst = append(dst, '.')
		}
	}
	return dst
}

// appendNumber writes a quantity in one of the shapes clinical text uses:
// "7", "3.5", "12%", "250 mg", "2-4".
func appendNumber(dst []byte, r *rng) []byte {
	x := r.next()
	switch x & 7 {
	case 0, 1, 2:
		return appendUint(dst, 1+(x>>8)%100)
	case 3:
		dst = appendUint(dst, (x>>8)%40)
		dst = append(dst, '.')
		return appendUint(dst, (x>>16)%10)
	case 4:
		dst = appendUint(dst, 1+(x>>8)%99)
		return append(dst, '%')
	case 5, 6:
		dst = appendUint(dst, 5*(1+(x>>8)%100))
		dst = append(dst, ' ')
		return append(dst, units[(x>>16)%uint64(len(units))]...)
	default:
		lo := 1 + (x>>8)%10
		dst = appendUint(dst, lo)
		dst = append(dst, '-')
		return appendUint(dst, lo+1+(x>>16)%5)
	}
}
