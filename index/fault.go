package index

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// mappings are the live mappings' address ranges, so that a fault can be
// traced to its file.
var mappings struct {
	sync.Mutex
	m map[*Index][2]uintptr
}

func addMapping(ix *Index) {
	if len(ix.data) == 0 {
		return
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(ix.data)))
	mappings.Lock()
	defer mappings.Unlock()
	if mappings.m == nil {
		mappings.m = map[*Index][2]uintptr{}
	}
	mappings.m[ix] = [2]uintptr{lo, lo + uintptr(len(ix.data))}
}

func dropMapping(ix *Index) {
	mappings.Lock()
	delete(mappings.m, ix)
	mappings.Unlock()
}

// FaultError is a read of a mapped index file that faulted: the file
// shrank (or vanished from under the mapping) while open.
type FaultError struct {
	Path string // "" when the address is in no index's mapping
	Addr uintptr
}

func (e *FaultError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("memory fault at %#x reading a mapped file", e.Addr)
	}
	return fmt.Sprintf("index %s: reading the mapped file faulted at %#x: it was truncated or overwritten in place while open; write new index files elsewhere and rename them over the old ones", e.Path, e.Addr)
}

// Unwrap makes errors.Is(err, ErrChanged) true.
func (e *FaultError) Unwrap() error { return ErrChanged }

// Guard runs f, turning what reading a file changed under its mapping
// does into an error instead of a crash: a memory fault on the calling
// goroutine (reading past the end of a truncated file; debug.
// SetPanicOnFault for f's duration) becomes a *FaultError, and a runtime
// error (an offset read from overwritten bytes, out of range) becomes the
// Changed error of the open index whose file changed. Any other panic,
// and a runtime error while no open file changed — a bug — goes on.
// Searches and document reads over mapped indexes run inside it;
// goroutines f starts need their own (package vector's scans carry
// faults back to the caller).
func Guard(f func() error) (err error) {
	prev := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(prev)
		if p := recover(); p != nil {
			if fe, ok := AsFault(p); ok {
				err = fe
				return
			}
			if _, ok := p.(runtime.Error); ok {
				if cerr := anyChanged(); cerr != nil {
					err = fmt.Errorf("%w (%v)", cerr, p)
					return
				}
			}
			panic(p)
		}
	}()
	return f()
}

// anyChanged is the Changed error of an open, mapped index, if any.
func anyChanged() error {
	mappings.Lock()
	open := make([]*Index, 0, len(mappings.m))
	for ix := range mappings.m {
		open = append(open, ix)
	}
	mappings.Unlock()
	for _, ix := range open {
		if err := ix.Changed(); err != nil {
			return err
		}
	}
	return nil
}

// AsFault reports whether a recovered panic value is a memory fault, and
// names the mapping it hit.
func AsFault(p any) (*FaultError, bool) {
	a, ok := p.(interface{ Addr() uintptr })
	if !ok {
		return nil, false
	}
	if _, isErr := p.(error); !isErr {
		return nil, false
	}
	fe := &FaultError{Addr: a.Addr()}
	mappings.Lock()
	for ix, r := range mappings.m {
		if fe.Addr >= r[0] && fe.Addr < r[1] {
			fe.Path = ix.path
		}
	}
	mappings.Unlock()
	return fe, true
}
