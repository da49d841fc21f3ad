package leaderboard

import "github.com/r2med/r2med/results"

// DefaultDir is where r2med looks for our runs when no results directory
// is named: the out/ directory the run examples write under
// (r2med run --task all --out out/bm25).
const DefaultDir = "out"

// Board is the systems a leaderboard can show and where ours came from.
type Board struct {
	// Systems are ours (sorted by ID) then the published ones (sorted by
	// ID).
	Systems []System
	// Listing is the scan of the results directory; nil when none was
	// given.
	Listing *results.Listing
	// Superseded are older runs of a system and task that a newer run
	// replaces; Other are runs on data that is no R2MED task. Neither is
	// on the board; callers should say so.
	Superseded, Other []results.Run
}

// Load collects our runs under dir (none when dir is "") and, when
// published is true, R2MED's published systems.
func Load(dir string, published bool) (*Board, error) {
	b := &Board{}
	if dir != "" {
		l, err := results.Scan(dir)
		if err != nil {
			return nil, err
		}
		b.Listing = l
		b.Systems, b.Superseded, b.Other = Ours(l)
	}
	if published {
		ps, err := Published()
		if err != nil {
			return nil, err
		}
		b.Systems = append(b.Systems, ps...)
	}
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
