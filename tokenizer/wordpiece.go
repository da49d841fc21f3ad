package tokenizer

import "unicode/utf8"

// preTokenizer splits normalized text into words. BertPreTokenizer is
// space (dropped) plus punct (each punctuation character its own word);
// WhitespaceSplit and Punctuation(Isolated) are one half each, and a
// Sequence of them is their union, because no character is both.
// Neither flag set means no pre-tokenizer: the whole text is one word.
type preTokenizer struct {
	space, punct bool
}

type span struct{ start, end int }

// words appends the word spans of s to out.
func (p preTokenizer) words(s []byte, out []span) []span {
	if !p.space && !p.punct {
		if len(s) > 0 {
			out = append(out, span{0, len(s)})
		}
		return out
	}
	start := 0
	for i := 0; i < len(s); {
		var c uint8
		size := 1
		if b := s[i]; b < utf8.RuneSelf {
			c = asciiClass[b]
		} else {
			var r rune
			r, size = utf8.DecodeRune(s[i:])
			c = class(r)
		}
		switch {
		case p.space && c&clsSpace != 0:
			if start < i {
				out = append(out, span{start, i})
			}
			i += size
			start = i
		case p.punct && c&clsPunct != 0:
			if start < i {
				out = append(out, span{start, i})
			}
			out = append(out, span{i, i + size})
			i += size
			start = i
		default:
			i += size
		}
	}
	if start < len(s) {
		out = append(out, span{start, len(s)})
	}
	return out
}

// wordPiece is HF's WordPiece model: greedy longest-match-first over the
// vocabulary, continuation pieces looked up with their prefix, a word with
// any unmatched remainder (or too many characters) becoming unk as a whole.
type wordPiece struct {
	vocab map[string]int32
	// cont maps a continuation piece without its prefix ("ing" for "##ing")
	// so that lookups need no concatenation.
	cont     map[string]int32
	unk      int32
	maxChars int
	// Longest keys in bytes: longer candidates cannot match and are skipped.
	maxKey, maxCont int
}

// tokenize appends the ids of word to out.
func (w *wordPiece) tokenize(word []byte, out []int32) []int32 {
	if len(word) > w.maxChars && utf8.RuneCount(word) > w.maxChars {
		return append(out, w.unk)
	}
	mark := len(out)
	for start := 0; start < len(word); {
		m, limit := w.vocab, w.maxKey
		if start > 0 {
			m, limit = w.cont, w.maxCont
		}
		end := len(word)
		if end-start > limit {
			end = start + limit
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		found := false
		for end > start {
			if id, ok := m[string(word[start:end])]; ok {
				out = append(out, id)
				found = true
				break
			}
			end--
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		if !found {
			return append(out[:mark], w.unk)
		}
		start = end
	}
	return out
}
