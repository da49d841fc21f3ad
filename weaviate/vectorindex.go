package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weaviate/weaviate/entities/models"
)

// VectorIndex is a collection's vector index as the server reports it:
// what a vector search's answers are worth. A flat index without
// quantization is exact (up to float32 rounding); HNSW, and any index
// that searches quantized vectors, is approximate.
type VectorIndex struct {
	Type     string `json:"type"` // hnsw, flat, dynamic
	Exact    bool   `json:"exact"`
	Distance string `json:"distance,omitempty"`
	// HNSW: the size of the candidate list a search keeps (ef; −1:
	// dynamic, k × DynamicEFFactor within [DynamicEFMin, DynamicEFMax]),
	// never fewer than k; the graph's build-time list (EFConstruction)
	// and degree (MaxConnections). The dynamic bounds are recorded also
	// when a fixed ef leaves them unused.
	EF              int `json:"ef,omitempty"`
	DynamicEFMin    int `json:"dynamic_ef_min,omitempty"`
	DynamicEFMax    int `json:"dynamic_ef_max,omitempty"`
	DynamicEFFactor int `json:"dynamic_ef_factor,omitempty"`
	EFConstruction  int `json:"ef_construction,omitempty"`
	MaxConnections  int `json:"max_connections,omitempty"`
	// Quantization names the compression searched (pq, bq, sq, rq), if
	// any is enabled.
	Quantization string `json:"quantization,omitempty"`
	// Hits is how many hits a run's queries asked for (0: not searched
	// yet): a fixed EF below it searched with that many candidates
	// instead (plan searches a retriever at least 100 deep).
	Hits int `json:"hits,omitempty"`
}

// vectorIndexOf reads the index from a class's configuration.
func vectorIndexOf(cls *models.Class) VectorIndex {
	v := VectorIndex{Type: cls.VectorIndexType}
	var cfg struct {
		Distance        string `json:"distance"`
		EF              *int   `json:"ef"`
		DynamicEFMin    int    `json:"dynamicEfMin"`
		DynamicEFMax    int    `json:"dynamicEfMax"`
		DynamicEFFactor int    `json:"dynamicEfFactor"`
		EFConstruction  int    `json:"efConstruction"`
		MaxConnections  int    `json:"maxConnections"`
		PQ, BQ, SQ, RQ  struct {
			Enabled bool `json:"enabled"`
		}
	}
	b, _ := json.Marshal(cls.VectorIndexConfig)
	_ = json.Unmarshal(b, &cfg)
	v.Distance = cfg.Distance
	for _, q := range []struct {
		name string
		on   bool
	}{{"pq", cfg.PQ.Enabled}, {"bq", cfg.BQ.Enabled}, {"sq", cfg.SQ.Enabled}, {"rq", cfg.RQ.Enabled}} {
		if q.on {
			v.Quantization = q.name
		}
	}
	if v.Type == "hnsw" {
		v.EF = -1
		if cfg.EF != nil {
			v.EF = *cfg.EF
		}
		v.EFConstruction, v.MaxConnections = cfg.EFConstruction, cfg.MaxConnections
		v.DynamicEFMin, v.DynamicEFMax, v.DynamicEFFactor = cfg.DynamicEFMin, cfg.DynamicEFMax, cfg.DynamicEFFactor
	}
	v.Exact = v.Type == "flat" && v.Quantization == ""
	return v
}

// String is the index in a few words: "flat (exact)", "HNSW, ef 64
// (at least k), efConstruction 128, maxConnections 32", "HNSW, dynamic
// ef (8 × k within 100–500), …".
func (v VectorIndex) String() string {
	var b strings.Builder
	switch v.Type {
	case "hnsw":
		b.WriteString("HNSW, ")
		if v.EF < 1 {
			fmt.Fprintf(&b, "dynamic ef (%d × k within %d–%d)", v.DynamicEFFactor, v.DynamicEFMin, v.DynamicEFMax)
		} else {
			fmt.Fprintf(&b, "ef %d (at least k)", v.EF)
		}
		fmt.Fprintf(&b, ", efConstruction %d, maxConnections %d", v.EFConstruction, v.MaxConnections)
	default:
		b.WriteString(v.Type)
	}
	if v.Quantization != "" {
		fmt.Fprintf(&b, ", %s-quantized", v.Quantization)
	}
	if v.Exact {
		b.WriteString(" (exact)")
	}
	return b.String()
}

