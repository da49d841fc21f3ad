package sysname

import (
	"strings"
	"unicode/utf8"
)

// Width is the most characters a name is shown in: every table, page,
// chart legend and terminal cuts a longer one (Short) and gives it whole
// on hover and in exports.
const Width = 40

// Tail is how many characters at its end a cut name keeps at least:
// names end in what tells similar systems apart (a reranker's kind,
// model and depth, a hash suffix).
const Tail = 15

// Ellipsis marks where a name was cut.
const Ellipsis = "…"

// Short is name in at most width characters: a longer name is cut in its
// middle, "…" standing for what is left out. Its start (the expansion,
// the first retriever) and its last Tail characters stay, and so do,
// whatever their length, the hash suffix that tells it from a system of
// the same name ("bm25 #3f2a", Disambiguate) and the last stage's depth
// ("@20"): "hyde/gpt4 → rrf(bm25,bge,nv) →…insertrank:deepseek-r1@20".
// Spaces beside the "…" go. A view that shows several names takes them
// through ShortAll, which never cuts two names to one text.
func Short(name string, width int) string {
	return cut(name, width, Tail)
}

// ShortAll is Short of each name, made distinct: where two different
// names would be cut to one text, those are cut elsewhere until they
// read differently — more of their end kept (up to half the width), else
// the words they differ in shown between two cuts
// ("rrf(bm25,run:…insertrank…qwen-32b@20"), else less of their end — and
// only where no cut in width characters tells them apart are they given
// more. Equal names stay equal.
func ShortAll(names []string, width int) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Short(n, width)
	}
	order, of, taken := groups(out)
	for _, s := range order {
		idx := of[s]
		if !clash(names, idx) {
			continue
		}
		delete(taken, s)
		cutAt := func(width, tail int) func(int) string {
			return func(i int) string { return cut(names[i], width, tail) }
		}
		// try cuts the group's names by f if that tells them apart.
		try := func(f func(i int) string) bool {
			cuts := map[string]string{} // cut → name
			for _, i := range idx {
				c := f(i)
				if n, ok := cuts[c]; c == "" || (ok && n != names[i]) || taken[c] {
					return false
				}
				cuts[c] = names[i]
			}
			for _, i := range idx {
				out[i] = f(i)
				taken[out[i]] = true
			}
			return true
		}
		done := false
		// The same width, the cut moved: more of the end kept, up to half
		// the width; else the words they differ in shown between two
		// cuts; else less of the end.
		for tail := Tail + 1; tail <= width/2 && !done; tail++ {
			done = try(cutAt(width, tail))
		}
		if !done {
			done = try(func(i int) string { return around(names[i], names, idx, width) })
		}
		for tail := Tail - 1; tail >= 0 && !done; tail-- {
			done = try(cutAt(width, tail))
		}
		// Wider, where the names differ only in what no cut in the
		// width shows; at the longest, whole.
		longest := 0
		for _, i := range idx {
			longest = max(longest, utf8.RuneCountInString(names[i]))
		}
		for w := width + 1; w <= longest && !done; w++ {
			done = try(cutAt(w, Tail))
		}
		if !done {
			for _, i := range idx {
				out[i] = names[i]
				taken[out[i]] = true
			}
		}
	}
	return out
}

// clash reports whether the names at idx are not all the same.
func clash(names []string, idx []int) bool {
	for _, i := range idx[1:] {
		if names[i] != names[idx[0]] {
			return true
		}
	}
	return false
}

// cut is name in width characters, its last tail (at least the hash
// suffix and the depth) kept.
func cut(name string, width, tail int) string {
	r := []rune(name)
	if len(r) <= width {
		return name
	}
	base, suffix := Base(name)
	tail = max(tail, len([]rune(suffix))+depthLen(base))
	// One character of the start and the "…" at least.
	tail = min(tail, width-2)
	if tail < 0 {
		tail = 0
	}
	// The end starts at a word where one starts a few characters earlier:
	// "…deepseek-r1@20", not "…eek-r1@20".
	for t := tail; t <= min(tail+snap, width-2, len(r)-1); t++ {
		if t > 0 && strings.ContainsRune(wordStart, r[len(r)-t-1]) {
			tail = t
			break
		}
	}
	head := max(width-1-tail, 0)
	start := strings.TrimRight(string(r[:head]), " ")
	end := strings.TrimLeft(string(r[len(r)-tail:]), " ")
	return start + Ellipsis + end
}

// snap is how many characters more of its end a cut name keeps to start
// that end at a word, after one of wordStart.
const (
	snap      = 5
	wordStart = " (,:/→"
	wordEnd   = " (),:/→@#[]"
)

// around cuts name, one of the names at idx, to width showing the words
// where those names differ between its start and its end:
// "rrf(bm25,run:…insertrank…qwen-32b@20". It is "" when that does not
// fit.
func around(name string, names []string, idx []int, width int) string {
	// What every name of the group shares at its start and its end.
	first := []rune(names[idx[0]])
	pre, suf := len(first), len(first)
	for _, i := range idx[1:] {
		r := []rune(names[i])
		pre = min(pre, len(r))
		for k := range pre {
			if r[k] != first[k] {
				pre = k
				break
			}
		}
		n := 0
		for n < min(len(r), len(first)) && r[len(r)-1-n] == first[len(first)-1-n] {
			n++
		}
		suf = min(suf, n)
	}
	r := []rune(name)
	suf = min(suf, len(r)-pre)
	// The differing part, widened to whole words.
	start, end := pre, len(r)-suf
	for start > 0 && !strings.ContainsRune(wordStart, r[start-1]) {
		start--
	}
	for end < len(r) && !strings.ContainsRune(wordEnd, r[end]) {
		end++
	}
	base, suffix := Base(name)
	keep := len([]rune(suffix)) + depthLen(base)
	room := width - (end - start)
	if room < 0 {
		return ""
	}
	tail := len(r) - end
	if tail > 0 {
		tail = min(tail, max(keep, min(Tail, (room-2)/2)))
		for t := tail; t <= min(tail+snap, len(r)-end-1); t++ {
			if strings.ContainsRune(wordStart, r[len(r)-t-1]) {
				tail = t
				break
			}
		}
		if tail < len(r)-end {
			room-- // the "…" before the end
		}
	}
	room -= tail
	head := start
	if head > room {
		head = room - 1 // the "…" after the start
	}
	if head < 0 || head < 1 && start > 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(string(r[:head]), " "))
	if head < start {
		b.WriteString(Ellipsis)
	}
	b.WriteString(strings.TrimSpace(string(r[start:end])))
	if end < len(r)-tail {
		b.WriteString(Ellipsis + strings.TrimLeft(string(r[len(r)-tail:]), " "))
	} else {
		b.WriteString(string(r[end:]))
	}
	if utf8.RuneCountInString(b.String()) > width {
		return ""
	}
	return b.String()
}

// depthLen is the length of the "@20" that ends a reranked name's base,
// 0 when it ends otherwise.
func depthLen(base string) int {
	i := strings.LastIndexByte(base, '@')
	if i < 0 || i == len(base)-1 {
		return 0
	}
	for _, c := range base[i+1:] {
		if c < '0' || c > '9' {
			return 0
		}
	}
	return len(base) - i
}
