package addrs_test

import (
	"strings"
	"testing"

	"github.com/fuscia/fuscia/lang/addrs"
)

// TestInstanceString: the form the journal's task ids have always had (docs/engine.md):
// the node's address, then [i] per index, outermost first.
func TestInstanceString(t *testing.T) {
	for _, tc := range []struct {
		node  string
		index []int
		want  string
	}{
		{"task.fetch", nil, "task.fetch"},
		{"task.fetch", []int{}, "task.fetch"},
		{"task.send_all", []int{3}, "task.send_all[3]"},
		{"loop.notify", []int{0}, "loop.notify[0]"},
		{"loop.notify/task.send", []int{1}, "loop.notify/task.send[1]"},
		{"loop.notify/task.send", []int{1, 2}, "loop.notify/task.send[1][2]"},
		{"loop.l/join.j-2", []int{100000}, "loop.l/join.j-2[100000]"},
		{"wait.ok", nil, "wait.ok"},
	} {
		a := addrs.Instance{Node: mustAddr(t, tc.node), Index: tc.index}
		if got := a.String(); got != tc.want {
			t.Errorf("%s %v: String() = %q; want %q", tc.node, tc.index, got, tc.want)
		}
		back, err := addrs.ParseInstance(tc.want)
		if err != nil || !back.Equal(a) || back.String() != tc.want {
			t.Errorf("ParseInstance(%q) = %+v, %v; want %+v", tc.want, back, err, a)
		}
		made, err := addrs.NewInstance(tc.node, tc.index)
		if err != nil || !made.Equal(a) {
			t.Errorf("NewInstance(%q, %v) = %+v, %v; want %+v", tc.node, tc.index, made, err, a)
		}
	}
}

// TestParseInstanceRejects: malformed text is an error that quotes it and says what is
// wrong, never a partial address.
func TestParseInstanceRejects(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"", "no node address"},
		{"[1]", "no node address"},
		{"task", "not a node address"},
		{"taks.x[1]", `"taks.x" is not a node address`},
		{"task.X", "not a node address"},
		{"loop.a/loop.b[1]", "not a node address"},
		{"task.x/task.y", "not a node address"},
		{"task.x[", `"[" has no closing ']'`},
		{"task.x[1", `"[1" has no closing ']'`},
		{"task.x[1]]", `unexpected "]" after "task.x[1]"`},
		{"task.x[1] ", `unexpected " " after "task.x[1]"`},
		{"task.x[1]x", `unexpected "x"`},
		{"task.x[]", "index []: empty"},
		{"task.x[-1]", "index [-1]: an index is a whole number"},
		{"task.x[+1]", "index [+1]: an index is a whole number"},
		{"task.x[1,2]", "index [1,2]: an index is a whole number"},
		{"task.x[ 1]", "index [ 1]: an index is a whole number"},
		{"task.x[0x1]", "index [0x1]: an index is a whole number"},
		{"task.x[01]", "index [01]: leading zero"},
		{"task.x[1][00]", "index [00]: leading zero"},
		{"task.x[99999999999999999999]", "index [99999999999999999999]: too large"},
	} {
		a, err := addrs.ParseInstance(tc.in)
		if err == nil {
			t.Errorf("ParseInstance(%q) = %+v; want an error", tc.in, a)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `instance address "`+tc.in+`"`) {
			t.Errorf("ParseInstance(%q): %v; want it to quote the input and say %q", tc.in, err, tc.want)
		}
		if !a.Node.IsZero() || a.Index != nil {
			t.Errorf("ParseInstance(%q) returned %+v with its error", tc.in, a)
		}
	}
}

func TestNewInstanceRejects(t *testing.T) {
	for _, tc := range []struct {
		node  string
		index []int
		want  string
	}{
		{"", nil, `instance of "": not a node address`},
		{"task.x[1]", nil, `instance of "task.x[1]": not a node address`},
		{"trigger.t", nil, "not a node address"},
		{"task.x", []int{1, -1}, "instance of task.x: index [1 -1]: an index is 0 or more"},
	} {
		if a, err := addrs.NewInstance(tc.node, tc.index); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewInstance(%q, %v) = %+v, %v; want an error saying %q", tc.node, tc.index, a, err, tc.want)
		}
	}
}

