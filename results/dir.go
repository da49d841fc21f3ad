package results

import (
	"os"
	"path/filepath"
	"strings"

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

// DirName makes a system or task name usable as one directory name on
// any file system: the arrows between stages lose their spaces, as in
// run tags ("bm25→tei@10"), path separators, characters Windows forbids
// (: * ? " < > |) and control characters become "_", leading and trailing
// spaces and dots go, and an empty name is "_". Other characters stay, so
// "rrf(bm25,bge)" keeps its name and "hyde/gpt4 → bm25" is
// "hyde_gpt4→bm25".
func DirName(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r < 0x20, r == 0x7f, strings.ContainsRune(`/\:*?"<>|`, r):
			return '_'
		}
		return r
	}, strings.ReplaceAll(name, sysname.Arrow, strings.TrimSpace(sysname.Arrow)))
	s = strings.Trim(s, " .")
	if s == "" {
		return "_"
	}
	return s
}

// RunDir is the directory of a run of system on task under root:
// ROOT/SYSTEM/TASK, each part made a directory name by DirName.
func RunDir(root, system, task string) string {
	return filepath.Join(root, DirName(system), DirName(task))
}
