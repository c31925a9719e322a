package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
)

// InternalError logs err, which the caller cannot do anything about (a store's read failing, a
// blob missing on disk), with a fresh reference, and returns the message for the answer's body:
// what failed and the reference, not err itself. An error's text can carry what a client must
// not see: a file's absolute path, the store's layout. The operator finds the details in the
// server's log by the reference. A request on the owner's socket (peerListener: the store's own
// user) is told err as well: that caller can read the files anyway, and the CLI prints it.
func InternalError(logger *slog.Logger, r *http.Request, what string, err error, attrs ...any) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on the systems Go supports
	ref := hex.EncodeToString(b[:])
	logger.Error(what, append([]any{"ref", ref, "method", r.Method, "path", r.URL.Path, "error", err}, attrs...)...)
	if onOwnerSocket(r.Context()) {
		return what + ": " + err.Error()
	}
	return what + " (an internal error; the server's log has its details under ref=" + ref + ")"
}

type ownerSocketKey struct{}

// markOwnerSocket is the socket's http.Server ConnContext: its requests come from the owner.
func markOwnerSocket(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, ownerSocketKey{}, true)
}

func onOwnerSocket(ctx context.Context) bool {
	on, _ := ctx.Value(ownerSocketKey{}).(bool)
	return on
}
