package reproduce

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/yamlx"
)

// specsFS holds the generated specs: specs/<group>/<name>.yaml.
//
//go:embed specs
var specsFS embed.FS

// SpecsDir is the folder of the specs inside the package (and the
// repository's reproduce/ folder).
const SpecsDir = "specs"

var all = sync.OnceValues(func() ([]*Spec, error) { return ReadFS(specsFS, SpecsDir) })

// All returns the shipped specs, sorted by name. The specs are shared:
// callers must not change them.
func All() ([]*Spec, error) { return all() }

// ReadFS reads every .yaml file under root of fsys as a spec named by its
// path under root, sorted by name.
func ReadFS(fsys fs.FS, root string) ([]*Spec, error) {
	var out []*Spec
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".yaml" {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".yaml")
		s, err := Parse(name, data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, s)
		return nil
	})
	slices.SortFunc(out, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// Select picks the specs the patterns name: a spec's name ("r2med/bm25"),
// a shell pattern over names ("r2med/hyde-*", "nano/*"), or a group, the
// first part of names ("r2med", "nano"). No pattern selects all. A pattern
// that selects nothing is an error suggesting the closest name.
func Select(specs []*Spec, patterns []string) ([]*Spec, error) {
	if len(patterns) == 0 {
		return specs, nil
	}
	picked := map[string]bool{}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("spec pattern %q: %w", p, err)
		}
		n := 0
		for _, s := range specs {
			group, _, _ := strings.Cut(s.Name, "/")
			if ok, _ := path.Match(p, s.Name); ok || p == group {
				picked[s.Name] = true
				n++
			}
		}
		if n == 0 {
			names := make([]string, len(specs))
			for i, s := range specs {
				names[i] = s.Name
			}
			hint := "r2med reproduce --list shows them"
			if s := yamlx.Suggest(p, names); s != "" {
				hint = fmt.Sprintf("did you mean %q? %s", s, hint)
			}
			return nil, fmt.Errorf("no spec named %q (%s)", p, hint)
		}
	}
	var out []*Spec
	for _, s := range specs {
		if picked[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}
