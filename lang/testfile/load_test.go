package testfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/lang"
)

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big"+Ext)
	if err := os.WriteFile(big, []byte(strings.Repeat("#", lang.MaxFileSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, summary, detail string
	}{
		{"missing", filepath.Join(dir, "nope"+Ext), "Cannot read test file", "no such file"},
		{"directory", dir, "Cannot read test file", "is a directory; give a .fsctest.hcl file"},
		{"too large", big, "Test file too large", "1048577 bytes; the limit for one test file is 1048576 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, diags := Load(tc.path)
			if f != nil || len(diags) != 1 || diags[0].Summary != tc.summary || !strings.Contains(diags[0].Detail, tc.detail) {
				t.Fatalf("Load(%s) = %v,\n%s\nwant one %q containing %q", tc.path, f, describe(diags), tc.summary, tc.detail)
			}
			if !strings.Contains(diags[0].Detail, tc.path) {
				t.Errorf("detail %q does not name the file", diags[0].Detail)
			}
		})
	}
}

// TestLoadWithKeepsSource: the parser given to LoadWith holds the file, so the caller can
// render diagnostics with their source lines.
func TestLoadWithKeepsSource(t *testing.T) {
	p := lang.NewParser()
	const file = "testdata/invalid/03-unknown-arguments.fsctest.hcl"
	_, diags := LoadWith(p, file)
	if !diags.HasErrors() {
		t.Fatal("want errors")
	}
	if hf := p.Files()[file]; hf == nil || len(hf.Bytes) == 0 {
		t.Errorf("the parser does not hold %s", file)
	}
}

func TestDefaultWorkflow(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"orders.fsctest.hcl", "orders.fsc.hcl", true},
		{filepath.Join("a", "b", "orders.fsctest.hcl"), filepath.Join("a", "b", "orders.fsc.hcl"), true},
		{"orders.fsc.hcl", "", false},
		{"orders.hcl", "", false},
		{".fsctest.hcl", "", false},
		{filepath.Join("a", ".fsctest.hcl"), "", false},
	}
	for _, tc := range cases {
		got, ok := DefaultWorkflow(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DefaultWorkflow(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIsToken(t *testing.T) {
	for s, want := range map[string]bool{
		"GET": true, "post": true, "M-SEARCH": true, "PROPFIND": true, "X~1": true,
		"": false, "GE T": false, "GET\n": false, "GÉT": false, "(GET)": false, "a/b": false,
	} {
		if got := isToken(s); got != want {
			t.Errorf("isToken(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"output", "error", "shell", "db", "charge", "change", "car", "cab"}
	for name, want := range map[string]string{
		"outptu": "output", "eror": "error", "sh": "", "d": "", "x": "",
		"charg": "charge", "cat": "cab", // two at distance 1: the first in sorted order
		"zzzzzz": "",
	} {
		if got := closest(name, cands); got != want {
			t.Errorf("closest(%q) = %q, want %q", name, got, want)
		}
	}
}
