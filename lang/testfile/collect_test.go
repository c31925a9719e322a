package testfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCollect(t *testing.T) {
	root := t.TempDir()
	write := func(rel string) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("run \"a\" {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, rel := range []string{
		"b.fsctest.hcl", "a.fsctest.hcl", "a.fsc.hcl", "notes.txt",
		"sub/deep/c.fsctest.hcl", "sub/d.fsctest.hcl",
		".hidden/e.fsctest.hcl", "sub/.git/f.fsctest.hcl", "node_modules/g.fsctest.hcl", "sub/node_modules/h.fsctest.hcl",
		"empty/w.fsc.hcl", "odd-name.hcl",
	} {
		write(rel)
	}
	at := func(rels ...string) []string {
		out := make([]string, len(rels))
		for i, r := range rels {
			out[i] = filepath.Join(root, filepath.FromSlash(r))
		}
		return out
	}
	cases := []struct {
		name  string
		paths []string
		want  []string
		err   string // part of the error; "" for none
	}{
		{name: "directory, recursive, skipping hidden and node_modules", paths: at(""),
			want: at("a.fsctest.hcl", "b.fsctest.hcl", "sub/d.fsctest.hcl", "sub/deep/c.fsctest.hcl")},
		{name: "a file is taken as given, whatever its name", paths: at("odd-name.hcl", "b.fsctest.hcl"),
			want: at("b.fsctest.hcl", "odd-name.hcl")},
		{name: "a hidden directory given explicitly is searched", paths: at(".hidden"), want: at(".hidden/e.fsctest.hcl")},
		{name: "duplicates once, sorted", paths: at("sub", "sub/d.fsctest.hcl", "sub/deep/"),
			want: at("sub/d.fsctest.hcl", "sub/deep/c.fsctest.hcl")},
		{name: "missing path", paths: at("nope"), err: filepath.Join(root, "nope") + ": no such file or directory"},
		{name: "directory without test files", paths: at("empty"), err: "no *.fsctest.hcl files in " + filepath.Join(root, "empty")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Collect(tc.paths)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Collect = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCollectDefault: no paths means the current directory.
func TestCollectDefault(t *testing.T) {
	t.Chdir("testdata/valid")
	got, err := Collect(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"orders.fsctest.hcl"}; !slices.Equal(got, want) {
		t.Errorf("Collect(nil) = %q, want %q", got, want)
	}
}
