//go:build !amd64 || purego

package vector

func dotQ16(q []int16, c []int8) int32 { return dotQ16Go(q, c) }
