package addrs_test

import (
	"strings"
	"testing"

	"github.com/fuscia/fuscia/lang/addrs"
)

func mustAddr(t *testing.T, s string) addrs.Node {
	t.Helper()
	a, ok := addrs.ParseNode(s)
	if !ok {
		t.Fatalf("bad address %q in the test", s)
	}
	return a
}

func TestParseNode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want addrs.Node
	}{
		{"task.fetch", addrs.Node{Kind: addrs.KindTask, Name: "fetch"}},
		{"loop.notify", addrs.Node{Kind: addrs.KindLoop, Name: "notify"}},
		{"loop.notify/task.send", addrs.Node{Loop: "notify", Kind: addrs.KindTask, Name: "send"}},
		{"loop.l/join.j_2", addrs.Node{Loop: "l", Kind: addrs.KindJoin, Name: "j_2"}},
		{"wait.ok", addrs.Node{Kind: addrs.KindWait, Name: "ok"}},
		{"call.c-1", addrs.Node{Kind: addrs.KindCall, Name: "c-1"}},
		{"switch.s", addrs.Node{Kind: addrs.KindSwitch, Name: "s"}},
	} {
		got, ok := addrs.ParseNode(tc.in)
		if !ok || got != tc.want || got.String() != tc.in {
			t.Errorf("ParseNode(%q) = %+v, %v; want %+v", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "task", "task.", ".x", "trigger.t", "task.X", "task.1x", "task.x.y",
		"loop.a/loop.b", "task.a/task.b", "loop.a/", "/task.b", "loop.a/task.b/task.c", "task." + strings.Repeat("x", addrs.MaxNameLength+1)} {
		if a, ok := addrs.ParseNode(bad); ok {
			t.Errorf("ParseNode(%q) = %+v; want a refusal", bad, a)
		}
	}
}

func TestNodeParts(t *testing.T) {
	a := mustAddr(t, "loop.notify/task.send")
	if a.Local() != "task.send" || a.LoopAddr() != mustAddr(t, "loop.notify") || a.IsZero() {
		t.Errorf("%s: local %s, loop %s, zero %v", a, a.Local(), a.LoopAddr(), a.IsZero())
	}
	top := mustAddr(t, "task.fetch")
	if top.Local() != "task.fetch" || !top.LoopAddr().IsZero() {
		t.Errorf("%s: local %s, loop %+v", top, top.Local(), top.LoopAddr())
	}
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"a", true}, {"send_all", true}, {"a-1", true}, {strings.Repeat("a", addrs.MaxNameLength), true},
		{"", false}, {"A", false}, {"1a", false}, {"_a", false}, {"a.b", false}, {"a b", false}, {"é", false},
		{strings.Repeat("a", addrs.MaxNameLength+1), false},
	} {
		if got := addrs.ValidName(tc.name); got != tc.want {
			t.Errorf("ValidName(%q) = %v", tc.name, got)
		}
	}
}
