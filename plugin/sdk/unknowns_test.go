package sdk

import (
	"slices"
	"testing"
)

func TestUnknowns(t *testing.T) {
	tests := []struct {
		unknown     []string
		pointer     string
		has, within bool
	}{
		{nil, "", false, false},
		{nil, "/a", false, false},
		{[]string{"/a"}, "/a", true, true},
		{[]string{"/a"}, "/a/b", false, true}, // inside an unknown value
		{[]string{"/a/b"}, "/a", false, true}, // has an unknown part
		{[]string{"/a/b"}, "", false, true},   // the whole document has an unknown part
		{[]string{""}, "/x/y", false, true},   // the whole document is unknown
		{[]string{"/a"}, "/ab", false, false}, // a prefix of the name is not a parent
		{[]string{"/ab"}, "/a", false, false},
		{[]string{"/args/0"}, "/args/1", false, false},
		{[]string{"/args/0", "/env/A"}, "/env", false, true},
		{[]string{"/a~1b"}, "/a~1b", true, true},
	}
	for _, tt := range tests {
		u := NewUnknowns(tt.unknown...)
		if got := u.Has(tt.pointer); got != tt.has {
			t.Errorf("%q.Has(%q) = %v, want %v", tt.unknown, tt.pointer, got, tt.has)
		}
		if got := u.Within(tt.pointer); got != tt.within {
			t.Errorf("%q.Within(%q) = %v, want %v", tt.unknown, tt.pointer, got, tt.within)
		}
	}
	u := NewUnknowns("/b", "/a")
	if u.Len() != 2 || !slices.Equal(u.Pointers(), []string{"/a", "/b"}) {
		t.Errorf("Len, Pointers = %d, %q", u.Len(), u.Pointers())
	}
	var zero Unknowns
	if zero.Has("") || zero.Within("") || zero.Len() != 0 || len(zero.Pointers()) != 0 {
		t.Error("the zero Unknowns is not empty")
	}
}
