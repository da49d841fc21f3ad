package dataset

import (
	"encoding/json"
	"path/filepath"
)

// EachRow calls fn with every row of one table file — parquet, JSON lines
// or one JSON array, optionally gzipped — in file order, as a map of its
// fields (only those in cols for parquet; nil means all) to their JSON
// values, with the row's 1-based line (JSON) or row number (parquet, line
// 0). It is the table reader the Hub layouts use, for callers that read
// other tables (training sets); errors name the file and line.
func EachRow(path string, cols []string, fn func(row map[string]json.RawMessage, line, rowNum int) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	src, err := osDirSource(dir, "directory", "")
	if err != nil {
		return err
	}
	src.show = func(string) string { return path }
	return src.eachRow(base, cols, func(m map[string]json.RawMessage, at rowAt) error { return fn(m, at.line, at.row) })
}
