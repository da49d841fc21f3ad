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
	dir    [][]uint32 // dir[b][p] = first position in band b whose key's top bits are ≥ p
	shift  uint
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
	m := 0
	if ix.bands > 0 {
		m = len(ix.keys[0])
	}
	p := max(bits.Len(uint(m)), 1) // about one key per directory slot
	ix.shift = uint(64 - p)
	ix.dir = make([][]uint32, ix.bands)
	for b := range ix.bands {
		keys, ids := ix.keys[b], ix.ids[b]
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
		sk, si := make([]uint64, len(keys)), make([]int32, len(keys))
		for i, o := range order {
			sk[i], si[i] = keys[o], ids[o]
		}
		ix.keys[b], ix.ids[b] = sk, si
		dir := make([]uint32, 1<<p+1)
		pos := 0
		for slot := range dir {
			for pos < len(sk) && sk[pos]>>ix.shift < uint64(slot) {
				pos++
			}
			dir[slot] = uint32(pos)
		}
		ix.dir[b] = dir
	}
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
	ix := p.ix
	p.gen++
	if p.gen == 0 { // wrapped: clear the marks
		clear(p.seen)
		p.gen = 1
	}
	p.out = p.out[:0]
	for b, k := range keys {
		bk, dir := ix.keys[b], ix.dir[b]
		slot := k >> ix.shift
		lo, hi := int(dir[slot]), int(dir[slot+1])
		for i := lo; i < hi; i++ {
			if bk[i] == k {
				if id := ix.ids[b][i]; p.seen[id] != p.gen {
					p.seen[id] = p.gen
					p.out = append(p.out, id)
				}
			} else if bk[i] > k {
				break
			}
		}
	}
	slices.Sort(p.out)
	return p.out
}
