package onnxtest

import "google.golang.org/protobuf/encoding/protowire"

// ExternalGraph is an ONNX ModelProto whose graph holds one 16-byte float
// initializer per location: stored in the file the location names beside
// the graph (onnx.proto's external data, as exporters write models over
// 2 GB), or in the graph itself for "". It is no runnable model: it is
// for what reads a graph's bytes (onnx.ExternalData, models.LocalRevision).
func ExternalGraph(locations ...string) []byte {
	var g []byte
	g = message(g, 2, []byte("main")) // GraphProto.name
	for i, loc := range locations {
		g = message(g, 5, externalTensor(string(rune('a'+i%26)), loc)) // initializer
	}
	m := protowire.AppendTag(nil, 1, protowire.VarintType) // ir_version
	m = protowire.AppendVarint(m, 9)
	m = message(m, 2, []byte("onnxtest")) // producer_name
	return message(m, 7, g)               // graph
}

// message appends field num holding body, length-delimited.
func message(b []byte, num protowire.Number, body []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

// externalTensor is a TensorProto (dims 1, name 8) whose data lies at
// location (external_data 13, data_location 14), or in raw_data (9) for
// "".
func externalTensor(name, location string) []byte {
	t := protowire.AppendTag(nil, 1, protowire.VarintType)
	t = protowire.AppendVarint(t, 4)
	t = message(t, 8, []byte(name))
	if location == "" {
		return message(t, 9, make([]byte, 16))
	}
	for _, kv := range [][2]string{{"location", location}, {"offset", "0"}, {"length", "16"}} {
		t = message(t, 13, message(message(nil, 1, []byte(kv[0])), 2, []byte(kv[1])))
	}
	t = protowire.AppendTag(t, 14, protowire.VarintType)
	return protowire.AppendVarint(t, 1) // EXTERNAL
}
