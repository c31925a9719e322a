//go:build unix

package local

import (
	"io/fs"
	"syscall"
)

// fileUID is the uid of the user owning the file fi describes.
func fileUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
