package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
)

// killChild runs a leakage audit in a child process for
// TestLeakageSurvivesKill, which kills it.
func killChild(train, state string) error {
	task, err := demo.Load()
	if err != nil {
		return err
	}
	_, err = Leakage(context.Background(), []*ir.Task{task}, []string{train}, LeakageOptions{State: state, ChunkRows: 64, CheckpointEvery: time.Millisecond})
	return err
}

func TestMain(m *testing.M) {
	if train := os.Getenv("R2MED_AUDIT_KILL_CHILD"); train != "" {
		if err := killChild(train, os.Getenv("R2MED_AUDIT_KILL_STATE")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A run killed with SIGKILL mid-file continues from its last checkpoint
// and ends with exactly the matches of a run never killed.
func TestLeakageSurvivesKill(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	train := filepath.Join(dir, "train.jsonl")
	var b bytes.Buffer
	for i := range 60000 {
		var s string
		switch {
		case i%997 == 0:
			s = task.Queries[i%len(task.Queries)].Text
		case i%1009 == 0:
			s = task.Corpus[i%len(task.Corpus)].Text
		default:
			s = fmt.Sprintf("training sentence %d about dose %d of drug %d", i, i%13, i%101)
		}
		line, _ := json.Marshal(map[string]string{"text": s})
		b.Write(append(line, '\n'))
	}
	os.WriteFile(train, b.Bytes(), 0o644)
	state := filepath.Join(dir, "state")

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "R2MED_AUDIT_KILL_CHILD="+train, "R2MED_AUDIT_KILL_STATE="+state)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		cks, _ := filepath.Glob(filepath.Join(state, "*", checkpointFile))
		if len(cks) == 1 {
			var kept struct{ State checkpoint } // reuse.Checkpoint's file
			c := &kept.State
			if data, err := os.ReadFile(cks[0]); err == nil && json.Unmarshal(data, &kept) == nil && len(c.Files) > 0 && c.Files[0].Rows > 0 {
				if !c.Files[0].Done {
					cmd.Process.Kill()
					killed = true
				}
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Wait()
	if !killed {
		t.Skip("the child finished (or never checkpointed) before it could be killed")
	}
	var log bytes.Buffer
	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{train}, LeakageOptions{State: state, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log.Bytes(), []byte("resuming from")) {
		t.Errorf("the second run did not resume: %s", log.String())
	}
	var got bytes.Buffer
	res.WriteMatches(&got)
	res.Close()
	ref, err := Leakage(context.Background(), []*ir.Task{task}, []string{train}, LeakageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	var want bytes.Buffer
	ref.WriteMatches(&want)
	if got.String() != want.String() || want.Len() == 0 {
		t.Errorf("after a kill: %d bytes of matches, uninterrupted %d", got.Len(), want.Len())
	}
	if res.Report.Train[0].Rows != 60000 {
		t.Errorf("rows %d after resuming", res.Report.Train[0].Rows)
	}
}
