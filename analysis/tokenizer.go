package analysis

import "unicode/utf8"

// Tokenizer splits text into tokens.
type Tokenizer interface {
	// Tokenize appends the tokens of text to dst and returns the extended
	// slice.
	Tokenize(dst []string, text string) []string
}

// MaxTokenLength is the longest token, in UTF-16 code units, that Lucene's
// StandardTokenizer emits with its default settings. Lucene 9 never sees a
// longer match: its scanner reads through a buffer of exactly this size and
// is not allowed to grow it, so a longer word ends where the buffer does and
// the scan resumes there.
const MaxTokenLength = 255

// StandardTokenizer is Lucene 9's StandardTokenizer: the Unicode (UAX #29)
// word-break rules as Lucene's JFlex grammar spells them, keeping only words,
// numbers, South East Asian runs, single ideographs and hiragana, katakana
// and hangul runs, and emoji sequences. Punctuation, spaces and symbols are
// dropped. Tokens are substrings of the input.
//
// The zero value is ready to use; it holds no state, so one value serves
// any number of goroutines.
type StandardTokenizer struct{}

// Tokenize implements Tokenizer.
func (StandardTokenizer) Tokenize(dst []string, text string) []string {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			k := asciiStart[c]
			if k == 0 {
				i++
				continue
			}
			end := i
			if k&startWord != 0 {
				end = scanWord(text, i)
			}
			// A keycap sequence needs a non-ASCII rune (U+FE0F, U+20E3 or a
			// combining mark) right after the base; checking the next byte
			// keeps digits on the fast path.
			if k&startKeycap != 0 && i+1 < len(text) && text[i+1] >= utf8.RuneSelf {
				end = max(end, scanEmoji(text, i))
			}
			if end > i {
				dst = append(dst, text[i:end])
				i = end
			} else {
				i++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if end := longestMatch(text, i, propsOf(r)); end > i {
			dst = append(dst, text[i:end])
			i = end
		} else {
			i += size
		}
	}
	return dst
}

// longestMatch returns the end of the longest token starting at s[i], whose
// first rune has properties p, or i when no token starts there. Like
// the JFlex scanner it stands in for, it tries every rule and keeps the
// longest match; which rule won does not matter because every token rule
// emits its match and only the catch-all rule, which matches a single rune,
// drops it.
func longestMatch(s string, i int, p uint16) int {
	end := i
	wb := p & wbMask
	switch wb {
	case wbALetter, wbHebrewLetter, wbNumeric, wbKatakana, wbExtendNumLet:
		end = scanWord(s, i)
	}
	if p&flagSA != 0 {
		end = max(end, scanComplexContext(s, i))
	}
	if p&(flagHan|flagHiragana) != 0 {
		end = max(end, scanSingle(s, i))
	}
	if wb == wbZWJ || wb == wbRegionalIndicator || p&(flagEmojiChar|flagEmojiModBase|flagEmojiMod) != 0 {
		end = max(end, scanEmoji(s, i))
	}
	return end
}

// Bits of asciiStart.
const (
	startWord   = 1 << iota // may start a word or number
	startKeycap             // may start a keycap emoji sequence: [0-9#*]
)

// asciiStart says, per ASCII byte, which rules a token starting with it can
// match; 0 means none, so the byte is skipped without further work.
var asciiStart = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch fastProps[c] & wbMask {
		case wbALetter, wbHebrewLetter, wbNumeric, wbKatakana, wbExtendNumLet:
			t[c] |= startWord
		}
		if c >= '0' && c <= '9' || c == '#' || c == '*' {
			t[c] |= startKeycap
		}
	}
	return t
}()

// xMask selects the Word_Break values that rule WB4 attaches to whatever
// precedes them (Extend, Format, ZWJ).
const xMask = 1<<wbExtend | 1<<wbFormat | 1<<wbZWJ

func isX(p uint16) bool { return xMask>>(p&wbMask)&1 != 0 }

// next decodes the rune at s[j] and returns its properties, its size in bytes
// and its length in UTF-16 code units (the unit of Lucene's buffer). Invalid
// UTF-8 reads as one byte of U+FFFD, which has no properties.
func next(s string, j int) (r rune, p uint16, size, units int) {
	if c := s[j]; c < utf8.RuneSelf {
		return rune(c), fastProps[c], 1, 1
	}
	r, size = utf8.DecodeRuneInString(s[j:])
	units = 1
	if size == 4 {
		units = 2
	}
	return r, propsOf(r), size, units
}

// States of the word automaton. Lucene's word rule is
//
//	ENL* Seg (ENL+ Seg)* ENL*
//	Seg      = Katakana (ENL* Katakana)*
//	         | ( Hebrew (SingleQuote | DoubleQuote Hebrew)
//	           | Numeric ((ENL* | MidNum) Numeric)*
//	           | AHLetter ((ENL* | MidLetter) AHLetter)* )+
//
// with every element followed by any number of Extend/Format/ZWJ runes;
// MidNum here means MidNum|MidNumLet|Single_Quote and MidLetter means
// MidLetter|MidNumLet|Single_Quote. The states below are that expression's
// deterministic automaton: each stands for the set of places in the
// expression the text read so far can have reached, which is why a Hebrew
// letter leads to different states depending on what precedes it. Note that
// this is Lucene's grammar, not UAX #29 verbatim: for instance it keeps
// Hebrew+' followed by a digit together, where UAX #29 breaks.
const (
	wsFail      = iota
	wsStart     // nothing read
	wsLeadENL   // only ExtendNumLet so far: not yet a token
	wsLetter    // after a letter that can only continue a letter run
	wsHebrew    // after a Hebrew letter that may also open a Hebrew quote unit
	wsNumeric   // after a digit
	wsKatakana  // after a katakana
	wsTrailENL  // ExtendNumLet after a segment
	wsHebrewEnd // after Hebrew+' or Hebrew+"+Hebrew: a unit ends here
	wsMidLetter // letter + MidLetter, waiting for a letter
	wsMidNum    // digit + MidNum, waiting for a digit
	wsHebrewDQ  // Hebrew + Double_Quote, waiting for a Hebrew letter
	wsCount
)

