package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schedule"
)

// loaded is one version of a workflow file that serve runs: its program and its triggers.
type loaded struct {
	file string
	prog *engine.Program
	hash [sha256.Size]byte
	stat fileStamp

	// called are the files prog's calls were made from (engine.Program.Called): a change to
	// one loads file again. Only the watcher's goroutine touches them.
	called []calledFile

	cancel context.CancelFunc // stops the schedule and poll goroutines
	wg     sync.WaitGroup
}

// calledFile is a file a loaded version's calls were made from.
type calledFile struct {
	path string
	sum  [sha256.Size]byte // of the content the version was made from
	stat fileStamp         // at the last look, taken before it read the file
	seen bool              // whether a look has been
}

// calledChanged says whether a file l's calls were made from holds other content than l was
// made from (or is gone, or was missing and is there now). A file whose stamp did not move
// since the last look is not read again; so once a reload for a changed file failed (it keeps
// the previous version running), that file is not tried again until it changes again, as for
// the workflow's own file.
func calledChanged(l *loaded) bool {
	changed := false
	for i := range l.called {
		c := &l.called[i]
		st, err := stampOf(c.path)
		if err != nil {
			st = fileStamp{} // gone: a stamp no file has
		}
		if c.seen && st == c.stat {
			continue
		}
		c.stat, c.seen = st, true
		data, diags := lang.ReadFile(c.path)
		if diags.HasErrors() {
			changed = changed || c.sum != [sha256.Size]byte{} // unreadable then is no change
		} else if sha256.Sum256(data) != c.sum {
			changed = true
		}
	}
	return changed
}

