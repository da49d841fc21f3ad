//go:build cgo

package onnx

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Available reports whether this build can run ONNX models (it has cgo).
const Available = true

var (
	initMu  sync.Mutex
	initLib string
)

// Init loads the ONNX Runtime library at path ("" means FindLibrary) and
// starts the runtime. The first success wins for the life of the process:
// later calls with "" or the same path return nil, a different path is an
// error. A failure is not remembered, so a corrected setting can retry.
// Open calls Init("") itself; call Init first only to choose the library.
func Init(path string) error {
	initMu.Lock()
	defer initMu.Unlock()
	if initLib != "" {
		if path != "" && path != initLib {
			return fmt.Errorf("ONNX Runtime is already loaded from %s; cannot switch to %s", initLib, path)
		}
		return nil
	}
	if path == "" {
		p, err := FindLibrary()
		if err != nil {
			return err
		}
		path = p
	}
	ort.SetSharedLibraryPath(path)
	// Errors come back as values; ORT printing them too would only be noise.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		hint := ""
		if strings.Contains(err.Error(), "API version") {
			hint = " (onnxruntime_go v1.27.0 needs ONNX Runtime ≥ 1.24)"
		}
		return fmt.Errorf("starting ONNX Runtime from %s%s: %w\n%s", path, hint, err, fetchHint(runtime.GOOS, runtime.GOARCH))
	}
	initLib = path
	return nil
}

// Library returns the path ONNX Runtime was loaded from, "" before Init.
func Library() string {
	initMu.Lock()
	defer initMu.Unlock()
	return initLib
}

// Version returns the loaded ONNX Runtime's version, "" before Init.
func Version() string {
	if Library() == "" {
		return ""
	}
	return ort.GetVersion()
}

// Session is one loaded model. Run may be called from many goroutines at
// once (ONNX Runtime sessions are thread-safe); Close waits for runs in
// flight.
type Session struct {
	path    string
	inputs  []string // in the model's order
	output  string
	outDims []int64 // declared output dimensions; -1 where symbolic

	mu   sync.RWMutex
	sess *ort.DynamicAdvancedSession // nil once closed
}

// Open loads the model at path. It accepts models whose inputs are int64
// input_ids (required), attention_mask and token_type_ids, and reads one
// float32 output of rank 2 or 3 (see Options.Output and PreferredOutputs).
func Open(path string, opts Options) (*Session, error) {
	if err := Init(""); err != nil {
		return nil, err
	}
	if opts.Threads < 0 {
		return nil, fmt.Errorf("%s: threads must be ≥ 0, got %d", path, opts.Threads)
	}
	// Reading the signature loads the model once more; without graph
	// optimizations that costs about the file read.
	infoOpts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	err = infoOpts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll)
	var ins, outs []ort.InputOutputInfo
	if err == nil {
		ins, outs, err = ort.GetInputOutputInfoWithOptions(path, infoOpts)
	}
	infoOpts.Destroy()
	if err != nil {
		return nil, fmt.Errorf("loading ONNX model %s: %w", path, err)
	}
	s := &Session{path: path}
	if err := s.pickInputs(ins); err != nil {
		return nil, err
	}
	if err := s.pickOutput(outs, opts.Output); err != nil {
		return nil, err
	}

	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer so.Destroy()
	if opts.Threads > 0 {
		if err := so.SetIntraOpNumThreads(opts.Threads); err != nil {
			return nil, fmt.Errorf("%s: setting %d threads: %w", path, opts.Threads, err)
		}
	}
	s.sess, err = ort.NewDynamicAdvancedSession(path, s.inputs, []string{s.output}, so)
	if err != nil {
		return nil, fmt.Errorf("loading ONNX model %s: %w", path, err)
	}
	return s, nil
}

func (s *Session) pickInputs(ins []ort.InputOutputInfo) error {
	var unknown []string
	for _, in := range ins {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
		default:
			unknown = append(unknown, in.Name)
			continue
		}
		if in.OrtValueType != ort.ONNXTypeTensor || in.DataType != ort.TensorElementDataTypeInt64 {
			return fmt.Errorf("%s: input %s is %s, want an int64 tensor", s.path, in.Name, in.String())
		}
		s.inputs = append(s.inputs, in.Name)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%s: unsupported model inputs %s; this runner feeds BERT-shaped models "+
			"(input_ids, attention_mask, token_type_ids)", s.path, strings.Join(unknown, ", "))
	}
	if !slices.Contains(s.inputs, "input_ids") {
		return fmt.Errorf("%s: the model has no input_ids input (inputs: %s)", s.path, strings.Join(s.inputs, ", "))
	}
	return nil
}