// TestInstanceWithIndex: each result owns its index, so siblings made from one address
// never overwrite each other, however much room the parent's slice has.
func TestInstanceWithIndex(t *testing.T) {
	iter := addrs.Instance{Node: mustAddr(t, "loop.l/task.x"), Index: make([]int, 1, 8)}
	a, b := iter.WithIndex(4), iter.WithIndex(5)
	if a.String() != "loop.l/task.x[0][4]" || b.String() != "loop.l/task.x[0][5]" || iter.String() != "loop.l/task.x[0]" {
		t.Fatalf("WithIndex: %s, %s from %s", a, b, iter)
	}
	top := addrs.Instance{Node: mustAddr(t, "task.x")}
	if got := top.WithIndex(0).String(); got != "task.x[0]" {
		t.Fatalf("WithIndex(0) of task.x = %s", got)
	}
}

func TestInstanceParent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"task.x[3]", "task.x"},
		{"loop.l[1]", "loop.l"},
		{"loop.l/task.y[1]", "loop.l[1]"},
		{"loop.l/task.y[1][2]", "loop.l/task.y[1]"},
		{"task.x", ""},
		{"loop.l/task.y", ""},
	} {
		a, err := addrs.ParseInstance(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := a.Parent()
		if tc.want == "" {
			if ok {
				t.Errorf("Parent(%s) = %s; want none", tc.in, p)
			}
			continue
		}
		if !ok || p.String() != tc.want {
			t.Errorf("Parent(%s) = %s, %v; want %s", tc.in, p, ok, tc.want)
		}
		// The parent shares no room with the child: growing it leaves the child alone.
		_ = p.WithIndex(9)
		if a.String() != tc.in {
			t.Errorf("Parent(%s) changed it to %s", tc.in, a)
		}
	}
}

func TestInstanceEqual(t *testing.T) {
	x := addrs.Instance{Node: mustAddr(t, "task.x"), Index: []int{1}}
	for _, tc := range []struct {
		b    addrs.Instance
		want bool
	}{
		{addrs.Instance{Node: mustAddr(t, "task.x"), Index: []int{1}}, true},
		{addrs.Instance{Node: mustAddr(t, "task.x"), Index: []int{2}}, false},
		{addrs.Instance{Node: mustAddr(t, "task.x")}, false},
		{addrs.Instance{Node: mustAddr(t, "task.y"), Index: []int{1}}, false},
		{addrs.Instance{Node: mustAddr(t, "loop.l/task.x"), Index: []int{1}}, false},
	} {
		if got := x.Equal(tc.b); got != tc.want {
			t.Errorf("%s.Equal(%s) = %v", x, tc.b, got)
		}
	}
	// No index and an empty index are the same instance, as they print the same.
	if !(addrs.Instance{Node: x.Node}).Equal(addrs.Instance{Node: x.Node, Index: []int{}}) {
		t.Error("nil and empty index differ")
	}
}

// FuzzParseInstance: whatever parses prints back as the same text, and parses again to the
// same address; nothing panics.
func FuzzParseInstance(f *testing.F) {
	for _, s := range []string{"task.x", "task.x[0]", "loop.l/task.y[1][22]", "loop.l[3]", "task.x[01]", "task.x[", "[1]", "task.x[1]x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := addrs.ParseInstance(s)
		if err != nil {
			return
		}
		if a.String() != s {
			t.Fatalf("ParseInstance(%q).String() = %q", s, a.String())
		}
		b, err := addrs.ParseInstance(a.String())
		if err != nil || !b.Equal(a) {
			t.Fatalf("parse(String(%+v)) = %+v, %v", a, b, err)
		}
	})
}
