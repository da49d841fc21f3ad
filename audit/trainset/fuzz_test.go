package trainset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzJSONL reads arbitrary JSON-lines files: no panic, and every error
// names the file (and a line when it is about one).
func FuzzJSONL(f *testing.F) {
	f.Add(`{"query":"q","pos":["p"],"neg":["n"]}` + "\n" + `{"query":"r","pos":[]}`)
	f.Add(`{"anchor":"a","positive":"p","negative_1":"n"}`)
	f.Add(`{"_id":"1","title":"t","text":"x"}` + "\n" + `{"_id":2,"title":null,"text":"y"}`)
	f.Add(`{"text":"\ud800"}` + "\r\n\n" + `[1,2]`)
	f.Add("\ufeff" + `{"id":"x","text":"y"}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := Open(path, Options{})
		if err == nil {
			err = file.Rows(context.Background(), Position{}, func(r Row) error {
				rec, err := file.Decode(r)
				if err == nil && rec.Line < 1 {
					t.Fatalf("record line %d", rec.Line)
				}
				return err
			})
		}
		if err != nil && !strings.HasPrefix(err.Error(), path) {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}
