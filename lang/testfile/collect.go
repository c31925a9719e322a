package testfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Collect expands the paths a command is given into test files, as `fuscia validate` expands
// its paths into workflow files: a file is taken as given (whatever its name), a directory
// means every *.fsctest.hcl below it, recursively, skipping hidden directories and
// node_modules. No paths means ".". The result is sorted and without duplicates.
//
// The error names a path that does not exist or cannot be listed, and a directory that holds
// no test file (most likely a mistyped path).
func Collect(paths []string) ([]string, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %s", root, describePathError(err))
		}
		if !info.IsDir() {
			add(filepath.Clean(root))
			continue
		}
		found := 0
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), Ext) {
				found++
				add(filepath.Clean(path))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot list %s: %s", root, describePathError(err))
		}
		if found == 0 {
			return nil, fmt.Errorf("no *%s files in %s", Ext, root)
		}
	}
	slices.Sort(out)
	return out, nil
}

func describePathError(err error) string {
	switch {
	case os.IsNotExist(err):
		return "no such file or directory"
	case os.IsPermission(err):
		return "permission denied"
	}
	return err.Error()
}
