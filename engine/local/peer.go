package local

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"
)

// peerListener serves the API socket to this process's user only. The socket lives in the
// private home (HomeMode) and is made 0600, so another user cannot normally connect at all;
// this is the check that holds when those do not (a home loosened by hand while serve runs, a
// connection made before a chmod): each connection's peer is asked for its uid when accepted
// (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD), and a connection from a uid
// other than the owner's and root's (which can read the store's files anyway) is closed before
// a byte of it is read, and logged. Where the system cannot say who the peer is (peer_other.go)
// every connection is served: the home's mode is then the only guard.
type peerListener struct {
	net.Listener
	uid    int // the owner's effective uid
	logger *slog.Logger
}

// newPeerListener wraps ln, a unix socket listener; logger receives the refusals.
func newPeerListener(ln net.Listener, logger *slog.Logger) *peerListener {
	return &peerListener{Listener: ln, uid: os.Geteuid(), logger: logger}
}

// Accept returns the next connection from an allowed peer; it closes the others without
// returning them, so the HTTP server never sees them.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		switch {
		case errors.Is(err, errNoPeerCredentials):
			return c, nil
		case err != nil:
			l.logger.Warn("refused a connection on the API socket: its peer's uid cannot be read",
				"socket", l.Addr().String(), "error", err)
			_ = c.Close()
		case uid != l.uid && uid != 0:
			l.logger.Warn("refused a connection on the API socket from another user",
				"socket", l.Addr().String(), "peer_uid", uid, "owner_uid", l.uid)
			_ = c.Close()
		default:
			return c, nil
		}
	}
}

// errNoPeerCredentials is peerUID's error on systems that cannot say who a peer is.
var errNoPeerCredentials = errors.New("this system does not report a unix socket peer's credentials")

// peerUID is the effective uid of the process at the other end of unix socket connection c,
// as the kernel recorded it when the peer connected.
func peerUID(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("a %T has no file descriptor", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var uid int
	var uerr error
	if err := raw.Control(func(fd uintptr) { uid, uerr = peerUIDOf(int(fd)) }); err != nil {
		return 0, err
	}
	return uid, uerr
}