// brief is the index in fewer words, for a summary line: "HNSW, ef 64",
// "HNSW, dynamic ef 100–500", "flat", "flat, bq-quantized".
func (v VectorIndex) brief() string {
	var b strings.Builder
	switch {
	case v.Type == "hnsw" && v.EF < 1:
		fmt.Fprintf(&b, "HNSW, dynamic ef %d–%d", v.DynamicEFMin, v.DynamicEFMax)
	case v.Type == "hnsw" && v.Hits > v.EF:
		fmt.Fprintf(&b, "HNSW, ef %d, raised to %d by the hits asked", v.EF, v.Hits)
	case v.Type == "hnsw":
		fmt.Fprintf(&b, "HNSW, ef %d", v.EF)
	default:
		b.WriteString(v.Type)
	}
	if v.Quantization != "" {
		fmt.Fprintf(&b, ", %s-quantized", v.Quantization)
	}
	return b.String()
}

// VectorIndex reads the collection's vector index.
func (c *Collection) VectorIndex(ctx context.Context) (VectorIndex, error) {
	cls, err := c.class(ctx)
	if err != nil {
		return VectorIndex{}, err
	}
	return vectorIndexOf(cls), nil
}

// Weaviate's vector search takes no ef of its own (v1.35's gRPC
// NearVector has none): ef is the collection's. A run that wants another
// ef sets the collection's for the time it searches (HoldEF) and puts the
// old one back after; meanwhile r2med's record in the collection's
// description holds a lease saying so, which other r2med runs respect
// (Lease) and which lapses if the run dies without putting ef back: the
// next run that finds it lapsed puts the old ef back (SettleEF).

// EFLease says that an r2med run has set the collection's ef for the time
// it searches.
type EFLease struct {
	EF      int       `json:"ef"`      // the ef set for the run
	Restore int       `json:"restore"` // the collection's ef before the run
	Owner   string    `json:"owner"`   // the run: host, process id
	Expires time.Time `json:"expires"` // renewed while the run lives
}

// Live reports whether the lease's run may still be searching.
func (l *EFLease) Live() bool { return l != nil && time.Now().Before(l.Expires) }

func (l *EFLease) String() string {
	return fmt.Sprintf("ef %d set by r2med run %s (the collection's own ef is %d; the lease runs to %s)", l.EF, l.Owner, l.Restore, l.Expires.Format(time.RFC3339))
}

// leaseTerm is how long a lease lasts unless renewed; it is renewed every
// quarter term.
var leaseTerm = 2 * time.Minute

var owner = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d started %s", host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
})

// Lease returns the live ef lease of another run, if there is one.
func (c *Collection) Lease(ctx context.Context) (*EFLease, error) {
	_, m, err := c.record(ctx)
	if err != nil {
		return nil, err
	}
	if l := m.EFLease; l.Live() && l.Owner != owner() {
		return l, nil
	}
	return nil, nil
}

// CheckLease makes the collection's ef its own before a search whose
// manifest records it: a lapsed lease is settled (SettleEF), and another
// run's live lease is an error saying whose.
func (c *Collection) CheckLease(ctx context.Context) error {
	if _, err := c.SettleEF(ctx); err != nil {
		return err
	}
	l, err := c.Lease(ctx)
	if err == nil && l != nil {
		err = fmt.Errorf("collection %s: %s; wait until it ends (its ef is not the collection's own)", c.cfg.Collection, l)
	}
	return err
}

// SettleEF puts back the ef a run that died left set (its lease lapsed),
// and returns that lease; nil when there was none.
func (c *Collection) SettleEF(ctx context.Context) (*EFLease, error) {
	cls, m, err := c.record(ctx)
	if err != nil {
		return nil, err
	}
	l := m.EFLease
	if l == nil || l.Live() {
		return nil, nil
	}
	if _, err := c.setEF(ctx, cls, *m, l.Restore, nil); err != nil {
		return nil, err
	}
	return l, nil
}

// EFHold is an ef a run has set on a collection for the time it searches
// (HoldEF).
type EFHold struct {
	// Set is the run's ef as the cluster confirmed it.
	Set EFApplied
	// release puts the collection's ef back, once.
	release func() (EFApplied, error)
}

// Release puts the collection's own ef back, as HoldEF found it, and
// waits until every node holding a replica has applied it: what it
// confirmed (nothing, when the lease lapsed and another run put it back).
// It does so once; later calls return the same.
func (h *EFHold) Release() (EFApplied, error) { return h.release() }

