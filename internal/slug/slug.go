// Package slug makes names into file and folder names that read the same
// everywhere: ASCII letters, digits, "." and "-" kept, every other run of
// characters one "-" ("hyde/gpt4 → bm25" → "hyde-gpt4-bm25").
package slug

import "strings"

// Make is name as a slug; leading and trailing runs are dropped.
func Make(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}
