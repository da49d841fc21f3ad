package retrieve_test

import (
	"testing"

	"github.com/r2med/r2med/analysis"
)

func analyzer(t *testing.T, name string) func(dst []string, text string) []string {
	t.Helper()
	an, err := analysis.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return an.Analyze
}
