package artifact

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Freed is what a deletion removed.
type Freed struct {
	// Artifacts is the number of references removed (an artifact of an execution).
	Artifacts int
	// Bytes is the size of the blob files removed.
	Bytes int64
	// Shared is the number of removed references whose blob stays because another execution
	// references it too.
	Shared int
}

// DeleteExecution deletes the execution's artifacts, keeping a tombstone of each (Get then
// wraps ErrDeleted), and removes the blobs no other execution references.
func (d Dir) DeleteExecution(_ context.Context, execution string) (Freed, error) {
	defer d.lock()()
	f, err := d.remove([]string{execution}, true)
	if err != nil {
		return f, fmt.Errorf("delete the artifacts of execution %s: %w", execution, err)
	}
	return f, nil
}

// ForgetExecutions removes every reference and tombstone of the executions, and the blobs no
// other execution references. It also removes blobs that no execution references at all: a
// crash between writing a blob and its reference leaves one, and nothing else would.
func (d Dir) ForgetExecutions(_ context.Context, executions ...string) (Freed, error) {
	if len(executions) == 0 {
		return Freed{}, nil
	}
	defer d.lock()()
	f, err := d.remove(executions, false)
	if err != nil {
		return f, fmt.Errorf("delete artifacts: %w", err)
	}
	return f, nil
}

// remove deletes the references of executions (renaming them to tombstones when keep) and then
// the blobs nobody else references. The caller holds the lock. Which blobs other executions
// reference is read before anything changes: when that read fails, nothing is deleted.
func (d Dir) remove(executions []string, keep bool) (Freed, error) {
	gone := make(map[string]bool, len(executions))
	for _, x := range executions {
		gone[filepath.Base(x)] = true
	}
	used, err := d.referenced(gone)
	if err != nil {
		return Freed{}, err
	}
	var f Freed
	candidates := map[string]bool{}
	for _, x := range executions {
		ents, err := os.ReadDir(d.refs(x))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return f, err
		}
		for _, e := range ents {
			if !isHexID(e.Name()) {
				continue // a tombstone, or not ours
			}
			if keep {
				// The tombstone's time is the deletion's.
				ref := filepath.Join(d.refs(x), e.Name())
				now := time.Now()
				_ = os.Chtimes(ref, now, now)
				if err := os.Rename(ref, ref+tombstoneSuffix); err != nil {
					return f, err
				}
			}
			f.Artifacts++
			if used[e.Name()] {
				f.Shared++
				continue
			}
			candidates[e.Name()] = true
		}
		if !keep {
			if err := os.RemoveAll(d.refs(x)); err != nil {
				return f, err
			}
		}
	}
	if !keep {
		// Blobs without any reference: left by a crash (see ForgetExecutions).
		blobs, err := os.ReadDir(filepath.Join(d.Root, "blobs"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return f, err
		}
		for _, b := range blobs {
			if isHexID(b.Name()) && !used[b.Name()] {
				candidates[b.Name()] = true
			}
			if strings.HasPrefix(b.Name(), tempPrefix) {
				f.Bytes += removeStaleTemp(filepath.Join(d.Root, "blobs", b.Name()), time.Now())
			}
		}
	}
	for h := range candidates {
		info, err := os.Stat(d.blob(h))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return f, err
		}
		if err := os.Remove(d.blob(h)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return f, err
		}
		f.Bytes += info.Size()
	}
	return f, nil
}

// referenced returns the blobs referenced by an execution other than those in except. A
// directory it cannot read is an error: a blob it did not see would be deleted.
func (d Dir) referenced(except map[string]bool) (map[string]bool, error) {
	used := map[string]bool{}
	dirs, err := os.ReadDir(filepath.Join(d.Root, "refs"))
	if errors.Is(err, os.ErrNotExist) {
		return used, nil
	}
	if err != nil {
		return nil, err
	}
	for _, x := range dirs {
		if except[x.Name()] || !x.IsDir() {
			continue
		}
		refs, err := os.ReadDir(filepath.Join(d.Root, "refs", x.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if !strings.HasSuffix(r.Name(), tombstoneSuffix) {
				used[r.Name()] = true
			}
		}
	}
	return used, nil
}

// Add returns the sum of f and g.
func (f Freed) Add(g Freed) Freed {
	return Freed{Artifacts: f.Artifacts + g.Artifacts, Bytes: f.Bytes + g.Bytes, Shared: f.Shared + g.Shared}
}

// staleTemp is the age past which a blob's temporary file is a crash's leftover: Put writes
// one and renames it within the same call, and a write touches its time. Another process
// sharing the home may be writing one right now, so a young one stays.
const staleTemp = time.Hour

// removeStaleTemp removes the temporary file at path if it is older than staleTemp and
// returns its size, or 0. A file that went meanwhile is fine.
func removeStaleTemp(path string, now time.Time) int64 {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() || now.Sub(info.ModTime()) < staleTemp {
		return 0
	}
	if err := os.Remove(path); err != nil {
		return 0
	}
	return info.Size()
}
