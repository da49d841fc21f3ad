package weaviate

import (
	"context"
	"time"
)

// WriteForeignLease sets the collection's ef to ef under a lease of
// another run that puts back restore and expires at expires, as a run on another machine
// would (or one that died holding it).
func WriteForeignLease(ctx context.Context, c *Collection, ef, restore int, expires time.Time) error {
	cls, m, err := c.record(ctx)
	if err != nil {
		return err
	}
	return c.writeEF(ctx, cls, *m, ef, &EFLease{EF: ef, Restore: restore, Owner: "elsewhere pid 1", Expires: expires})
}

// SetEFConfirmWait bounds the wait for every node to apply an ef, until
// the test ends.
func SetEFConfirmWait(t interface{ Cleanup(func()) }, d time.Duration) {
	old := efConfirmWait
	efConfirmWait = d
	t.Cleanup(func() { efConfirmWait = old })
}
