package llm

import (
	"context"
	"testing"

	"github.com/r2med/r2med/cache"
)

var _ Store = (*cache.Store)(nil)

// With the project's on-disk cache, a rerun in a new process (a reopened
// store) sends nothing, and the answers sit in the model's bucket.
func TestOnDiskCache(t *testing.T) {
	s := newChatServer(t, echo)
	dir := t.TempDir()
	run := func() Response {
		store, err := cache.Open(dir, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		r, err := newClient(t, s, Options{Cache: store}).Chat(context.Background(), Request{Messages: []Message{User("q")}, Seed: Seed(42)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first, second := run(), run()
	if s.calls.Load() != 1 || first.Cached || !second.Cached || second.Content != first.Content {
		t.Fatalf("%d requests; first %+v second %+v", s.calls.Load(), first, second)
	}
	store, err := cache.Open(dir, cache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	stats, err := store.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Name != cache.Bucket(Kind, "test-model") {
		t.Errorf("buckets %+v", stats)
	}
}
