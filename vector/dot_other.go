//go:build !amd64 || purego

package vector

func dotInt8(a, b []int8) int32 { return dotInt8Go(a, b) }
