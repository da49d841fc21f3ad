package onnx

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ExternalData lists the files, relative to the graph's directory, that
// the ONNX model graph in raw keeps its weights in: the "location" of
// every initializer stored outside the graph (onnx.proto's
// TensorProto.external_data), as exporters write models over 2 GB
// (optimum's model.onnx_data, torch.onnx's one file per tensor). ONNX
// Runtime reads them from beside the graph, so they decide the model's
// outputs as much as the graph does. A graph that holds its weights lists
// none. Sorted, each once.
func ExternalData(raw []byte) ([]string, error) {
	var out []string
	// ModelProto.graph = 7; GraphProto.initializer = 5,
	// sparse_initializer = 15 (SparseTensorProto values = 1, indices = 2);
	// TensorProto.external_data = 13 (StringStringEntryProto key = 1,
	// value = 2).
	err := fields(raw, func(num protowire.Number, graph []byte) error {
		if num != 7 {
			return nil
		}
		return fields(graph, func(num protowire.Number, b []byte) error {
			switch num {
			case 5:
				return tensorLocation(b, &out)
			case 15:
				return fields(b, func(num protowire.Number, t []byte) error {
					if num == 1 || num == 2 {
						return tensorLocation(t, &out)
					}
					return nil
				})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the ONNX graph: %w", err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func tensorLocation(tensor []byte, out *[]string) error {
	return fields(tensor, func(num protowire.Number, entry []byte) error {
		if num != 13 {
			return nil
		}
		var key, value string
		if err := fields(entry, func(num protowire.Number, b []byte) error {
			switch num {
			case 1:
				key = string(b)
			case 2:
				value = string(b)
			}
			return nil
		}); err != nil {
			return err
		}
		if key == "location" {
			loc := path.Clean(strings.ReplaceAll(value, "\\", "/"))
			if loc == "." || path.IsAbs(loc) || loc == ".." || strings.HasPrefix(loc, "../") {
				return fmt.Errorf("external data location %q is not a file beside the graph", value)
			}
			*out = append(*out, loc)
		}
		return nil
	})
}

// fields calls fn with each length-delimited field of the message b,
// skipping the others.
func fields(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if err := fn(num, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
