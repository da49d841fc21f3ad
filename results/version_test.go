package results

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(main string, modified string, extra ...debug.BuildSetting) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/r2med/r2med", Version: main}}
		bi.Settings = append([]debug.BuildSetting{{Key: "-compiler", Value: "gc"}}, extra...)
		if modified != "" {
			bi.Settings = append(bi.Settings,
				debug.BuildSetting{Key: "vcs", Value: "git"},
				debug.BuildSetting{Key: "vcs.revision", Value: "0af097466360a13c195952f40b9c609285ce09f9"},
				debug.BuildSetting{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
				debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return bi
	}
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, Unknown},
		{"devel, no vcs (-buildvcs=false, go run, a git worktree)", vcs("(devel)", ""), Unknown},
		{"empty version, no vcs", vcs("", ""), Unknown},
		{"release by go install module@v1.2.3", vcs("v1.2.3", ""), "v1.2.3"},
		{"release tag, dirty checkout", vcs("v1.2.3+dirty", "true"), "v1.2.3+dirty"},
		{"devel with vcs (before Go 1.24)", vcs("(devel)", "false"), "devel 0af097466360 (2026-01-02T03:04:05Z)"},
		{"devel with vcs, dirty", vcs("(devel)", "true"), "devel 0af097466360 (2026-01-02T03:04:05Z, modified)"},
		{"pseudo-version derived from the checkout", vcs("v0.0.0-20260102030405-0af097466360", "false"), "devel 0af097466360 (2026-01-02T03:04:05Z)"},
		{"pseudo-version derived from a dirty checkout", vcs("v0.0.0-20260102030405-0af097466360+dirty", "true"), "devel 0af097466360 (2026-01-02T03:04:05Z, modified)"},
		{"pseudo-version after a tag", vcs("v1.2.4-0.20260102030405-0af097466360", "false"), "devel 0af097466360 (2026-01-02T03:04:05Z)"},
		{"pseudo-version from the module proxy (no vcs)", vcs("v0.0.0-20260102030405-0af097466360", ""), "v0.0.0-20260102030405-0af097466360"},
		{"revision without time", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}, "devel abc (modified)"},
	}
	for _, c := range cases {
		if got := VersionOf(c.bi); got != c.want {
			t.Errorf("%s: VersionOf = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBuildOf(t *testing.T) {
	if b := BuildOf(nil); b != nil {
		t.Errorf("BuildOf(nil) = %+v, want nil", b)
	}
	if b := BuildOf(&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}}); b != nil {
		t.Errorf("no revision: BuildOf = %+v, want nil", b)
	}
	got := BuildOf(&debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0af097466360a13c"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}})
	if want := (Build{Revision: "0af097466360a13c", Time: "2026-01-02T03:04:05Z", Modified: true}); got == nil || *got != want {
		t.Errorf("BuildOf = %+v, want %+v", got, want)
	}
}

// A manifest records the version Version reports and the build it comes
// from.
func TestManifestRecordsVersion(t *testing.T) {
	m := NewManifest([]string{"r2med", "run"})
	if m.Version != Version() || m.Version == "" || m.Version == "dev" {
		t.Errorf("manifest version %q, Version() %q", m.Version, Version())
	}
	bi, _ := debug.ReadBuildInfo()
	if want := BuildOf(bi); (want == nil) != (m.Build == nil) || (want != nil && *want != *m.Build) {
		t.Errorf("manifest build %+v, want %+v", m.Build, want)
	}
}
