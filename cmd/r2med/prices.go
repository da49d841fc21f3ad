package main

import (
	"fmt"
	"io"

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

func newMeter() *costs.Meter { return &costs.Meter{} }

// printCost prints what the calls a meter heard cost, new and cached,
// in dollars by prices, in total and per query.
func printCost(w io.Writer, m *costs.Meter, queries int, prices costs.Prices) {
	s := m.Summary(queries, prices)
	if s.USD == nil {
		fmt.Fprintf(w, "  cost: no price for %v in the price table\n", s.Unpriced)
		return
	}
	fmt.Fprintf(w, "  cost: $%.6g new, $%.6g of answers from the cache at their cost when made; $%.6g per query\n", *s.USD, *s.CachedUSD, *s.PerQuery.USD)
}
