package cache

import (
	"fmt"
	"slices"
	"sync"

	"github.com/r2med/r2med/usage"
)

// A UsageDecoder reads what making one entry cost from its value (the
// value as stored, without the cache's header): the usage recorded with
// it, and false when the entry records none (written before its package
// recorded usage) or cannot be read.
type UsageDecoder func(val []byte) (usage.Usage, bool)

var (
	decodersMu sync.RWMutex
	decoders   = map[string]UsageDecoder{}
)

// RegisterUsage makes Stats sum the usage of kind's entries with d. The
// package that writes a kind registers it when imported (as database/sql
// drivers register), so the cache needs no knowledge of their formats. A
// kind registered twice panics.
func RegisterUsage(kind string, d UsageDecoder) {
	decodersMu.Lock()
	defer decodersMu.Unlock()
	if _, dup := decoders[kind]; dup || d == nil {
		panic(fmt.Sprintf("cache: RegisterUsage(%q) called twice, or with nil", kind))
	}
	decoders[kind] = d
}

func usageDecoder(kind string) UsageDecoder {
	decodersMu.RLock()
	defer decodersMu.RUnlock()
	return decoders[kind]
}

// bucketUsage sums entries' usage into a BucketStats.
type bucketUsage struct {
	st     *BucketStats
	decode UsageDecoder
}

func (b bucketUsage) add(val []byte) {
	if b.decode == nil {
		return
	}
	u, ok := b.decode(val)
	if !ok {
		b.st.NoUsage++
		return
	}
	b.st.Usage.Add(u)
	if u.Model != "" && u.Model != b.st.Label && !slices.Contains(b.st.Served, u.Model) {
		b.st.Served = append(b.st.Served, u.Model)
		slices.Sort(b.st.Served)
	}
}
