package funcs

import (
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// TestPurityCoversTable checks that every function of Table has its purity decided: a function
// added without an entry would be taken for impure silently, and one taken for pure by mistake
// would be computed again after a crash with another result.
func TestPurityCoversTable(t *testing.T) {
	for _, name := range Names() {
		if _, ok := purity[name]; !ok {
			t.Errorf("function %s has no entry in purity (purity.go): decide whether it is pure", name)
		}
	}
}

func TestPure(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"upper", true},
		{"jsonencode", true},
		{"uuidv5", true},
		{"formatdate", true},
		{"try", true},
		// Impure: the clock, a random source, the filesystem.
		{"timestamp", false},
		{"plantimestamp", false},
		{"uuid", false},
		{"bcrypt", false},
		{"file", false},
		// Not a function at all: not known to be recomputable.
		{"nosuchfunction", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Pure(tt.name); got != tt.want {
			t.Errorf("Pure(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPureFunctionsRepeat calls every function Pure calls pure twice with the same arguments,
// a moment apart: a function reading the clock or a random source would answer differently.
func TestPureFunctionsRepeat(t *testing.T) {
	samples := []cty.Value{
		cty.StringVal("a-b"),
		cty.NumberIntVal(3),
		cty.True,
		cty.ListVal([]cty.Value{cty.StringVal("x"), cty.StringVal("y")}),
		cty.ObjectVal(map[string]cty.Value{"k": cty.StringVal("v")}),
		cty.StringVal("2026-11-26T10:00:00Z"),
		cty.StringVal("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
	}
	combos := [][]cty.Value{nil}
	for _, a := range samples {
		combos = append(combos, []cty.Value{a})
		for _, b := range samples {
			combos = append(combos, []cty.Value{a, b})
		}
	}
	tbl := Table()
	called := 0
	for _, name := range Names() {
		if !Pure(name) {
			continue
		}
		f := tbl[name]
		for _, args := range combos {
			first, err := f.Call(args)
			if err != nil {
				continue
			}
			time.Sleep(time.Microsecond) // a clock-reading function would see another time
			second, err := f.Call(args)
			if err != nil {
				t.Errorf("%s%#v: first call gave %#v, second failed: %v", name, args, first, err)
				continue
			}
			called++
			if !first.RawEquals(second) {
				t.Errorf("%s%#v is called pure but answered %#v, then %#v", name, args, first, second)
			}
		}
	}
	if called == 0 {
		t.Fatal("no function call succeeded: the samples exercise nothing")
	}
}
