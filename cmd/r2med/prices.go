package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	// Imported under another name: package main has a func usage.
	costs "github.com/r2med/r2med/usage"
)

// callFlags are --replay and --prices of the commands that call model
// servers.
type callFlags struct {
	replay bool
	prices string
}

// add defines --replay, and --prices unless pricesUsage is empty.
func (c *callFlags) add(f *pflag.FlagSet, replayUsage, pricesUsage string) {
	f.BoolVar(&c.replay, "replay", false, replayUsage)
	if pricesUsage != "" {
		f.StringVar(&c.prices, "prices", "", pricesUsage)
	}
}

// read checks the flags against --no-cache and reads the price table.
func (c callFlags) read(noCache bool) (costs.Prices, error) {
	if c.replay && noCache {
		return nil, errors.New("--replay answers from the cache; drop --no-cache")
	}
	return readPrices(c.prices)
}

// readPrices reads --prices FILE; no file means no table.
func readPrices(path string) (costs.Prices, error) {
	if path == "" {
		return nil, nil
	}
	return costs.ReadPrices(path)
}

func newMeter() *costs.Meter { return &costs.Meter{} }

// printCost prints what a usage summary's calls cost, new and cached, in
// dollars by its price table, in total and per query; nothing without a
// table.
func printCost(w io.Writer, s costs.Summary) {
	if line := s.CostText(); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// printUsage prints a usage summary's calls (new and from the cache, with
// their tokens) and their cost.
func printUsage(w io.Writer, s costs.Summary) {
	fmt.Fprintf(w, "  %s\n", s.CallsText())
	printCost(w, s)
}