// wordAccept has a bit set for each state at which the text read so far is a
// complete token.
const wordAccept = 1<<wsLetter | 1<<wsHebrew | 1<<wsNumeric | 1<<wsKatakana | 1<<wsTrailENL | 1<<wsHebrewEnd

// wordNext is the transition table over Word_Break values; missing entries
// are wsFail. Extend/Format/ZWJ never reach it (see continueWord).
var wordNext = func() (t [wsCount][wbMask + 1]uint8) {
	// Where a new unit (or segment) may start, a Hebrew letter may open a
	// quote unit as well as a letter run.
	unitStart := func(s int) {
		t[s][wbALetter] = wsLetter
		t[s][wbHebrewLetter] = wsHebrew
		t[s][wbNumeric] = wsNumeric
	}
	for _, s := range []int{wsStart, wsLeadENL, wsTrailENL} {
		unitStart(s)
		t[s][wbKatakana] = wsKatakana
	}
	t[wsStart][wbExtendNumLet] = wsLeadENL
	t[wsLeadENL][wbExtendNumLet] = wsLeadENL

	for _, s := range []int{wsLetter, wsHebrew, wsNumeric, wsKatakana, wsTrailENL, wsHebrewEnd} {
		t[s][wbExtendNumLet] = wsTrailENL
	}
	// Units follow each other directly (WB9/WB10 and the Hebrew unit).
	for _, s := range []int{wsLetter, wsHebrew, wsNumeric, wsHebrewEnd} {
		unitStart(s)
	}
	t[wsKatakana][wbKatakana] = wsKatakana

	for _, wb := range []int{wbMidLetter, wbMidNumLet, wbSingleQuote} {
		t[wsLetter][wb] = wsMidLetter
		t[wsHebrew][wb] = wsMidLetter
	}
	// A quote after a Hebrew letter that may open a unit completes that
	// unit (WB7a); read as a MidLetter instead it would need a letter next,
	// which wsHebrewEnd allows anyway.
	t[wsHebrew][wbSingleQuote] = wsHebrewEnd
	t[wsHebrew][wbDoubleQuote] = wsHebrewDQ
	t[wsHebrewDQ][wbHebrewLetter] = wsHebrewEnd
	for _, wb := range []int{wbMidNum, wbMidNumLet, wbSingleQuote} {
		t[wsNumeric][wb] = wsMidNum
	}

	// After a MidLetter the letter run goes on: a Hebrew letter there
	// cannot open a quote unit, so it is an ordinary letter.
	t[wsMidLetter][wbALetter] = wsLetter
	t[wsMidLetter][wbHebrewLetter] = wsLetter
	t[wsMidNum][wbNumeric] = wsNumeric
	return t
}()

// scanWord returns the end of the longest word or number starting at s[i]
// and no more than MaxTokenLength code units long, or i if there is none.
func scanWord(s string, i int) int {
	if st := asciiAlnum[s[i]]; st != 0 {
		return continueWord(s, i+1, st, 1)
	}
	return continueWord(s, i, wsStart, 0)
}

// continueWord runs the word automaton from state at s[j], n code units
// into the token, and returns the end of the longest match. It is called
// either at the token start in wsStart (no match: the result is j) or just
// after an accepted first rune, so j itself is always a valid answer.
func continueWord(s string, j int, state uint8, n int) int {
	last := j
	for j < len(s) {
		// Plain ASCII letters and digits dominate English text; stepping
		// over them here skips the decoding and the table walk.
		if state == wsLetter || state == wsNumeric {
			lim := min(len(s), j+MaxTokenLength-n)
			k := j
			for k < lim && asciiAlnum[s[k]] != 0 {
				k++
			}
			if k > j {
				state = asciiAlnum[s[k-1]]
				n += k - j
				j, last = k, k
				continue
			}
		}
		_, p, size, u := next(s, j)
		if n+u > MaxTokenLength {
			break
		}
		if isX(p) {
			if state == wsStart {
				break
			}
		} else if state = wordNext[state][p&wbMask]; state == wsFail {
			break
		}
		n += u
		j += size
		if wordAccept>>state&1 != 0 {
			last = j
		}
	}
	return last
}

// asciiAlnum maps ASCII letters to wsLetter and digits to wsNumeric, the
// states they lead to from wsLetter or wsNumeric; other bytes map to 0.
var asciiAlnum = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = wsNumeric
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = wsLetter
		t[c-'a'+'A'] = wsLetter
	}
	return t
}()

// scanComplexContext returns the end of the run of South East Asian
// (Line_Break=SA) runes, with their attached marks, that starts at s[i].
// Lucene keeps such runs whole because finding word breaks inside them
// needs a dictionary.
func scanComplexContext(s string, i int) int {
	n := 0
	j := i
	for j < len(s) {
		_, p, size, u := next(s, j)
		if n+u > MaxTokenLength || p&flagSA == 0 && (j == i || !isX(p)) {
			break
		}
		n += u
		j += size
	}
	return j
}

// scanSingle returns the end of the rune at s[i] plus its attached marks:
// a Han or Hiragana token is one character.
func scanSingle(s string, i int) int {
	_, _, size, n := next(s, i)
	j := i + size
	for j < len(s) {
		_, p, size, u := next(s, j)
		if n+u > MaxTokenLength || !isX(p) {
			break
		}
		n += u
		j += size
	}
	return j
}
