package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestBarsDrawOnlyWhenEnabled(t *testing.T) {
	var on, off bytes.Buffer
	for _, f := range []Factory{{Out: &on, Enabled: true}, {Out: &off}} {
		b := f.New(10, "indexing demo")
		b.Add(10)
		b.Done()
		by := f.Bytes(2048, "corpus.jsonl")
		by.Add(2048)
		by.Done()
	}
	if off.Len() != 0 {
		t.Fatalf("a disabled factory wrote %q", off.String())
	}
	out := on.String()
	for _, want := range []string{"indexing demo", "(0/10)", "corpus.jsonl", "2.0 kB"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
}

func TestNilAndZeroBarsAreSilent(t *testing.T) {
	var b *Bar
	b.Add(1)
	b.Done()
	(&Bar{}).Add(1)
	if f := Auto(true); f.Enabled {
		t.Fatal("quiet factory is enabled")
	}
}
