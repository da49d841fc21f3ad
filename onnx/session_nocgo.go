//go:build !cgo

package onnx

// Available reports whether this build can run ONNX models (it has cgo).
const Available = false

// Init returns ErrUnavailable: this build has no cgo.
func Init(path string) error { return ErrUnavailable }

// Library returns "": this build never loads ONNX Runtime.
func Library() string { return "" }

// Version returns "": this build never loads ONNX Runtime.
func Version() string { return "" }

// Session is one loaded model; without cgo none can be opened.
type Session struct{}

// Open returns ErrUnavailable: this build has no cgo.
func Open(path string, opts Options) (*Session, error) { return nil, ErrUnavailable }

// The methods mirror the cgo build's so callers compile either way; no
// Session exists here to call them on.

// Path returns "".
func (s *Session) Path() string { return "" }

// Inputs returns nil.
func (s *Session) Inputs() []string { return nil }

// Output returns "".
func (s *Session) Output() string { return "" }

// Rank returns 0.
func (s *Session) Rank() int { return 0 }

// Dim returns 0.
func (s *Session) Dim() int { return 0 }

// Run returns ErrUnavailable.
func (s *Session) Run(b Batch) (Tensor, error) { return Tensor{}, ErrUnavailable }

// Close does nothing.
func (s *Session) Close() error { return nil }
