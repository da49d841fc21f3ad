package index

import "fmt"

// The term dictionary is stored, not rebuilt: a Go map of a large
// vocabulary takes longer to build than the rest of Open together. Terms
// are kept by id (one blob and n+1 offsets) with an open-addressing hash
// table of term id+1 (0 = empty), at most half full, probed linearly from
// the term's FNV-1a hash. A fixed, specified hash keeps the file
// deterministic and readable by any build.

// fnv1a is 64-bit FNV-1a.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// hashTable returns the table for terms (by id).
func hashTable(terms []string) []uint32 {
	size := 1
	for size < 2*len(terms) {
		size *= 2
	}
	table := make([]uint32, size)
	mask := uint64(size - 1)
	for id, t := range terms {
		for h := fnv1a(t) & mask; ; h = (h + 1) & mask {
			if table[h] == 0 {
				table[h] = uint32(id + 1)
				break
			}
		}
	}
	return table
}

// dict looks terms up in a stored dictionary.
type dict struct {
	blob  []byte
	off   []uint64
	table []uint32
	mask  uint64
}

func newDict(blob []byte, off []uint64, table []uint32, terms int) (*dict, error) {
	switch {
	case len(off) != terms+1:
		return nil, fmt.Errorf("%d term offsets for %d terms", len(off), terms)
	case len(table) < 2*terms || len(table)&(len(table)-1) != 0:
		return nil, fmt.Errorf("term hash table of %d slots for %d terms", len(table), terms)
	case off[0] != 0 || off[terms] != uint64(len(blob)):
		return nil, fmt.Errorf("term offsets span [%d, %d) of %d bytes", off[0], off[terms], len(blob))
	}
	for i := range terms {
		if off[i] > off[i+1] {
			return nil, fmt.Errorf("term offsets fall at term %d", i)
		}
	}
	used := 0
	for i, e := range table {
		if int(e) > terms {
			return nil, fmt.Errorf("term hash slot %d names term %d of %d", i, int(e)-1, terms)
		}
		if e != 0 {
			used++
		}
	}
	if used != terms { // also guarantees empty slots, so probing ends
		return nil, fmt.Errorf("term hash table holds %d terms, want %d", used, terms)
	}
	return &dict{blob: blob, off: off, table: table, mask: uint64(len(table) - 1)}, nil
}

func (d *dict) term(id int) []byte { return d.blob[d.off[id]:d.off[id+1]] }

func (d *dict) lookup(t string) (int32, bool) {
	for h := fnv1a(t) & d.mask; ; h = (h + 1) & d.mask {
		e := d.table[h]
		if e == 0 {
			return 0, false
		}
		if string(d.term(int(e-1))) == t {
			return int32(e - 1), true
		}
	}
}
