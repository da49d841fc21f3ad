package main

import "strings"

func joinNames(names []string) string { return strings.Join(names, ", ") }
