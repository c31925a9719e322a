package hostabi

import (
	"fmt"
	"os"
	"time"
)

// fileStamp is what a stat says about a file: enough to tell, without reading it, that a
// component.wasm is the file that was hashed before. Rewriting the file in place changes its
// change time (which, unlike the modification time, a user cannot set back); replacing it
// changes its inode. The zero fileStamp stands for "not to be trusted": it never equals a
// stat's.
type fileStamp struct {
	size  int64
	mtime time.Time
	ctime int64 // nanoseconds; 0 where the platform does not say (filestamp_other.go)
	dev   uint64
	ino   uint64
}

// stampSettle is how old a file's times must be, when it is stated, for its stamp to be
// trusted. File systems keep times at a coarse grain (a kernel tick, or 1 to 2 seconds on some
// file systems): a file written in the same tick as the stat, then rewritten in place within
// that tick with the same size, would keep its times. Once its times are older than the grain,
// any later write gives it later ones. As git does with its racily clean index entries, a
// younger file is hashed again at every check until it settles.
const stampSettle = 2 * time.Second

// stampOf stats path, at now. A file that is not a regular file is an error. The stamp of a
// file whose times are younger than stampSettle is the zero fileStamp.
func stampOf(path string, now time.Time) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileStamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	st.dev, st.ino, st.ctime = sysStamp(fi)
	if !st.settled(now) {
		return fileStamp{}, nil
	}
	return st, nil
}

// settled reports whether the stamp's times are old enough at now to be trusted.
func (s fileStamp) settled(now time.Time) bool {
	limit := now.Add(-stampSettle)
	return s.mtime.Before(limit) && (s.ctime == 0 || s.ctime < limit.UnixNano())
}