func (s *Session) pickOutput(outs []ort.InputOutputInfo, want string) error {
	var names []string
	var floats []ort.InputOutputInfo
	for _, o := range outs {
		names = append(names, o.Name)
		if o.OrtValueType == ort.ONNXTypeTensor && o.DataType == ort.TensorElementDataTypeFloat {
			floats = append(floats, o)
		}
	}
	var pick *ort.InputOutputInfo
	find := func(name string) *ort.InputOutputInfo {
		for i := range outs {
			if outs[i].Name == name {
				return &outs[i]
			}
		}
		return nil
	}
	switch {
	case want != "":
		if pick = find(want); pick == nil {
			return fmt.Errorf("%s: no output %q (outputs: %s)", s.path, want, strings.Join(names, ", "))
		}
	default:
		for _, n := range PreferredOutputs {
			if pick = find(n); pick != nil {
				break
			}
		}
		if pick == nil && len(floats) == 1 {
			pick = &floats[0]
		}
		if pick == nil {
			return fmt.Errorf("%s: cannot tell which output to read (outputs: %s); name one of them", s.path, strings.Join(names, ", "))
		}
	}
	if pick.OrtValueType != ort.ONNXTypeTensor || pick.DataType != ort.TensorElementDataTypeFloat {
		return fmt.Errorf("%s: output %s is %s; only float32 outputs are supported (export the model in float32)", s.path, pick.Name, pick.String())
	}
	if r := len(pick.Dimensions); r != 2 && r != 3 {
		return fmt.Errorf("%s: output %s has rank %d, want [batch, seq, dim] or [batch, dim]", s.path, pick.Name, r)
	}
	s.output = pick.Name
	s.outDims = slices.Clone(pick.Dimensions)
	return nil
}

// Path returns the model file.
func (s *Session) Path() string { return s.path }

// Inputs returns the input names fed to the model, in its order.
func (s *Session) Inputs() []string { return slices.Clone(s.inputs) }

// Output returns the name of the output Run reads.
func (s *Session) Output() string { return s.output }

// Rank is 3 for token vectors [batch, seq, dim] and 2 for one vector per
// row [batch, dim] (pooled embeddings or logits).
func (s *Session) Rank() int { return len(s.outDims) }

// Dim is the output's last dimension, 0 when the model leaves it symbolic.
func (s *Session) Dim() int { return int(max(s.outDims[len(s.outDims)-1], 0)) }

// Run feeds one padded batch and returns the output. The tensors handed to
// ONNX Runtime are always released; the returned Data is ordinary Go
// memory owned by the caller.
func (s *Session) Run(b Batch) (Tensor, error) {
	if err := b.check(); err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", s.path, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.sess == nil {
		return Tensor{}, fmt.Errorf("%s: session is closed", s.path)
	}
	n := b.Rows * b.Len
	// ONNX Runtime keeps pointers to these Go slices between cgo calls;
	// pinning makes that legal under the cgo rules.
	var pin runtime.Pinner
	defer pin.Unpin()
	shape := ort.NewShape(int64(b.Rows), int64(b.Len))
	inputs := make([]ort.Value, 0, len(s.inputs))
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, name := range s.inputs {
		data := b.IDs
		switch name {
		case "attention_mask":
			if data = b.AttentionMask; data == nil {
				data = make([]int64, n)
				for i := range data {
					data[i] = 1
				}
			}
		case "token_type_ids":
			if data = b.TypeIDs; data == nil {
				data = make([]int64, n)
			}
		}
		pin.Pin(&data[0])
		t, err := ort.NewTensor(shape, data[:n])
		if err != nil {
			return Tensor{}, fmt.Errorf("%s: input %s: %w", s.path, name, err)
		}
		inputs = append(inputs, t)
	}

	want := []int{b.Rows, b.Len, s.Dim()}
	if s.Rank() == 2 {
		want = []int{b.Rows, s.Dim()}
	}
	outputs := []ort.Value{nil}
	var data []float32
	if s.Dim() > 0 {
		// The last dimension is known, so ORT writes straight into our
		// buffer instead of allocating one that the wrapper then copies.
		size := 1
		dims := make([]int64, len(want))
		for i, d := range want {
			size *= d
			dims[i] = int64(d)
		}
		data = make([]float32, size)
		pin.Pin(&data[0])
		t, err := ort.NewTensor(ort.NewShape(dims...), data)
		if err != nil {
			return Tensor{}, fmt.Errorf("%s: output %s: %w", s.path, s.output, err)
		}
		outputs[0] = t
	}
	err := s.sess.Run(inputs, outputs)
	if outputs[0] != nil {
		defer outputs[0].Destroy()
	}
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: running a batch of %d × %d tokens: %w", s.path, b.Rows, b.Len, err)
	}
	if data == nil {
		t, ok := outputs[0].(*ort.Tensor[float32])
		if !ok {
			return Tensor{}, fmt.Errorf("%s: output %s is not a float32 tensor", s.path, s.output)
		}
		data = t.GetData()
		got := t.GetShape()
		want = want[:0]
		for _, d := range got {
			want = append(want, int(d))
		}
		if len(got) != s.Rank() || want[0] != b.Rows || (s.Rank() == 3 && want[1] != b.Len) {
			return Tensor{}, fmt.Errorf("%s: output %s has shape %v for a batch of %d × %d", s.path, s.output, got, b.Rows, b.Len)
		}
	}
	return Tensor{Data: data, Shape: want}, nil
}

// Close releases the model. Runs in flight finish first; later runs fail.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	if err != nil {
		return fmt.Errorf("%s: closing: %w", s.path, err)
	}
	return nil
}
