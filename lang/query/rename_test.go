package query

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/lang"
)

// apply applies edits to src.
func apply(src []byte, edits []Edit) []byte {
	sorted := append([]Edit(nil), edits...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Range.Start.Byte > sorted[j].Range.Start.Byte })
	out := append([]byte(nil), src...)
	for _, e := range sorted {
		out = append(append(append([]byte(nil), out[:e.Range.Start.Byte]...), e.NewText...), out[e.Range.End.Byte:]...)
	}
	return out
}

// validate loads text as `fuscia validate` does and fails on any error.
func validate(t *testing.T, name string, text []byte) {
	t.Helper()
	p := lang.NewParser()
	p.Sources = map[string][]byte{filepath.Clean(name): text}
	_, diags := p.Load(name, lang.Options{})
	if diags.HasErrors() {
		t.Fatalf("the renamed file does not validate: %s\n%s", diags.Error(), text)
	}
}

func TestFixtureValidates(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	validate(t, "orders.fsc.hcl", src)
}

func TestRename(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	tests := []struct {
		name, needle, newName string
		edits                 int
		// has and hasNot are texts the renamed file must and must not contain.
		has, hasNot []string
	}{
		{name: "node from its label", needle: `task "fe|tch"`, newName: "list_orders", edits: 4,
			has:    []string{`task "list_orders"`, "length(task.list_orders.output.body)", "amount = task.list_orders.output.status", "for_each = task.list_orders.output.body", `"task.fetch is quoted"`, "# task.fetch in a comment"},
			hasNot: []string{`task "fetch"`, "task.fetch.output"}},
		{name: "node from a reference", needle: `length(task.fe|tch.output`, newName: "list_orders", edits: 4,
			has: []string{`task "list_orders"`, "length(task.list_orders.output.body)"}},
		{name: "join branch: after and the keyed output", needle: `task "cha|rge"`, newName: "pay", edits: 5,
			has:    []string{`task "pay"`, "id = task.pay.output.id", "after = [task.pay, task.shape]", "join.done.output.pay.status", "join.done.output.pay.output", "uses   = component.stripe.charge"},
			hasNot: []string{"task.charge", "output.charge"}},
		{name: "loop body node: the loop's default output", needle: `task "noti|fy"`, newName: "tell", edits: 2,
			has: []string{`task "tell"`, "loop.ship.output[0].tell.status"}},
		{name: "switch: branch edges", needle: `switch "ti|er"`, newName: "size", edits: 2,
			has: []string{`switch "size"`, "after  = [switch.size.big]"}},
		{name: "variable", needle: `${var.sh|op}/orders`, newName: "store", edits: 3,
			has: []string{`variable "store"`, "${var.store}/orders", "${var.store}/notify"}},
		{name: "secret", needle: `secret "tok|en"`, newName: "api_key", edits: 2,
			has: []string{`secret "api_key"`, "Bearer ${secret.api_key}"}},
		{name: "component", needle: `component "str|ipe"`, newName: "payments", edits: 2,
			has: []string{`component "payments"`, "uses   = component.payments.charge"}},
		{name: "same name", needle: `task "fe|tch"`, newName: "fetch", edits: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDoc("orders.fsc.hcl", src)
			off := at(t, src, tt.needle)
			if _, ok := PrepareRename(d, off); !ok {
				t.Fatalf("PrepareRename at %q refused", tt.needle)
			}
			edits, err := Rename(d, off, tt.newName)
			if err != nil {
				t.Fatal(err)
			}
			if len(edits) != tt.edits {
				t.Errorf("got %d edits, want %d: %v", len(edits), tt.edits, edits)
			}
			out := apply(src, edits)
			validate(t, "orders.fsc.hcl", out)
			for _, s := range tt.has {
				if !strings.Contains(string(out), s) {
					t.Errorf("the renamed file lacks %q", s)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(string(out), s) {
					t.Errorf("the renamed file still has %q", s)
				}
			}
		})
	}
}

func TestRenameRefused(t *testing.T) {
	src, marks := fixture(t, "orders.fsc.hcl")
	broken, _ := typeAt(t, src, marks, "shape_body", "when = task.")
	tests := []struct {
		name     string
		src      []byte
		file     string
		needle   string
		newName  string
		wantErr  string
		prepared bool // PrepareRename accepts the place
	}{
		{"name taken by another kind of node", src, "orders.fsc.hcl", `task "fe|tch"`, "tier", `the name "tier" is taken: a node (switch.tier; node names are shared by every node kind) is declared at line 59`, true},
		{"name taken by a variable", src, "orders.fsc.hcl", `${var.sh|op}/orders`, "limits", `the name "limits" is taken: a variable is declared at line 18`, true},
		{"invalid name", src, "orders.fsc.hcl", `task "fe|tch"`, "Fetch", `"Fetch" is not a valid name`, true},
		{"dotted name", src, "orders.fsc.hcl", `task "fe|tch"`, "a.b", `"a.b" is not a valid name`, true},
		{"nothing there", src, "orders.fsc.hcl", `"task.fe|tch is quoted"`, "x", "nothing to rename here", false},
		{"a builtin", src, "orders.fsc.hcl", "builtin.ht|tp\n  timeout", "x", "nothing to rename here", false},
		{"an output", src, "orders.fsc.hcl", `output "char|ged"`, "x", "output names are used outside this file", false},
		{"a trigger", src, "orders.fsc.hcl", `"incom|ing"`, "x", "trigger names are used outside this file", false},
		{"syntax errors", broken, "orders.fsc.hcl", `task "fe|tch"`, "x", "the file has syntax errors (line 74: Invalid attribute name)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDoc(tt.file, tt.src)
			off := at(t, tt.src, tt.needle)
			if _, ok := PrepareRename(d, off); ok != tt.prepared {
				t.Errorf("PrepareRename: got %v, want %v", ok, tt.prepared)
			}
			edits, err := Rename(d, off, tt.newName)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got edits %v and error %v, want an error containing %q", edits, err, tt.wantErr)
			}
		})
	}
}
