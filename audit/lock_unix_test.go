//go:build unix

package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// TestLeakageOneRunPerState: a second run of one audit while the first
// holds its state is refused, naming the state; it truncated and rewrote
// the matches the first was writing and failed or miscounted when the
// first removed them.
func TestLeakageOneRunPerState(t *testing.T) {
	task, path := demoAndTrain(t)
	state := t.TempDir()
	first, err := Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{State: state})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	spill, _ := filepath.Glob(filepath.Join(state, "*", matchesFile))
	if len(spill) != 1 {
		t.Fatalf("state holds %v, want one matches file", spill)
	}
	f, err := os.Open(spill[0]) // another process's run, holding the lock
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if busy, err := lockState(f); busy || err != nil {
		t.Fatalf("lock: busy %v, %v", busy, err)
	}
	_, err = Leakage(context.Background(), []*ir.Task{task}, []string{path}, LeakageOptions{State: state})
	if err == nil || !strings.Contains(err.Error(), "another audit of these training files with these settings is running") || !strings.Contains(err.Error(), filepath.Dir(spill[0])) {
		t.Errorf("second run: %v; want it refused naming the state", err)
	}
	if _, err := os.Stat(spill[0]); err != nil {
		t.Errorf("the refused run removed the first run's state: %v", err)
	}
}
