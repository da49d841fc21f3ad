package retrieve

import (
	"strings"
	"testing"
)

// TestRateSaysTokensAreEstimated: the embedding bar's token rate counts
// tokens estimated from the texts' length (the manifest calls them
// estimated_tokens), and says so, where it read as the model's count.
func TestRateSaysTokensAreEstimated(t *testing.T) {
	got := newRate().add(10, 190_000)
	if !strings.Contains(got, " docs/s, ") || !strings.HasSuffix(got, " estimated tokens/s") {
		t.Errorf("rate %q", got)
	}
}
