package analysis

// lucenePorter is a test-only transcription of the Porter stemmer in the
// form Lucene ships it (Martin Porter's reference implementation: six steps
// over a char buffer, "bli"→"ble" and "logi"→"log" departures, suffix tests
// that may match the whole remaining word). It works on UTF-16 code units
// like Lucene and is deliberately written in the reference's style rather
// than go-porterstemmer's, so the two can check each other.
type lucenePorter struct {
	b        []uint16
	k, j, k0 int
}

func stemLucene(word []uint16) []uint16 {
	p := &lucenePorter{b: append([]uint16(nil), word...), k: len(word) - 1}
	if p.k > p.k0+1 {
		p.step1()
		p.step2()
		p.step3()
		p.step4()
		p.step5()
		p.step6()
	}
	return p.b[:p.k+1]
}

func (p *lucenePorter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == p.k0 || !p.cons(i-1)
	}
	return true
}

// m counts the VC sequences in b[k0..j].
func (p *lucenePorter) m() int {
	n, i := 0, p.k0
	for ; i <= p.j && p.cons(i); i++ {
	}
	for i <= p.j {
		for ; i <= p.j && !p.cons(i); i++ {
		}
		if i > p.j {
			return n
		}
		n++
		for ; i <= p.j && p.cons(i); i++ {
		}
	}
	return n
}

func (p *lucenePorter) vowelInStem() bool {
	for i := p.k0; i <= p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

func (p *lucenePorter) doublec(j int) bool {
	return j >= p.k0+1 && p.b[j] == p.b[j-1] && p.cons(j)
}

func (p *lucenePorter) cvc(i int) bool {
	if i < p.k0+2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	c := p.b[i]
	return c != 'w' && c != 'x' && c != 'y'
}

func (p *lucenePorter) ends(s string) bool {
	o := p.k - len(s) + 1
	if o < p.k0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if p.b[o+i] != uint16(s[i]) {
			return false
		}
	}
	p.j = p.k - len(s)
	return true
}

func (p *lucenePorter) setto(s string) {
	o := p.j + 1
	for i := 0; i < len(s); i++ {
		if o+i < len(p.b) {
			p.b[o+i] = uint16(s[i])
		} else {
			p.b = append(p.b, uint16(s[i]))
		}
	}
	p.k = p.j + len(s)
}

func (p *lucenePorter) r(s string) {
	if p.m() > 0 {
		p.setto(s)
	}
}

func (p *lucenePorter) step1() {
	if p.b[p.k] == 's' {
		switch {
		case p.ends("sses"):
			p.k -= 2
		case p.ends("ies"):
			p.setto("i")
		case p.b[p.k-1] != 's':
			p.k--
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.k--
		}
	} else if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.k = p.j
		switch {
		case p.ends("at"):
			p.setto("ate")
		case p.ends("bl"):
			p.setto("ble")
		case p.ends("iz"):
			p.setto("ize")
		case p.doublec(p.k):
			c := p.b[p.k]
			p.k--
			if c == 'l' || c == 's' || c == 'z' {
				p.k++
			}
		default:
			p.j = p.k
			if p.m() == 1 && p.cvc(p.k) {
				p.setto("e")
			}
		}
	}
}

func (p *lucenePorter) step2() {
	if p.ends("y") && p.vowelInStem() {
		p.b[p.k] = 'i'
	}
}

// tryAll applies the first rule whose suffix matches: r(to) if it has a
// replacement (m() > 0 decides), and stops there either way.
func (p *lucenePorter) tryAll(rules ...string) {
	for i := 0; i < len(rules); i += 2 {
		if p.ends(rules[i]) {
			p.r(rules[i+1])
			return
		}
	}
}

func (p *lucenePorter) step3() {
	if p.k == p.k0 {
		return
	}
	switch p.b[p.k-1] {
	case 'a':
		p.tryAll("ational", "ate", "tional", "tion")
	case 'c':
		p.tryAll("enci", "ence", "anci", "ance")
	case 'e':
		p.tryAll("izer", "ize")
	case 'l':
		p.tryAll("bli", "ble", "alli", "al", "entli", "ent", "eli", "e", "ousli", "ous")
	case 'o':
		p.tryAll("ization", "ize", "ation", "ate", "ator", "ate")
	case 's':
		p.tryAll("alism", "al", "iveness", "ive", "fulness", "ful", "ousness", "ous")
	case 't':
		p.tryAll("aliti", "al", "iviti", "ive", "biliti", "ble")
	case 'g':
		p.tryAll("logi", "log")
	}
}

func (p *lucenePorter) step4() {
	switch p.b[p.k] {
	case 'e':
		p.tryAll("icate", "ic", "ative", "", "alize", "al")
	case 'i':
		p.tryAll("iciti", "ic")
	case 'l':
		p.tryAll("ical", "ic", "ful", "")
	case 's':
		p.tryAll("ness", "")
	}
}

func (p *lucenePorter) step5() {
	if p.k == p.k0 {
		return
	}
	endsAny := func(ss ...string) bool {
		for _, s := range ss {
			if p.ends(s) {
				return true
			}
		}
		return false
	}
	var ok bool
	switch p.b[p.k-1] {
	case 'a':
		ok = endsAny("al")
	case 'c':
		ok = endsAny("ance", "ence")
	case 'e':
		ok = endsAny("er")
	case 'i':
		ok = endsAny("ic")
	case 'l':
		ok = endsAny("able", "ible")
	case 'n':
		ok = endsAny("ant", "ement", "ment", "ent")
	case 'o':
		ok = p.ends("ion") && p.j >= p.k0 && (p.b[p.j] == 's' || p.b[p.j] == 't') || p.ends("ou")
	case 's':
		ok = endsAny("ism")
	case 't':
		ok = endsAny("ate", "iti")
	case 'u':
		ok = endsAny("ous")
	case 'v':
		ok = endsAny("ive")
	case 'z':
		ok = endsAny("ize")
	}
	if ok && p.m() > 1 {
		p.k = p.j
	}
}

func (p *lucenePorter) step6() {
	p.j = p.k
	if p.b[p.k] == 'e' {
		a := p.m()
		if a > 1 || a == 1 && !p.cvc(p.k-1) {
			p.k--
		}
	}
	if p.b[p.k] == 'l' && p.doublec(p.k) && p.m() > 1 {
		p.k--
	}
}
