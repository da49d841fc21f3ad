package vector

import (
	"slices"
	"testing"
)

func TestParseVariant(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Variant
		str  string
	}{
		{"float32", Variant{Quant: "float32"}, "float32"},
		{"int8", Variant{Quant: "int8"}, "int8"},
		{"int8,rescore", Variant{Quant: "int8", Rescore: true}, "int8,rescore"},
		{"binary, rescore=10, dim=256", Variant{Quant: "binary", Rescore: true, Oversample: 10, Dim: 256}, "binary,rescore=10,dim=256"},
		{"dim=64", Variant{Quant: "float32", Dim: 64}, "float32,dim=64"},
	} {
		got, err := ParseVariant(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Fatalf("%q: %+v %q %v; want %+v %q", tc.in, got, got.String(), err, tc.want, tc.str)
		}
		if again, err := ParseVariant(got.String()); err != nil || again != got {
			t.Fatalf("%q does not round-trip: %+v %v", got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "int4", "int8,binary", "float32,rescore", "int8,rescore=0.5", "dim=0", "dim=x", "int8,fast"} {
		if _, err := ParseVariant(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// A built variant equals composing the pieces by hand.
func TestVariantBuild(t *testing.T) {
	rows, qs := clustered(3, 600, 10, 30, 48, 0.4)
	f := buildFlat(t, Cosine, rows, seqIDs(len(rows)))
	tr, _ := f.Truncate(24)
	tq, _ := TruncateQueries(qs, 24)
	for _, tc := range []struct {
		v    string
		want func() ([][]Hit, error)
	}{
		{"float32", func() ([][]Hit, error) { return f.Search(qs, 10, SearchOptions{}) }},
		{"float32,dim=24", func() ([][]Hit, error) { return tr.Search(tq, 10, SearchOptions{}) }},
		{"int8", func() ([][]Hit, error) { return NewInt8(f).Search(qs, 10, SearchOptions{}) }},
		{"binary,rescore=3,dim=24", func() ([][]Hit, error) {
			return NewBinary(tr).Search(tq, 10, SearchOptions{Rescore: true, Oversample: 3})
		}},
	} {
		v, err := ParseVariant(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := v.Build(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := idx.Search(qs, 10, SearchOptions{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := tc.want()
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%s: built variant differs from composing it by hand", tc.v)
		}
	}
	if _, err := (Variant{Dim: 49}).Build(f); err == nil {
		t.Fatal("truncation beyond the dimension accepted")
	}
}
