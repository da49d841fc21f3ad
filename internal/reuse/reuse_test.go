package reuse

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/r2med/r2med/internal/fileio"
)

func TestStageReuseRule(t *testing.T) {
	dir := t.TempDir()
	st := Stage{Dir: dir, Name: "retrieve"}
	if err := st.Check("fp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no record: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "retrieve.trec"), []byte("q 0 d 1 1.0 x\n"), 0o644)
	if err := st.Keep("fp", "retrieve.trec"); err != nil {
		t.Fatal(err)
	}
	if err := st.Check("fp", "retrieve.trec"); err != nil {
		t.Fatalf("fresh record: %v", err)
	}
	if err := st.Check("other", "retrieve.trec"); !errors.Is(err, ErrOtherFingerprint) {
		t.Fatalf("other fingerprint: %v", err)
	}
	if err := st.Check("fp", "retrieve.trec", "extra.trec"); err == nil || !strings.Contains(err.Error(), "extra.trec has no recorded checksum") {
		t.Fatalf("unrecorded file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "retrieve.trec"), []byte("q 0 d 1 2.0 x\n"), 0o644)
	if err := st.Check("fp", "retrieve.trec"); err == nil || !strings.Contains(err.Error(), "retrieve.trec changed since it was written") {
		t.Fatalf("changed file: %v", err)
	}
	os.Remove(filepath.Join(dir, "retrieve.trec"))
	if err := st.Check("fp", "retrieve.trec"); err == nil {
		t.Fatal("a missing file passed")
	}
	if err := st.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := st.Check("fp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Begin left the record: %v", err)
	}
}

func TestSweepRemovesTemporaries(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".run.trec.tmp-123", ".manifest.json.tmp-9", "run.trec", ".hidden", "x.tmp-1"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	removed, err := Sweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(removed, []string{".manifest.json.tmp-9", ".run.trec.tmp-123"}) {
		t.Fatalf("removed %v", removed)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 3 {
		t.Fatalf("left %v", left)
	}
	if removed, err := Sweep(filepath.Join(dir, "missing")); err != nil || removed != nil {
		t.Fatalf("missing dir: %v %v", removed, err)
	}
}

// TestSweepSparesLiveWrites: a sweep while another write is under way
// leaves that write's temporary file, so both the sweep and the write
// succeed (fileio.WriteAtomic locks its temporary file).
func TestSweepSparesLiveWrites(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".old.idx.tmp-1"), []byte("left by a killed build"), 0o644)
	var removed []string
	err := fileio.WriteAtomic(filepath.Join(dir, "new.idx"), func(w io.Writer) error {
		var err error
		removed, err = Sweep(dir)
		io.WriteString(w, "whole")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(removed, []string{".old.idx.tmp-1"}) {
		t.Errorf("removed %v, want the stray file only", removed)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.idx")); err != nil || string(b) != "whole" {
		t.Errorf("the live write: %q %v", b, err)
	}
}

func TestSweepTree(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "expand", "hyde", "m"), 0o755)
	os.WriteFile(filepath.Join(dir, ".fuse.trec.tmp-1"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "expand", "hyde", "m", ".query_with_hydoc.jsonl.tmp-2"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "expand", "hyde", "m", "query_with_hydoc.jsonl"), nil, 0o644)
	removed, err := SweepTree(dir)
	if err != nil || !reflect.DeepEqual(removed, []string{".fuse.trec.tmp-1", filepath.Join("expand", "hyde", "m", ".query_with_hydoc.jsonl.tmp-2")}) {
		t.Fatalf("removed %v, %v", removed, err)
	}
	if removed, err := SweepTree(filepath.Join(dir, "missing")); err != nil || removed != nil {
		t.Fatalf("missing dir: %v %v", removed, err)
	}
}

// TestFingerprintParts: a fingerprint is its parts as JSON lines, in
// order: the same parts added at once or one by one give the same value,
// and a part changed, moved or added another.
func TestFingerprintParts(t *testing.T) {
	a := Of("data", map[string]any{"k1": 0.9}, 100)
	if b := NewFingerprint().Add("data").Add(map[string]any{"k1": 0.9}).Add(100).String(); a != b {
		t.Errorf("added one by one %s, at once %s", b, a)
	}
	for _, other := range []string{Of("data", map[string]any{"k1": 1.2}, 100), Of(100, map[string]any{"k1": 0.9}, "data"), Of("data", map[string]any{"k1": 0.9}, 100, 0)} {
		if other == a {
			t.Error("another set of parts gave the same fingerprint")
		}
	}
	// A NaN cannot be JSON; it still counts, and not as nothing.
	if Of(math.NaN()) == Of() {
		t.Error("a part JSON cannot write counted for nothing")
	}
}

func TestCheckpoint(t *testing.T) {
	c := Checkpoint{Path: filepath.Join(t.TempDir(), "checkpoint.json")}
	type state struct{ Done int }
	var got state
	if err := c.Load("fp", &got); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no checkpoint: %v", err)
	}
	if err := c.Save("fp", state{Done: 3}); err != nil {
		t.Fatal(err)
	}
	if err := c.Load("fp", &got); err != nil || got.Done != 3 {
		t.Fatalf("same work: %v, %+v", err, got)
	}
	if err := c.Load("other", &got); !errors.Is(err, ErrOtherFingerprint) {
		t.Fatalf("other work: %v", err)
	}
	os.WriteFile(c.Path, []byte("{"), 0o644)
	if err := c.Load("fp", &got); err == nil || errors.Is(err, ErrOtherFingerprint) || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a damaged checkpoint: %v", err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
}