// addCalled adds to list the files of sums (engine.Program.Called, LoadError.Called) that it
// does not hold yet.
func addCalled(list []calledFile, sums map[string][sha256.Size]byte) []calledFile {
	have := make(map[string]bool, len(list))
	for _, c := range list {
		have[c.path] = true
	}
	for path, sum := range sums {
		if !have[path] {
			list = append(list, calledFile{path: path, sum: sum})
		}
	}
	return list
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func (l *loaded) stopTriggers() {
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
}

// workflowFiles expands the paths given to serve: a directory means every *.fsc.hcl under it.
func workflowFiles(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("workflow path %s: %w", p, err)
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".fsc.hcl") {
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the workflow directory %s: %w", p, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

func stampOf(file string) (fileStamp, error) {
	st, err := os.Stat(file)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: st.ModTime(), size: st.Size()}, nil
}

// loadFile loads (or reloads) file. A file that fails keeps its previous version running;
// the diagnostics are logged. calledChanged: a file its calls were made from changed, so an
// unchanged file is loaded again too.
func (s *Server) loadFile(ctx context.Context, file string, first, calledChanged bool) {
	stamp, err := stampOf(file)
	if err != nil {
		s.logger.Error("cannot read a workflow file", "file", file, "error", err)
		s.noteLoadError(file, err)
		return
	}
	// As the parser reads it: a pipe, a device or a file over the size limit is refused, never
	// waited on or read whole (a FIFO in the directory held serve's start and shutdown; a link
	// to /dev/zero read until the process died).
	data, diags := lang.ReadFile(file)
	if diags.HasErrors() {
		err := errors.New(diags.Error())
		s.logger.Error("cannot read a workflow file", "file", file, "error", err)
		s.noteLoadError(file, err)
		// Remembered like a broken edit, so that it is not read again every second.
		s.mu.Lock()
		if old := s.files[file]; old != nil {
			old.stat = stamp
		} else {
			s.files[file] = &loaded{file: file, stat: stamp}
		}
		s.mu.Unlock()
		return
	}
	hash := sha256.Sum256(data)
	s.mu.Lock()
	old := s.files[file]
	s.mu.Unlock()
	if old != nil && bytes.Equal(old.hash[:], hash[:]) && !calledChanged {
		old.stat = stamp
		if old.prog != nil {
			// Back to the version that runs (a broken edit undone): its error is gone.
			s.mu.Lock()
			s.clearLoadErrorLocked(file)
			s.mu.Unlock()
		}
		return
	}
	prog, err := s.cfg.Load(ctx, file, data)
	if err != nil && ctx.Err() != nil {
		// Stopped by serve's own shutdown: not the file's fault, and nothing to remember.
		s.logger.Debug("loading a workflow file stopped", "file", file, "error", err)
		return
	}
	if err != nil {
		if old != nil {
			s.logger.Error("the changed workflow has errors; the previous version keeps running", "file", file, "diagnostics", err.Error())
		} else {
			s.logger.Error("the workflow has errors and is not served", "file", file, "diagnostics", err.Error())
		}
		s.noteLoadError(file, err)
		// Remember the stamp so that the same broken edit is not reloaded every second; and
		// the files its calls name, so that it is loaded again when one of them changes (a
		// called file fixed, or a missing one created).
		var le *LoadError
		errors.As(err, &le)
		s.mu.Lock()
		if old != nil {
			old.stat = stamp
			if le != nil {
				old.called = addCalled(old.called, le.Called)
			}
		} else {
			l := &loaded{file: file, stat: stamp, hash: hash}
			if le != nil {
				l.called = addCalled(nil, le.Called)
			}
			s.files[file] = l
		}
		s.mu.Unlock()
		return
	}
	l := &loaded{file: file, prog: prog, hash: hash, stat: stamp, called: addCalled(nil, prog.Called)}
	w := prog.Workflow
	s.mu.Lock()
	// moved: the workflow's version from a file that is gone (renamed to this one). This file
	// takes its place and its webhook paths at once, rather than after the watcher's second
	// look unloads it: in between those paths would answer 404.
	var moved *loaded
	if other := s.workflows[w.Name]; other != nil && other.file != file {
		if !gone(other.file) {
			s.refusedLocked(file, old, stamp, hash, l.called)
			s.mu.Unlock()
			s.logger.Error("two files declare the same workflow; the second is not served", "workflow", w.Name, "file", file, "first", other.file)
			s.noteLoadError(file, fmt.Errorf("workflow %q is declared by %s too; this file is not served: rename one of them", w.Name, other.file))
			return
		}
		moved = other
	}
	if problems := s.hookConflictsLocked(l, moved); len(problems) > 0 {
		s.refusedLocked(file, old, stamp, hash, l.called)
		s.mu.Unlock()
		for _, p := range problems {
			s.logger.Error("webhook path conflict; the workflow is not (re)loaded", "file", file, "problem", p)
		}
		s.noteLoadError(file, fmt.Errorf("webhook path conflict; the workflow is not (re)loaded: %s", strings.Join(problems, "; ")))
		return
	}
	if old != nil && old.prog != nil && old.prog.Workflow.Name != w.Name {
		delete(s.workflows, old.prog.Workflow.Name)
	}
	if moved != nil {
		delete(s.files, moved.file)
	}
	s.files[file] = l
	s.workflows[w.Name] = l
	s.clearLoadErrorLocked(file)
	delete(s.conflicted, file)
	s.retryConflictedLocked()
	s.routeHooksLocked(l, old, moved)
	s.mu.Unlock()
	s.gateOf(w.Name).setLimit(w.Settings.MaxConcurrentRuns)
	for _, o := range []*loaded{old, moved} {
		if o != nil {
			o.stopTriggers()
		}
	}
	s.startTriggers(l)
	switch {
	case moved != nil:
		s.logger.Info("workflow reloaded from another file", "file", file, "previous_file", moved.file, "workflow", w.Name, "triggers", triggerList(w))
	case calledChanged && old != nil && old.prog != nil:
		s.logger.Info("workflow reloaded: a file it calls changed", "file", file, "workflow", w.Name, "triggers", triggerList(w))
	case !first && old != nil && old.prog != nil:
		s.logger.Info("workflow reloaded", "file", file, "workflow", w.Name, "triggers", triggerList(w))
	default:
		s.logger.Info("workflow loaded", "file", file, "workflow", w.Name, "triggers", triggerList(w))
	}
}

// refusedLocked remembers file, refused because of another file (the same workflow name, a
// webhook path), like a file with errors: its stamp, so that it is not loaded again at every
// look (and its refusal logged each second) until it changes; and as one to try again when
// another file was loaded or unloaded (look), which may have ended the conflict.
func (s *Server) refusedLocked(file string, old *loaded, stamp fileStamp, hash [sha256.Size]byte, called []calledFile) {
	if old != nil {
		old.stat = stamp
	} else {
		s.files[file] = &loaded{file: file, stat: stamp, hash: hash, called: called}
	}
	s.conflicted[file] = true
}

// retryConflictedLocked makes the next look load the files refused because of another file
// again (refusedLocked): the files they conflicted with changed.
func (s *Server) retryConflictedLocked() {
	for file := range s.conflicted {
		if l := s.files[file]; l != nil {
			l.stat = fileStamp{}
			l.hash = [sha256.Size]byte{}
		}
		delete(s.conflicted, file)
	}
}

// gone reports whether file no longer exists.
func gone(file string) bool {
	_, err := os.Stat(file)
	return errors.Is(err, fs.ErrNotExist)
}

func triggerList(w *lang.Workflow) string {
	parts := make([]string, 0, len(w.Triggers))
	for _, t := range w.Triggers {
		parts = append(parts, t.Type+"."+t.Name)
	}
	return strings.Join(parts, ", ")
}

// unloadFile stops serving a file that was removed.
func (s *Server) unloadFile(file string) {
	s.mu.Lock()
	l := s.files[file]
	delete(s.files, file)
	s.clearLoadErrorLocked(file)
	delete(s.conflicted, file)
	s.retryConflictedLocked()
	if l != nil && l.prog != nil {
		if s.workflows[l.prog.Workflow.Name] == l {
			delete(s.workflows, l.prog.Workflow.Name)
		}
		s.routeHooksLocked(nil, l)
	}
	s.mu.Unlock()
	if l != nil {
		l.stopTriggers()
		s.logger.Info("workflow file removed; its triggers stopped", "file", file)
	}
}

// watch looks at the files every ReloadInterval and reloads what changed.
func (s *Server) watch() {
	t := time.NewTicker(s.cfg.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.look()
	}
}

// look is one look of the watcher at the files: new and changed files are loaded; a file gone
// at two looks in a row is unloaded. A tool that replaces a file by deleting and re-creating
// it (git checkout, some editors) leaves it gone for a moment, and a look in that moment must
// not take its webhooks away (they would answer 404 until the next look). Only the watcher
// goroutine calls it.
func (s *Server) look() {
	files, err := workflowFiles(s.cfg.Paths)
	if err != nil {
		s.logger.Warn("cannot list the workflow files", "error", err)
		return
	}
	present := map[string]bool{}
	defer s.forgetLoadErrorsExcept(present)
	for _, f := range files {
		present[f] = true
	}
	s.mu.Lock()
	for f := range s.files {
		if !present[f] {
			// A file is gone (or renamed): a file refused for a conflict with it may take its
			// place at once, as a renamed file does.
			s.retryConflictedLocked()
			break
		}
	}
	s.mu.Unlock()
	for _, f := range files {
		stamp, err := stampOf(f)
		if err != nil {
			continue
		}
		s.mu.Lock()
		l := s.files[f]
		s.mu.Unlock()
		switch {
		case l == nil || l.stat != stamp:
			s.loadFile(s.ctx, f, false, false)
		case calledChanged(l):
			s.loadFile(s.ctx, f, false, true)
		}
	}
	s.mu.Lock()
	var missing []string
	for f := range s.files {
		if !present[f] {
			missing = append(missing, f)
		}
	}
	s.mu.Unlock()
	sort.Strings(missing)
	now := map[string]bool{}
	for _, f := range missing {
		if !s.missing[f] {
			now[f] = true
			s.logger.Info("workflow file gone; its triggers stop if it is still gone at the next look", "file", f)
			continue
		}
		s.unloadFile(f)
	}
	s.missing = now
}

// startTriggers starts l's schedule and poll goroutines (webhooks are routes).
func (s *Server) startTriggers(l *loaded) {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	l.cancel = cancel
	for _, t := range l.prog.Workflow.Triggers {
		switch t.Type {
		case lang.TriggerSchedule:
			sch, err := schedule.Parse(t.Cron, t.Timezone)
			if err != nil {
				s.logger.Error("schedule not started", "workflow", l.prog.Workflow.Name, "trigger", t.Name, "error", err)
				continue
			}
			l.wg.Add(1)
			go func() { defer l.wg.Done(); s.runSchedule(ctx, l, t, sch) }()
		case lang.TriggerPoll:
			l.wg.Add(1)
			go func() { defer l.wg.Done(); s.runPoll(ctx, l, t) }()
		}
	}
}
