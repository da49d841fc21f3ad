// Package demo is the built-in demo task: a small R2MED-style medical
// retrieval task written for this project and compiled into the binary, so
// `r2med run --task demo` works offline and without downloads. Fifteen
// clinical vignettes describe findings without naming the diagnosis; the
// relevant passages explain that diagnosis or its treatment, and distractor
// passages share the vignettes' surface words while describing other
// conditions, so lexical retrieval succeeds only in part.
package demo

import (
	"embed"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/ir"
)

// FS holds the task in R2MED's layout under data/: corpus.jsonl,
// query.jsonl (with body_system and answer) and qrels.jsonl.
//
//go:embed data
var FS embed.FS

// Name is the task name users pass to --task.
const Name = "demo"

// Load reads the embedded task.
func Load() (*ir.Task, error) {
	t, err := dataset.LoadFS(FS, "data", dataset.Options{})
	if err != nil {
		return nil, err
	}
	// LoadFS would name the task after its directory, "data", and list
	// its files by their paths inside FS, which are no paths on disk: an
	// embedded task has neither directory nor files (a manifest records
	// it as "embedded:demo", never as some ./data a run happens to find).
	t.Name = Name
	t.Dir, t.Files = "", nil
	return t, nil
}
