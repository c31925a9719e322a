package local

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestInternalError: off the owner's socket (serve's -listen, a webhook) a 500 says what
// failed and a reference the log has, never the error's text (a blob's path, say); on the
// socket the owner is told the error too.
func TestInternalError(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	cause := errors.New("open /home/op/.fuscia/artifacts/ab/cdef: no such file or directory")

	r := httptest.NewRequest("GET", "/v1/executions/x/artifacts/y", nil)
	msg := InternalError(logger, r, "cannot read the artifact", cause)
	_, ref, ok := strings.Cut(msg, "ref=")
	ref = strings.TrimSuffix(ref, ")")
	if !ok || len(ref) != 12 || strings.Contains(msg, "/home/op") || !strings.HasPrefix(msg, "cannot read the artifact") {
		t.Errorf("over HTTP: %q", msg)
	}
	if !strings.Contains(log.String(), "ref="+ref) || !strings.Contains(log.String(), "/home/op/.fuscia/artifacts/ab/cdef") {
		t.Errorf("the log lacks the reference or the error:\n%s", log.String())
	}

	onSocket := r.WithContext(markOwnerSocket(r.Context(), nil))
	if msg := InternalError(logger, onSocket, "cannot read the artifact", cause); msg != "cannot read the artifact: "+cause.Error() {
		t.Errorf("on the owner's socket: %q", msg)
	}
}
