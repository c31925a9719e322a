package natstest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestStartWith: the options StartWith changes hold for every start, Restart included.
func TestStartWith(t *testing.T) {
	const max = 64 << 10
	s := StartWith(t, func(o *server.Options) { o.MaxPayload = max })
	if got := Connect(t, s.URL()).MaxPayload(); got != max {
		t.Fatalf("max_payload = %d, want %d", got, max)
	}
	s.Restart(t)
	if got := Connect(t, s.URL()).MaxPayload(); got != max {
		t.Fatalf("after Restart, max_payload = %d, want %d", got, max)
	}
}
