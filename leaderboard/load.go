package leaderboard

import (
	"slices"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
)

// DefaultDir is where r2med looks for our runs when no results directory
// is named: the out/ directory the run examples write under
// (r2med run --task all --out out/bm25).
const DefaultDir = "out"

// Board is the systems a leaderboard can show and where ours came from.
type Board struct {
	// Systems are ours (sorted by ID), then R2MED's published ones, then
	// the external ones, then MTEB's (each sorted by ID); an external row
	// that repeats a published system is folded into it (FoldReprints).
	Systems []System
	// Listing is the scan of the results directory; nil when none was
	// given.
	Listing *results.Listing
	// Superseded are older runs of a system and task that a newer run
	// replaces; they are not on the board and callers should say so.
	Superseded []results.Run
}

// Sources says which systems a board holds besides our runs.
type Sources struct {
	Published bool // R2MED's 71 published systems (published.json)
	External  bool // figures printed by later papers (external.json)
	// MTEB, when set, is a folder of MTEB results whose R2MED tasks join
	// as external rows (ReadMTEB).
	MTEB string
}

// Load collects our runs under dir (none when dir is "") and the
// published and external systems src asks for.
func Load(dir string, src Sources) (*Board, error) {
	b := &Board{}
	if dir != "" {
		l, err := results.Scan(dir)
		if err != nil {
			return nil, err
		}
		b.Listing = l
		b.Systems, b.Superseded = Ours(l)
	}
	if src.Published {
		ps, err := Published()
		if err != nil {
			return nil, err
		}
		b.Systems = append(b.Systems, ps...)
	}
	if src.External {
		es, err := Externals()
		if err != nil {
			return nil, err
		}
		b.Systems = append(b.Systems, es...)
	}
	if src.MTEB != "" {
		ms, err := ReadMTEB(src.MTEB)
		if err != nil {
			return nil, err
		}
		b.Systems = append(b.Systems, ms...)
	}
	// A later paper's row that reprints R2MED's own numbers is that
	// published system, shown once with both sources.
	b.Systems = FoldReprints(b.Systems)
	ShortenNames(b.Systems)
	return b, nil
}

// Table builds the leaderboard of the board's systems.
func (b *Board) Table(opt Options) (*Table, error) { return Build(b.Systems, opt) }

// System returns the system with the given ID or, failing that, the only
// one with the given name.
func (b *Board) System(idOrName string) (*System, bool) {
	var byName *System
	n := 0
	for i := range b.Systems {
		s := &b.Systems[i]
		if s.ID == idOrName {
			return s, true
		}
		if s.Name == idOrName {
			byName = s
			n++
		}
	}
	return byName, n == 1
}

// OtherTasks lists the tasks our systems ran that are none of R2MED's
// eight (the demo task, NFCorpus…), sorted by name: the leaderboard shows
// them after its R2MED columns, outside the average.
func OtherTasks(systems []System) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range systems {
		for t := range s.Tasks {
			if taskIndex(t) == len(tasks.All()) && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
