package hostabi

import (
	"os"
	"syscall"
)

// sysStamp returns the device, inode and change time of fi.
func sysStamp(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return uint64(st.Dev), st.Ino, st.Ctim.Nano()
}
