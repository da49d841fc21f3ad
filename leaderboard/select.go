package leaderboard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/tasks"
)

// chooseTasks reads Options.Tasks: R2MED tasks by name or alias (returned
// in R2MED's order) and our other data by name (among others, the tasks
// our runs have besides R2MED's). A name that is neither is a usage
// error with the nearest name suggested.
func chooseTasks(names []string, others []string) (r2med, other []string, err error) {
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if t, err := tasks.Lookup(n); err == nil {
			want[t.Name] = true
			continue
		}
		if long, ok := longTaskName(n); ok {
			want[long] = true
			continue
		}
		if i := slices.IndexFunc(others, func(o string) bool { return strings.EqualFold(o, n) }); i >= 0 {
			want[others[i]] = true
			continue
		}
		known := append(TaskNames(""), others...)
		return nil, nil, &UsageError{unknownName("task", n, known, append(slices.Clone(known), shortNamesOf(known)...))}
	}
	for _, t := range TaskNames("") {
		if want[t] {
			r2med = append(r2med, t)
		}
	}
	for _, t := range others {
		if want[t] {
			other = append(other, t)
		}
	}
	if len(r2med) == 0 {
		return nil, nil, &UsageError{fmt.Sprintf("name at least one of R2MED's tasks (%s): the average is over them; our other data (%s) is shown after them", strings.Join(TaskNames(""), ", "), strings.Join(others, ", "))}
	}
	return r2med, other, nil
}

// longTaskName is the R2MED task a column heading (ShortTaskName) stands
// for.
func longTaskName(short string) (string, bool) {
	for long, s := range shortNames {
		if strings.EqualFold(s, short) {
			return long, true
		}
	}
	return "", false
}

func shortNamesOf(names []string) []string {
	var out []string
	for _, n := range names {
		if s := ShortTaskName(n); s != n {
			out = append(out, s)
		}
	}
	return out
}

// unknownName says that name is no known what, suggesting the nearest of
// candidates when one is close, and listing known.
func unknownName(what, name string, known, candidates []string) string {
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if s := yamlx.Suggest(name, candidates); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(known) > 12 {
		return msg + fmt.Sprintf("; %d are known, e.g. %s", len(known), strings.Join(known[:12], ", "))
	}
	return msg + "; known: " + strings.Join(known, ", ")
}

// SelectRows keeps the rows of the systems named (by ID, or every system
// of a name) and of
// the top best ranked (ties at the cut kept; top 0 selects none by rank),
// and, when ours and a selection is made, our systems too. With no names
// and top 0 every row stays. Ranks are left as the whole board's; Board
// keeps its size. An unknown name is a usage error naming the nearest
// system.
func (t *Table) SelectRows(names []string, top int, ours bool) error {
	if top < 0 {
		return &UsageError{fmt.Sprintf("top %d: give a positive number of systems", top)}
	}
	if len(names) == 0 && top == 0 {
		return nil
	}
	keep := map[*System]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		ss, err := t.find(n)
		if err != nil {
			return err
		}
		for _, s := range ss {
			keep[s] = true
		}
	}
	if top > 0 {
		cut := 0
		for _, r := range t.Rows {
			if r.Rank > 0 && r.Rank <= top {
				cut = max(cut, r.Rank)
			}
		}
		for _, r := range t.Rows {
			if r.Rank > 0 && r.Rank <= cut || ours && r.System.IsOurs() {
				keep[r.System] = true
			}
		}
	}
	t.Rows = slices.DeleteFunc(t.Rows, func(r Row) bool { return !keep[r.System] })
	return nil
}

// find returns the row's system with the given ID, else every one with
// the given name (ours and R2MED's bm25 alike).
func (t *Table) find(name string) ([]*System, error) {
	var byName []*System
	for _, r := range t.Rows {
		s := r.System
		if s.ID == name {
			return []*System{s}, nil
		}
		if s.DisplayName() == name || s.Name == name {
			byName = append(byName, s)
		}
	}
	if len(byName) > 0 {
		return byName, nil
	}
	var known, candidates []string
	for _, r := range t.Rows {
		known = append(known, r.System.DisplayName())
		candidates = append(candidates, r.System.DisplayName(), r.System.ID)
	}
	return nil, &UsageError{unknownName("system", name, known, candidates)}
}

// KnownOrigin says where a system named by ID or name comes from when it
// is one of R2MED's published systems or a later paper's (OriginPublished,
// OriginExternal), and "" otherwise: what a hint needs when a board that
// leaves those out is asked for one.
func KnownOrigin(name string) Origin {
	for _, load := range []func() ([]System, error){Published, Externals} {
		ss, err := load()
		if err != nil {
			continue
		}
		for i := range ss {
			if s := &ss[i]; s.ID == name || s.Name == name || s.DisplayName() == name {
				return s.Origin()
			}
		}
	}
	return ""
}

// NameInputs labels the systems a comparison opened by their names, as
// the leaderboard names them (DisplayName: told apart by their settings
// where names clash, with what sets them apart in Apart, cut by the one
// rule, the whole name in FullName),
// instead of by path. An input whose runs carry no
// manifest and result file (a bare run file), whose runs name several
// systems, or whose name another input shares keeps its path.
func NameInputs(inputs []significance.Input) {
	var runs []results.Run
	for _, in := range inputs {
		for _, r := range in.Runs {
			if r.Manifest != nil && r.Result != nil && r.Manifest.Task.Name != "" {
				runs = append(runs, r.Run)
			}
		}
	}
	if len(runs) == 0 {
		return
	}
	byDir := map[string]*System{}
	systems, _ := Ours(&results.Listing{Runs: runs})
	ShortenNames(systems)
	ptrs := make([]*System, len(systems))
	for i := range systems {
		ptrs[i] = &systems[i]
		for _, tr := range systems[i].Tasks {
			byDir[tr.Source] = &systems[i]
		}
	}
	// What sets systems of one name apart, by the name shown.
	apart := map[string]string{}
	for i, a := range Apart(ptrs) {
		apart[systems[i].DisplayName()] = a
	}
	names := make([]string, len(inputs))
	count := map[string]int{}
	full := map[string]string{}
	for i, in := range inputs {
		for _, r := range in.Runs {
			s, ok := byDir[r.Dir]
			if !ok || (names[i] != "" && names[i] != s.DisplayName()) {
				names[i] = ""
				break
			}
			names[i] = s.DisplayName()
			if s.Cut() {
				full[names[i]] = s.FullName()
			}
		}
		count[names[i]]++
	}
	for i := range inputs {
		if n := names[i]; n != "" && count[n] == 1 {
			inputs[i].Name, inputs[i].FullName, inputs[i].Apart = n, full[n], apart[n]
		}
	}
}
