package vector

import (
	"fmt"
	"strconv"
	"strings"
)

// Variant names one searchable form of a store, as HAKARI-Bench's
// embedding variants do: Matryoshka truncation, a quantization, and
// whether quantized candidates are rescored with float32 vectors.
type Variant struct {
	// Dim keeps the first Dim components of rows and queries
	// (renormalized under Cosine); 0 keeps all.
	Dim int
	// Quant is "float32" (or empty), "int8" or "binary".
	Quant string
	// Rescore and Oversample are as in SearchOptions; they only apply to
	// int8 and binary.
	Rescore    bool
	Oversample float64
}

// ParseVariant reads a comma-separated variant description, the form
// String writes: "float32", "int8,rescore", "binary,rescore=10,dim=256".
func ParseVariant(s string) (Variant, error) {
	var v Variant
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		key, val, hasVal := strings.Cut(part, "=")
		switch {
		case part == "float32" || part == "int8" || part == "binary":
			if v.Quant != "" {
				return v, fmt.Errorf("vector: variant %q: two quantizations (%s and %s)", s, v.Quant, part)
			}
			v.Quant = part
		case key == "rescore":
			v.Rescore = true
			if hasVal {
				x, err := strconv.ParseFloat(val, 64)
				if err != nil || x < 1 {
					return v, fmt.Errorf("vector: variant %q: rescore=%s: want an oversampling factor ≥ 1", s, val)
				}
				v.Oversample = x
			}
		case key == "dim" && hasVal:
			d, err := strconv.Atoi(val)
			if err != nil || d < 1 {
				return v, fmt.Errorf("vector: variant %q: dim=%s: want a positive integer", s, val)
			}
			v.Dim = d
		default:
			return v, fmt.Errorf("vector: variant %q: unknown part %q (want float32, int8, binary, rescore[=N], dim=N)", s, part)
		}
	}
	if v.Quant == "" {
		v.Quant = "float32"
	}
	return v, v.check()
}

func (v Variant) check() error {
	switch v.Quant {
	case "", "float32", "int8", "binary":
	default:
		return fmt.Errorf("vector: unknown quantization %q (want float32, int8 or binary)", v.Quant)
	}
	if v.Rescore && (v.Quant == "" || v.Quant == "float32") {
		return fmt.Errorf("vector: rescoring applies only to int8 and binary variants")
	}
	if v.Dim < 0 {
		return fmt.Errorf("vector: variant dim %d: want ≥ 0", v.Dim)
	}
	return nil
}

// String writes the variant in the form ParseVariant reads.
func (v Variant) String() string {
	q := v.Quant
	if q == "" {
		q = "float32"
	}
	parts := []string{q}
	if v.Rescore {
		if v.Oversample > 0 {
			parts = append(parts, "rescore="+strconv.FormatFloat(v.Oversample, 'g', -1, 64))
		} else {
			parts = append(parts, "rescore")
		}
	}
	if v.Dim > 0 {
		parts = append(parts, "dim="+strconv.Itoa(v.Dim))
	}
	return strings.Join(parts, ",")
}

// Build returns the variant of f as an Index. Its Search takes full-length
// queries (cutting them to Dim itself) and applies the variant's rescoring
// whatever the options say.
func (v Variant) Build(f *Flat) (Index, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	base := f
	if v.Dim > 0 && v.Dim != f.dim {
		t, err := f.Truncate(v.Dim)
		if err != nil {
			return nil, err
		}
		base = t
	}
	var idx Index = base
	switch v.Quant {
	case "int8":
		idx = NewInt8(base)
	case "binary":
		idx = NewBinary(base)
	}
	return &variantIndex{Index: idx, v: v}, nil
}

type variantIndex struct {
	Index
	v Variant
}

func (x *variantIndex) Search(queries [][]float32, k int, opts SearchOptions) ([][]Hit, error) {
	if x.v.Dim > 0 {
		var err error
		if queries, err = TruncateQueries(queries, x.v.Dim); err != nil {
			return nil, err
		}
	}
	opts.Rescore, opts.Oversample = x.v.Rescore, x.v.Oversample
	return x.Index.Search(queries, k, opts)
}
