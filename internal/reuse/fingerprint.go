package reuse

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/r2med/r2med/internal/fileio"
)

// Fingerprint names what produced an output: the sha256 of its parts,
// each written as JSON on a line of its own, in order. Two outputs made
// from equal parts carry equal fingerprints, and any part that changes
// changes it. It is built part by part, so a part too large to hold as one
// value (a corpus's texts) goes in piece by piece.
type Fingerprint struct {
	h   hash.Hash
	enc *json.Encoder
}

// NewFingerprint starts a fingerprint with no parts.
func NewFingerprint() *Fingerprint {
	h := sha256.New()
	return &Fingerprint{h: h, enc: json.NewEncoder(h)}
}

// Add adds parts, each as JSON. A part JSON cannot write (a NaN) adds
// the error's text instead, so it still counts.
func (f *Fingerprint) Add(parts ...any) *Fingerprint {
	for _, p := range parts {
		if err := f.enc.Encode(p); err != nil {
			fmt.Fprintf(f.h, "!%v\n", err)
		}
	}
	return f
}

// String is the fingerprint, hex-encoded.
func (f *Fingerprint) String() string { return hex.EncodeToString(f.h.Sum(nil)) }

// Of is the fingerprint of parts: Of(data, settings, depth) chains a
// stage's settings on the fingerprint of the data it read.
func Of(parts ...any) string { return NewFingerprint().Add(parts...).String() }

// Checkpoint is where unfinished work keeps its progress to resume from:
// a JSON file that holds the work's fingerprint beside its state, so that
// only the same work resumes from it and any other starts afresh rather
// than misread it.
type Checkpoint struct {
	Path string
}

type checkpointFile struct {
	Fingerprint string          `json:"fingerprint"`
	State       json.RawMessage `json:"state"`
}

// Load reads into state the progress saved for the work fp names. Its
// error is os.ErrNotExist (errors.Is) when there is none,
// ErrOtherFingerprint when it was saved by other work, another when it
// cannot be read.
func (c Checkpoint) Load(fp string, state any) error {
	data, err := os.ReadFile(c.Path)
	if err != nil {
		return err
	}
	var f checkpointFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%s: %v", c.Path, err)
	}
	if f.Fingerprint != fp {
		return ErrOtherFingerprint
	}
	if err := json.Unmarshal(f.State, state); err != nil {
		return fmt.Errorf("%s: %v", c.Path, err)
	}
	return nil
}

// Save writes the progress of the work fp names, whole or not at all.
func (c Checkpoint) Save(fp string, state any) error {
	data, err := json.Marshal(state)
	if err != nil {
		return err
	}
	return fileio.WriteAtomic(c.Path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(checkpointFile{Fingerprint: fp, State: data})
	})
}

// Remove deletes the checkpoint, once the work's output holds what it
// kept.
func (c Checkpoint) Remove() error {
	if err := os.Remove(c.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
