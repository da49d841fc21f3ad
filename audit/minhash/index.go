package minhash

import (
	"math/bits"
	"slices"
)

// Index is a banded LSH index over band keys: members are numbered in the
// order they were added, and a probe returns every member that shares at
// least one band key with the probe's keys. Each band is a sorted array of
// (key, member) pairs with a directory over the keys' top bits, so a probe
// costs about two memory reads per band and the index about 16 bytes per
// member per band. Add members, then Freeze, then probe; a frozen index
// is safe for concurrent probes.
type Index struct {
	bands  int
	n      int32
	keys   [][]uint64
	ids    [][]int32
	tables []keyTable
	frozen bool
}

// NewIndex makes an empty index for signatures of the given number of bands.
func NewIndex(bands int) *Index {
	return &Index{bands: bands, keys: make([][]uint64, bands), ids: make([][]int32, bands)}
}

// Len is the number of members.
func (ix *Index) Len() int { return int(ix.n) }

// Add adds a member with the given band keys (one per band) and returns its
// number. A member without keys (nil) gets a number but is never found.
func (ix *Index) Add(keys []uint64) int32 {
	if ix.frozen {
		panic("minhash: Add after Freeze")
	}
	id := ix.n
	ix.n++
	if keys == nil {
		return id
	}
	if len(keys) != ix.bands {
		panic("minhash: band key count does not match the index")
	}
	for b, k := range keys {
		ix.keys[b] = append(ix.keys[b], k)
		ix.ids[b] = append(ix.ids[b], id)
	}
	return id
}

// Freeze sorts the bands and builds their directories.
func (ix *Index) Freeze() {
	if ix.frozen {
		return
	}
	ix.frozen = true
	ix.tables = make([]keyTable, ix.bands)
	for b := range ix.bands {
		ix.tables[b] = newKeyTable(ix.keys[b], ix.ids[b])
	}
	ix.keys, ix.ids = nil, nil
}

// keyTable is a sorted array of (key, member) pairs with a directory over
// the keys' top bits (about one key per slot), so a lookup costs about two
// memory reads.
type keyTable struct {
	keys  []uint64
	ids   []int32
	dir   []uint32 // dir[p] = first position whose key's top bits are ≥ p
	shift uint
}

// newKeyTable sorts the pairs by key, then member.
func newKeyTable(keys []uint64, ids []int32) keyTable {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		if keys[x] != keys[y] {
			if keys[x] < keys[y] {
				return -1
			}
			return 1
		}
		return int(ids[x] - ids[y])
	})
	t := keyTable{keys: make([]uint64, len(keys)), ids: make([]int32, len(keys))}
	for i, o := range order {
		t.keys[i], t.ids[i] = keys[o], ids[o]
	}
	p := max(bits.Len(uint(len(keys))), 1)
	t.shift = uint(64 - p)
	t.dir = make([]uint32, 1<<p+1)
	pos := 0
	for slot := range t.dir {
		for pos < len(t.keys) && t.keys[pos]>>t.shift < uint64(slot) {
			pos++
		}
		t.dir[slot] = uint32(pos)
	}
	return t
}

// find returns the members stored under key k (a shared slice).
func (t *keyTable) find(k uint64) []int32 {
	slot := k >> t.shift
	lo, hi := int(t.dir[slot]), int(t.dir[slot+1])
	for i := lo; i < hi; i++ {
		if t.keys[i] == k {
			j := i + 1
			for j < hi && t.keys[j] == k {
				j++
			}
			return t.ids[i:j]
		} else if t.keys[i] > k {
			break
		}
	}
	return nil
}

// Probe finds candidates; each goroutine uses its own.
type Probe struct {
	ix   *Index
	seen []uint32 // seen[id] == gen marks id as found in this probe
	gen  uint32
	out  []int32
}

// NewProbe makes a probe of the frozen index.
func (ix *Index) NewProbe() *Probe {
	if !ix.frozen {
		panic("minhash: probe before Freeze")
	}
	return &Probe{ix: ix, seen: make([]uint32, ix.n)}
}

// Candidates returns the distinct members that share a band key with keys,
// in ascending order. The slice is reused by the next call.
func (p *Probe) Candidates(keys []uint64) []int32 {
	p.gen++
	if p.gen == 0 { // wrapped: clear the marks
		clear(p.seen)
		p.gen = 1
	}
	p.out = p.out[:0]
	for b, k := range keys {
		for _, id := range p.ix.tables[b].find(k) {
			if p.seen[id] != p.gen {
				p.seen[id] = p.gen
				p.out = append(p.out, id)
			}
		}
	}
	slices.Sort(p.out)
	return p.out
}
