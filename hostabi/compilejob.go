package hostabi

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// CompileToCache does a CompileJob in this process: it compiles the component or module at
// job.WasmPath (checked against job.Digest) with the engine configuration a Host with
// job.CacheDir and job.Fuel has, leaves the compiled code in job.CacheDir, and frees
// everything. It is the other end of Options.CompileElsewhere: `fuscia serve` runs it in a
// short-lived child process (`fuscia internal-compile`), whose exit gives the compiler's memory
// back, and then loads the entry from the cache.
//
// An entry already there is checked and kept. Unlike Load, which carries on when the cache
// cannot be written (the cache only saves time), CompileToCache fails then: the entry is its
// whole point, and the host that asked would otherwise compile again itself.
func CompileToCache(job CompileJob) error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"name", job.Name}, {"wasm path", job.WasmPath}, {"digest", job.Digest}, {"cache directory", job.CacheDir},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("compile job without a %s", strings.Join(missing, ", "))
	}
	// The child's host builds no snapshot behind the job's back: a snapshot is a job of its own.
	h, err := New(Options{CacheDir: job.CacheDir, Fuel: job.Fuel, Snapshots: SnapshotCachedOnly})
	if err != nil {
		return err
	}
	if job.Preinit {
		return errors.Join(h.snapshotToCache(job), h.Close())
	}
	m, err := h.Load(job.Name, job.WasmPath, job.Digest)
	if err != nil {
		return errors.Join(err, h.Close())
	}
	// The same check the asking host's Load makes before it trusts the entry.
	kind := kindModule
	switch {
	case m.IsComponent():
		kind = kindComponent
	case m.plain != nil:
		kind = kindPreinit
	}
	_, err = h.entryFromCache(job.Digest, kind)
	if err != nil {
		err = fmt.Errorf("compile component %s: its compiled code was not left in the cache %s: %w", job.Name, h.cachePath(job.Digest, kind), err)
		return errors.Join(err, h.Close())
	}
	return h.Close()
}

// snapshotToCache does a compile job with Preinit: the snapshot in the cache, or its refusal
// remembered there. It runs in the child, which the host that asked kills to cancel it.
func (h *Host) snapshotToCache(job CompileJob) error {
	m, err := h.takeSnapshot(context.Background(), job.Name, job.WasmPath, job.Digest, nil)
	if err == nil {
		m.mod.Close()
		return nil
	}
	if errors.Is(err, errPreinitRefused) && h.preinitRefused(job.Digest) {
		return nil
	}
	return fmt.Errorf("snapshot component %s: %w", job.Name, err)
}
