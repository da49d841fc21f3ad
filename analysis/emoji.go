package analysis

// Lucene 8 and 9 keep emoji sequences as tokens (type <EMOJI>). Their rule,
// after the emoji_sequence grammar of Unicode TR #51, is
//
//	A ( (ZWJ A)* | TagSpec+ TagTerm )
//	| KeycapBase X' FE0F? 20E3 X'
//	| RI X RI X
//
//	A  = ZWJ* EmojiChar X' FE0F? | (ZWJ* EmojiModifierBase X')? EmojiModifier X'
//	X  = (Extend|Format|ZWJ)*
//	X' = X without the presentation selectors FE0E and FE0F
//
// Several of those classes overlap (ZWJ, tags and, since Unicode 11, the
// skin-tone modifiers are all Extend), so the rule is matched with a small
// NFA simulated on a bit set rather than by a hand-made DFA whose
// correctness would be hard to see.

// NFA states. The "a" states run the first A, the "b" states every later A:
// only the first may be followed by a tag sequence.
const (
	esAStart = iota // before the first A
	esAZWJ          // ZWJ* prefix of the first A
	esAChar         // after EmojiChar X'
	esASel          // after EmojiChar X' FE0F
	esABase         // after EmojiModifierBase X'
	esAMod          // after EmojiModifier X'
	esBStart
	esBZWJ
	esBChar
	esBSel
	esBBase
	esBMod
	esTagSpec   // after TagSpec+
	esTagTerm   // after TagTerm
	esKeyStart  // before a keycap base
	esKeyBase   // after KeycapBase X'
	esKeySel    // after KeycapBase X' FE0F
	esKeycap    // after the keycap mark 20E3 X'
	esFlagStart // before a regional indicator pair
	esFlagOne   // after RI X
	esFlagTwo   // after RI X RI X
)

const (
	emojiInit   = 1<<esAStart | 1<<esKeyStart | 1<<esFlagStart
	emojiAccept = 1<<esAChar | 1<<esASel | 1<<esAMod | 1<<esBChar | 1<<esBSel | 1<<esBMod |
		1<<esTagTerm | 1<<esKeycap | 1<<esFlagTwo
	emojiFirstDone = 1<<esAChar | 1<<esASel | 1<<esAMod
	emojiLaterDone = 1<<esBChar | 1<<esBSel | 1<<esBMod
)

// emojiStep returns the states reachable from set by reading r, whose
// properties are p.
func emojiStep(set uint32, r rune, p uint16) uint32 {
	wb := p & wbMask
	zwj := wb == wbZWJ
	x := isX(p)
	xp := x && r != 0xFE0E && r != 0xFE0F
	sel := r == 0xFE0F
	char := p&flagEmojiChar != 0
	base := p&flagEmojiModBase != 0
	mod := p&flagEmojiMod != 0

	var out uint32
	has := func(s int) bool { return set&(1<<s) != 0 }
	add := func(cond bool, s int) {
		if cond {
			out |= 1 << s
		}
	}
	// The two copies of A differ only in their state numbers.
	for _, off := range [2]int{0, esBStart - esAStart} {
		start, zw := has(esAStart+off), has(esAZWJ+off)
		add((start || zw) && zwj, esAZWJ+off)
		add((start || zw) && char, esAChar+off)
		add((start || zw) && base, esABase+off)
		add(start && mod, esAMod+off)
		add(has(esAChar+off) && xp, esAChar+off)
		add(has(esAChar+off) && sel, esASel+off)
		add(has(esABase+off) && xp, esABase+off)
		add(has(esABase+off) && mod, esAMod+off)
		add(has(esAMod+off) && xp, esAMod+off)
	}
	add(set&(emojiFirstDone|emojiLaterDone) != 0 && zwj, esBStart)
	add(set&emojiFirstDone != 0 && r >= 0xE0020 && r <= 0xE007E, esTagSpec)
	add(has(esTagSpec) && r >= 0xE0020 && r <= 0xE007E, esTagSpec)
	add(has(esTagSpec) && r == 0xE007F, esTagTerm)

	add(has(esKeyStart) && (r >= '0' && r <= '9' || r == '#' || r == '*'), esKeyBase)
	add(has(esKeyBase) && xp, esKeyBase)
	add(has(esKeyBase) && sel, esKeySel)
	add((has(esKeyBase) || has(esKeySel)) && r == 0x20E3, esKeycap)
	add(has(esKeycap) && xp, esKeycap)

	ri := wb == wbRegionalIndicator
	add(has(esFlagStart) && ri, esFlagOne)
	add(has(esFlagOne) && x, esFlagOne)
	add(has(esFlagOne) && ri, esFlagTwo)
	add(has(esFlagTwo) && x, esFlagTwo)
	return out
}

// scanEmoji returns the end of the longest emoji sequence starting at s[i]
// and no more than MaxTokenLength code units long, or i if there is none.
func scanEmoji(s string, i int) int {
	set := uint32(emojiInit)
	last := i
	n := 0
	for j := i; j < len(s); {
		r, p, size, u := next(s, j)
		if n+u > MaxTokenLength {
			break
		}
		if set = emojiStep(set, r, p); set == 0 {
			break
		}
		n += u
		j += size
		if set&emojiAccept != 0 {
			last = j
		}
	}
	return last
}
