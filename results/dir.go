package results

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/r2med/r2med/sysname"
)

// DefaultRoot is the results directory when $R2MED_RESULTS is not set.
const DefaultRoot = "out"

// Root is where runs go without --out, and where results, leaderboard,
// report and serve look for them: $R2MED_RESULTS, else DefaultRoot. Runs
// and sweeps follow it alike.
func Root() string {
	if d := os.Getenv("R2MED_RESULTS"); d != "" {
		return d
	}
	return DefaultRoot
}

// DirName makes a system or task name one directory name that a shell
// takes as it is, on any file system. The arrows between stages lose
// their spaces, as in run tags ("bm25→tei@10", sysname.Tag); letters,
// digits, the arrow and . _ + @ = - stay; every run of other characters
// (spaces, brackets, commas, colons, slashes, quotes, #) becomes one "_",
// none beside an arrow;
// leading dots and dashes and trailing dots and underscores go (no
// hidden directory, nothing a command takes for a flag); an empty name
// is "_". So "rrf(bm25,bge)" is rrf_bm25_bge, "hyde/gpt4 → bm25" is
// hyde_gpt4→bm25 and "bm25 → insertrank:deepseek-r1@20" is
// bm25→insertrank_deepseek-r1@20 (the arrow, like any letter outside
// ASCII, is a word character to sh and bash). Two names that differ only
// in such characters share a directory; a run into a directory holding
// another system's run is refused, naming the settings that differ.
func DirName(name string) string {
	var b strings.Builder
	gap, afterArrow := false, false
	for _, r := range strings.ReplaceAll(name, sysname.Arrow, strings.TrimSpace(sysname.Arrow)) {
		if !safe(r) {
			gap = true
			continue
		}
		isArrow := strings.ContainsRune(sysname.Arrow, r)
		if gap && b.Len() > 0 && !isArrow && !afterArrow {
			b.WriteByte('_')
		}
		gap, afterArrow = false, isArrow
		b.WriteRune(r)
	}
	s := strings.TrimLeft(b.String(), ".-")
	s = strings.TrimRight(s, "._")
	if s == "" {
		return "_"
	}
	return s
}

// safe reports whether a shell and every file system take r in a name as
// it is.
func safe(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._+@=-", r)
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(sysname.Arrow, r) && !unicode.IsSpace(r)
}

// RunDir is the directory of a run of system on task under root:
// ROOT/SYSTEM/TASK, each part made a directory name by DirName.
func RunDir(root, system, task string) string {
	return filepath.Join(root, DirName(system), DirName(task))
}
