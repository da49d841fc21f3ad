package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpNamesOnlyRealFlags reads every command's help (description,
// examples, flag usages) and checks that each --flag it names exists: on
// the command itself or its parent, or on a command named just before it
// ("r2med run --task …", "gar generate --templates"). A hint naming a flag
// that was renamed or never existed sends users nowhere.
func TestHelpNamesOnlyRealFlags(t *testing.T) {
	root := newRoot()
	// Flags named for the commands that share them, with no command on
	// the line.
	elsewhere := map[string][]string{
		"r2med cache": {"cache"}, // "DIR is --cache": the flag of every command that uses the store
	}
	mention := regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*)`)
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		texts := []string{c.Short, c.Long, c.Example, c.Use}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				texts = append(texts, f.Usage)
			}
		})
		for _, text := range texts {
			text = strings.ReplaceAll(text, "\n", " ")
			for _, m := range mention.FindAllStringSubmatchIndex(text, -1) {
				name := text[m[2]:m[3]]
				// The command a flag belongs to is named just before it,
				// possibly across a line break in the help text.
				if hasFlag(c, name) || namedOnLine(root, text[max(0, m[2]-60):m[2]], name) {
					continue
				}
				if slices.Contains(elsewhere[c.CommandPath()], name) {
					continue
				}
				t.Errorf("%s: help names --%s, which is not a flag of this command nor of one named just before it: …%s…", c.CommandPath(), name, text[max(0, m[2]-60):min(len(text), m[3]+20)])
			}
		}
		for _, sub := range c.Commands() {
			check(sub)
		}
	}
	check(root)
}

// hasFlag reports whether c or the command it belongs to (r2med rerank
// for r2med rerank templates) has the flag.
func hasFlag(c *cobra.Command, name string) bool {
	for ; c != nil; c = c.Parent() {
		if c.Flags().Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil {
			return true
		}
	}
	return false
}

// namedOnLine reports whether a command named in before (its path after
// "r2med", or its name alone) has the flag.
func namedOnLine(root *cobra.Command, before, name string) bool {
	found := false
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "r2med ")
		if c != root && (strings.Contains(before, path+" ") || strings.Contains(before, c.Name()+" ")) && hasFlag(c, name) {
			found = true
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return found
}
