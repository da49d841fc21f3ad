package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrDataNotFound is DataDir's error when the data a run was made on
// cannot be found; the message says which manifest and what to do.
var ErrDataNotFound = errors.New("the run's data cannot be found")

// DataDir is the directory of the data the run was made on, as an
// absolute path, for a run read from a directory (not the built-in task
// or an hf:// URI: those are returned as recorded).
//
// Manifests record task.source absolute. Older ones recorded the path as
// typed, relative to the directory 'r2med run' (or sweep) was started in,
// which they do not record; it is found from where the run itself was
// written, by the rule that put it there:
//
//   - with a relative --out OUT on the recorded command line, the run is
//     in START/OUT, START/OUT/TASK (several tasks) or START/OUT/SYSTEM/TASK
//     (a sweep), so START is the run's directory with OUT and what
//     follows it taken off;
//   - without --out, the run is in START/RESULTS/SYSTEM/TASK (out/ or a
//     one-directory $R2MED_RESULTS), so START is three directories up.
//
// The path is never resolved against the current directory. When the
// command line does not tell START (an absolute --out, a moved results
// directory) or the data is not there, the error (ErrDataNotFound) names
// the manifest and says how to fix it.
func (r Run) DataDir() (string, error) {
	ti := r.Manifest.Task
	src := ti.Source
	if src == "" || filepath.IsAbs(src) || strings.HasPrefix(src, "embedded:") || strings.Contains(src, "://") {
		return src, nil
	}
	manifest := filepath.Join(r.Dir, ManifestFile)
	fix := fmt.Sprintf(`rerun the run (manifests now record the absolute path), or set "source" under "task" in %s to the data directory's absolute path`, manifest)
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		return "", err
	}
	start, how := runStart(dir, r.Manifest.Command)
	if start == "" {
		return "", dataError(fmt.Sprintf("%s records the data path %q relative to the directory the run was started in, which %s; %s", manifest, src, how, fix))
	}
	data := filepath.Join(start, src)
	if fi, err := os.Stat(data); err != nil || !fi.IsDir() {
		return "", dataError(fmt.Sprintf("%s records the data path %q relative to the directory the run was started in, %s (%s), and %s is not a directory; %s", manifest, src, start, how, data, fix))
	}
	return data, nil
}

// dataError is an ErrDataNotFound with its own message.
type dataError string

func (e dataError) Error() string        { return string(e) }
func (e dataError) Is(target error) bool { return target == ErrDataNotFound }

// runStart is the directory a run in dir (absolute) was started in, by
// DataDir's rule, and how it was found (or why it was not).
func runStart(dir string, command []string) (start, how string) {
	out, given := flagValue(command, "out")
	if !given {
		return filepath.Dir(filepath.Dir(filepath.Dir(dir))), "found as three directories above the run's directory (RESULTS/SYSTEM/TASK, its place without --out)"
	}
	if filepath.IsAbs(out) {
		return "", "an absolute --out does not tell"
	}
	out = filepath.Clean(out)
	for a, up := dir, 0; up <= 2; a, up = filepath.Dir(a), up+1 {
		if s, ok := strings.CutSuffix(a, string(filepath.Separator)+out); ok {
			return s, "found by taking its --out " + out + " off the run's directory"
		}
	}
	return "", fmt.Sprintf("its --out %s does not tell (the run's directory %s does not end in it: was it moved?)", out, dir)
}

// flagValue is the value of --name on a recorded command line
// (--name VALUE or --name=VALUE), after the program's name.
func flagValue(args []string, name string) (string, bool) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}
