package models

import "testing"

// TestBRIGHTDataNames: the names BRIGHT runs give their data (the short
// and the long setting, tasks.Task.NameIn) select BRIGHT's instructions,
// not the generic one.
func TestBRIGHTDataNames(t *testing.T) {
	m, ok := Lookup("reasonir-8b")
	if !ok {
		t.Fatal("reasonir-8b not in the registry")
	}
	short := m.Instruction("BRIGHT-earth_science")
	if short.Generic || short.Query == "" {
		t.Fatalf("BRIGHT-earth_science: %+v", short)
	}
	for _, name := range []string{"BRIGHT-earth_science-long", "bright-earth-science", "BRIGHT_earth_science"} {
		if got := m.Instruction(name); got != short {
			t.Errorf("%s: %+v, want BRIGHT-earth_science's %+v", name, got, short)
		}
	}
	if bt, ok := BRIGHTTask("BRIGHT-pony-long"); !ok || bt != "pony" {
		t.Errorf("BRIGHTTask(BRIGHT-pony-long) = %q, %v", bt, ok)
	}
}
