package docs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// repo is the set of files a clone of the repository holds: what git tracks, plus new files
// git does not ignore (a page written but not committed yet counts; a build output in bin/
// does not). Paths are slash-separated and relative to root.
type repo struct {
	root  string
	files map[string]bool
	dirs  map[string]bool
}

// skipped are directories never searched, whatever git says: build outputs and dependencies.
func skipped(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" || part == "node_modules" {
			return true
		}
	}
	return rel == "bin" || strings.HasPrefix(rel, "bin/")
}

// loadRepo lists the files of the repository at root, with git when root is a work tree and by
// walking it otherwise (a source tarball). A file git lists but the work tree no longer has is
// left out: it is being deleted.
func loadRepo(root string) (*repo, error) {
	names, err := gitFiles(root)
	if err != nil {
		names, err = walkFiles(root)
		if err != nil {
			return nil, err
		}
	}
	r := &repo{root: root, files: map[string]bool{}, dirs: map[string]bool{".": true}}
	for _, name := range names {
		if skipped(name) {
			continue
		}
		if info, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil || info.IsDir() {
			continue
		}
		r.files[name] = true
		for d := path.Dir(name); d != "." && !r.dirs[d]; d = path.Dir(d) {
			r.dirs[d] = true
		}
	}
	return r, nil
}

// gitFiles is `git ls-files` of the tracked and the untracked-but-not-ignored files.
func gitFiles(root string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		return nil, err
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range bytes.Split(out, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	return names, nil
}

func walkFiles(root string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." && skipped(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			names = append(names, rel)
		}
		return nil
	})
	return names, err
}

// withSuffix lists the repository's files whose names end with one of suffixes, sorted.
func (r *repo) withSuffix(suffixes ...string) []string {
	var out []string
	for name := range r.files {
		for _, s := range suffixes {
			if strings.HasSuffix(name, s) {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// exists reports whether rel (slash-separated, cleaned, relative to the root) is a file or a
// directory of the repository.
func (r *repo) exists(rel string) bool { return r.files[rel] || r.dirs[rel] }

func (r *repo) read(rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	return string(b), err
}

// findRoot is the directory above the test's that holds go.mod: the repository's root.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}
