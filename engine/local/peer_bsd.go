//go:build darwin || freebsd

package local

import "golang.org/x/sys/unix"

// peerUIDOf reads the peer's uid with LOCAL_PEERCRED.
func peerUIDOf(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