// HoldEF sets the collection's HNSW ef to ef until the hold is released,
// and holds a lease on it meanwhile; a collection whose ef is ef already
// is left as it is. Either way it returns only when every node holding a
// replica of the collection has applied ef (EFApplied); a node that does
// not within 30 s fails it, named, and the old ef is put back.
// It fails when another r2med run holds a lease, and on an index other
// than HNSW.
func (c *Collection) HoldEF(ctx context.Context, ef int) (*EFHold, error) {
	if ef < -1 || ef == 0 {
		return nil, fmt.Errorf("ef %d: want −1 (dynamic) or a positive number", ef)
	}
	if _, err := c.SettleEF(ctx); err != nil {
		return nil, err
	}
	cls, m, err := c.record(ctx)
	if err != nil {
		return nil, err
	}
	if l := m.EFLease; l.Live() {
		return nil, fmt.Errorf("collection %s: %s; wait until it ends (its searches would change under yours)", c.cfg.Collection, l)
	}
	vi := vectorIndexOf(cls)
	if vi.Type != "hnsw" {
		return nil, fmt.Errorf("collection %s has a %s vector index; ef applies to hnsw only", c.cfg.Collection, vi.Type)
	}
	if vi.EF == ef {
		// Nothing to set; still, every node must have applied it.
		set, err := c.confirmEF(ctx, ef)
		if err != nil {
			return nil, err
		}
		return &EFHold{Set: set, release: func() (EFApplied, error) { return set, nil }}, nil
	}
	// The nodes that must apply it, read before it is set: the same
	// must apply the old ef put back.
	want, err := c.efNodes(ctx)
	if err != nil {
		return nil, err
	}
	lease := &EFLease{EF: ef, Restore: vi.EF, Owner: owner(), Expires: time.Now().Add(leaseTerm)}
	start := time.Now()
	var set EFApplied
	err = c.writeEF(ctx, cls, *m, ef, lease)
	if err == nil {
		set, err = c.confirmOn(ctx, ef, want, start)
	}
	if err != nil {
		var na *notApplied
		if errors.As(err, &na) {
			// The ef is set where it was applied: put the old one back,
			// which the node that lags applies after the other.
			cls, m, rerr := c.record(ctx)
			if rerr == nil {
				rerr = c.writeEF(ctx, cls, *m, vi.EF, nil)
			}
			if rerr != nil {
				return nil, fmt.Errorf("%w\n(putting the collection's ef %d back failed too: %v)", err, vi.EF, rerr)
			}
			return nil, fmt.Errorf("%w\n(the collection's ef %d is put back)", err, vi.EF)
		}
		return nil, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(leaseTerm / 4)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = c.renew(lease)
			}
		}
	}()
	var (
		once     sync.Once
		restored EFApplied
		rerr     error
	)
	release := func() (EFApplied, error) {
		once.Do(func() {
			close(stop)
			wg.Wait()
			// Put ef back even when the run was interrupted.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute+efConfirmWait)
			defer cancel()
			cls, m, err := c.record(ctx)
			if err != nil {
				rerr = err
				return
			}
			if m.EFLease == nil || m.EFLease.Owner != lease.Owner {
				// Taken over after it lapsed: the taker put ef back
				// (and confirmed it); nothing of this run's to confirm.
				return
			}
			start := time.Now()
			if rerr = c.writeEF(ctx, cls, *m, lease.Restore, nil); rerr == nil {
				restored, rerr = c.confirmOn(ctx, lease.Restore, want, start)
			}
		})
		return restored, rerr
	}
	return &EFHold{Set: set, release: release}, nil
}

// renew extends the lease while it is still this run's.
func (c *Collection) renew(lease *EFLease) error {
	ctx, cancel := context.WithTimeout(context.Background(), leaseTerm/4)
	defer cancel()
	cls, m, err := c.record(ctx)
	if err != nil || m.EFLease == nil || m.EFLease.Owner != lease.Owner {
		return err
	}
	l := *m.EFLease
	l.Expires = time.Now().Add(leaseTerm)
	m.EFLease = &l
	cls.Description = m.description()
	return c.updateClass(ctx, "renew the ef lease on", cls)
}

// writeEF sets the class's ef and its record's lease in one update; the
// nodes apply it one by one after (confirmEF).
func (c *Collection) writeEF(ctx context.Context, cls *models.Class, m Meta, ef int, lease *EFLease) error {
	idx, ok := cls.VectorIndexConfig.(map[string]any)
	if !ok {
		return fmt.Errorf("collection %s: unexpected vector index config %T", c.cfg.Collection, cls.VectorIndexConfig)
	}
	idx["ef"] = ef
	m.EFLease = lease
	cls.Description = m.description()
	if err := c.updateClass(ctx, "set ef of", cls); err != nil {
		return err
	}
	c.meta = &m
	return nil
}

// setEF writes ef (writeEF) and waits until every node holding a replica
// has applied it.
func (c *Collection) setEF(ctx context.Context, cls *models.Class, m Meta, ef int, lease *EFLease) (EFApplied, error) {
	if err := c.writeEF(ctx, cls, m, ef, lease); err != nil {
		return EFApplied{}, err
	}
	return c.confirmEF(ctx, ef)
}
