package results

import (
	"regexp"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X github.com/r2med/r2med/results.version=v1.2.3").
var version = ""

// Build is the source a binary was built from, as Go recorded it
// (runtime/debug.ReadBuildInfo's vcs.* settings).
type Build struct {
	// Revision is the commit (vcs.revision, in full).
	Revision string `json:"revision"`
	// Time is the commit's time (vcs.time, RFC 3339).
	Time string `json:"time,omitempty"`
	// Modified is vcs.modified: the checkout had uncommitted changes.
	Modified bool `json:"modified"`
}

// Unknown is the version of a binary that records neither a module version
// nor a source revision (built with -buildvcs=false, outside a git
// checkout, in a git worktree, or by go run).
const Unknown = "dev (unknown build: no module version or VCS revision recorded)"

// Version is the tool version that --version prints and every manifest
// records: the link-time stamp when there is one; else the main module's
// version when it is a release ("v1.2.3", "v1.2.3+dirty"); else the source
// revision Go stamped into the binary, short, with the commit time and
// whether the checkout had uncommitted changes ("devel 0af097466360
// (2026-01-02T03:04:05Z, modified)"); else Unknown.
func Version() string {
	if version != "" {
		return version
	}
	bi, _ := debug.ReadBuildInfo()
	return VersionOf(bi)
}

// ThisBuild is the running binary's Build, nil when Go recorded no
// revision.
func ThisBuild() *Build {
	bi, _ := debug.ReadBuildInfo()
	return BuildOf(bi)
}

// BuildOf reads the revision, commit time and dirty flag from build
// information; nil when it records no revision (or bi is nil).
func BuildOf(bi *debug.BuildInfo) *Build {
	if bi == nil {
		return nil
	}
	var b Build
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Revision == "" {
		return nil
	}
	return &b
}

// VersionOf is Version for the given build information (nil: none).
//
// A pseudo-version that Go derived from the checkout (go build in a git
// clone, Go 1.24 on: "v0.0.0-20260102030405-0af097466360+dirty") is
// written from the revision it was derived from, which says the same more
// readably; one without a recorded revision (go install module@commit) is
// kept as it is.
func VersionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return Unknown
	}
	v := bi.Main.Version
	b := BuildOf(bi)
	if v != "" && v != "(devel)" && (b == nil || !pseudoVersion.MatchString(v)) {
		return v
	}
	if b == nil {
		return Unknown
	}
	rev := b.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := "devel " + rev
	switch {
	case b.Time != "" && b.Modified:
		out += " (" + b.Time + ", modified)"
	case b.Time != "":
		out += " (" + b.Time + ")"
	case b.Modified:
		out += " (modified)"
	}
	return out
}

// pseudoVersion matches Go module pseudo-versions (the pattern of
// golang.org/x/mod/module's IsPseudoVersion).
var pseudoVersion = regexp.MustCompile(`^v[0-9]+\.(0\.0-|\d+\.\d+-([^+]*\.)?0\.)\d{14}-[A-Za-z0-9]+(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
