package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// HomeMode is the mode of $FUSCIA_HOME: the user's alone. The home holds the state store (every
// run's inputs and outputs), the artifacts and the API socket, whose callers may prune history
// and start code: nobody else may list, read or reach anything in it. Because the directory is
// private, the socket inside it cannot be reached by another user even before it is made 0600,
// whatever the process's umask.
const HomeMode fs.FileMode = 0o700

// PrepareHome makes dir the user's private home before anything is written in it:
//
//  1. A missing dir is created (with any missing parents) with mode HomeMode. The umask can
//     only narrow a mode, so the mode is set again after the creation when it is not exactly
//     HomeMode (a umask of 0277 would leave the user unable to write).
//  2. An existing dir must be a directory owned by this process's user (or by anyone when the
//     process runs as root, which can read it anyway): a home another user owns could be read
//     or swapped by them, and the error says so rather than using it.
//  3. An existing dir with a mode other than HomeMode (a home made by an older fuscia, or by
//     hand) is tightened to HomeMode. It reports the mode it found then, so that the caller
//     can say so; 0 when nothing changed.
//
// Commands that only read the home (executions list, show) do not call it: they create nothing.
func PrepareHome(dir string) (tightenedFrom fs.FileMode, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, HomeMode); err != nil {
			return 0, fmt.Errorf("create the fuscia home %s: %w", dir, err)
		}
		if fi, err = os.Stat(dir); err != nil {
			return 0, fmt.Errorf("create the fuscia home %s: %w", dir, err)
		}
		if fi.Mode().Perm() != HomeMode {
			if err := os.Chmod(dir, HomeMode); err != nil {
				return 0, fmt.Errorf("make the fuscia home %s private (mode %04o): %w", dir, HomeMode, err)
			}
		}
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("the fuscia home %s: %w", dir, err)
	case !fi.IsDir():
		return 0, fmt.Errorf("the fuscia home %s is not a directory; use -home or FUSCIA_HOME to name a directory", dir)
	}
	uid, ok := fileUID(fi)
	if !ok {
		// No owners or unix modes here (Windows): the directory's ACL is the user's business.
		return 0, nil
	}
	if uid != os.Geteuid() && os.Geteuid() != 0 {
		return 0, fmt.Errorf("the fuscia home %s belongs to another user (uid %d; you are uid %d): they could read its runs and replace its API socket; use a home of your own with -home or FUSCIA_HOME",
			dir, uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm != HomeMode {
		if err := os.Chmod(dir, HomeMode); err != nil {
			return 0, fmt.Errorf("the fuscia home %s has mode %04o, open to other users, and cannot be made private (%04o): %w; run chmod %o %s",
				dir, perm, HomeMode, err, HomeMode, dir)
		}
		return perm, nil
	}
	return 0, nil
}
