package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandLine is `r2med WORDS… --FLAG` as messages, help and docs write
// it: the words name a command (and maybe its arguments), the flag one of
// its flags.
var commandLine = regexp.MustCompile("r2med((?: [a-z][a-z0-9._-]*)+) --([a-z][a-z0-9-]*)")

// TestNamedCommandsExist: every `r2med COMMAND … --FLAG` that the code
// (messages, hints, help) and the docs print names a command that
// exists and a flag it takes: a hint that sends a user to a command or
// flag that is not there is a wrong name.
func TestNamedCommandsExist(t *testing.T) {
	var files []string
	filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") && p != "../.." {
			return filepath.SkipDir
		}
		if (strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go")) || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".tmpl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 50 {
		t.Fatalf("found %d source files; the walk is wrong", len(files))
	}
	seen := 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range commandLine.FindAllStringSubmatch(string(data), -1) {
			words, flag := strings.Fields(m[1]), m[2]
			root := newRoot()
			cmd, rest, err := root.Find(words)
			if err != nil || cmd == root {
				t.Errorf("%s: %q names no r2med command", p, m[0])
				continue
			}
			// The words after the command are its arguments (a query, a
			// task, a file), never a misspelt subcommand.
			if cmd.HasSubCommands() && len(rest) > 0 {
				t.Errorf("%s: %q: %q is not a command of %q", p, m[0], rest[0], cmd.CommandPath())
				continue
			}
			if cmd.Flags().Lookup(flag) == nil && cmd.InheritedFlags().Lookup(flag) == nil && flag != "help" {
				t.Errorf("%s: %q: %s has no flag --%s", p, m[0], cmd.CommandPath(), flag)
			}
			seen++
		}
	}
	if seen < 50 {
		t.Errorf("checked %d command lines; the pattern is wrong", seen)
	}
}
