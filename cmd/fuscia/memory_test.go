package main

import (
	"bytes"
	"context"
	"testing"
)

// TestExitOnSignal: a checking command ends with exit code 1 and says why once its context
// ends (the signal), without waiting for an evaluation that does not look at the context; a
// command that returned first is left alone.
func TestExitOnSignal(t *testing.T) {
	var stderr bytes.Buffer
	codes := make(chan int, 1)
	c := &cli{stderr: &stderr, exit: func(code int) { codes <- code }}
	ctx, cancel := context.WithCancel(context.Background())
	c.exitOnSignal(ctx)
	cancel()
	if code := <-codes; code != exitFailed || !bytes.Contains(stderr.Bytes(), []byte("Error: Interrupted")) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if stop := c.exitOnSignal(ctx); !stop() {
		t.Error("stop did not stop the watch")
	}
	cancel()
	select {
	case code := <-codes:
		t.Errorf("exit %d after the command returned", code)
	default:
	}
}
