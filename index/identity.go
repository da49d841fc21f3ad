package index

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest identifies the file's contents without reading them: the sha256
// of its header, which holds the format version, the file size and every
// section's name, length and CRC-32. Two files with the same Digest hold
// the same bytes (short of a CRC-32 collision in the same section), and a
// rebuild from the same contents has the same Digest, whatever its path
// or modification time. Manifests record it for the retrievers that
// search the file.
func (ix *Index) Digest() string {
	last := ix.secs[len(ix.secs)-1] // Write ends the file with it; Open checks the size
	h := sha256.Sum256(encodeHeader(ix.secs, last.off+last.len))
	return hex.EncodeToString(h[:])
}
