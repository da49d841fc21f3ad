package main

import (
	// Imported under another name: package main has a func usage.
	costs "github.com/r2med/r2med/usage"
)

// readPrices reads --prices FILE; no file means no table.
func readPrices(path string) (costs.Prices, error) {
	if path == "" {
		return nil, nil
	}
	return costs.ReadPrices(path)
}
