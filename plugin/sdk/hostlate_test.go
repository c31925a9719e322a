package sdk

import (
	"context"
	"testing"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// brokerWindow is how long go-plugin's broker (grpc_broker.go, timeoutWait) keeps the address
// the host announced for a broker id before it forgets it, when nothing has dialed the id.
const brokerWindow = 5 * time.Second

// TestHostReachedLateInFirstCall: the host announces Host just before a process's first call,
// and a handler may first need Host long after it starts (a command that runs for a minute
// and then logs). The SDK must connect when the call starts, not when the handler first needs
// Host: by then go-plugin has forgotten the address, and every host request of the process
// waits 5 s for it and fails ("timeout waiting for connection info").
func TestHostReachedLateInFirstCall(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	r := start(t, Plugin{Name: "late", Version: "1.0.0", Tasks: []TaskDef{
		Task("late", func(ctx context.Context, call *Call, _ struct{}) (map[string]any, error) {
			started <- struct{}{}
			<-release
			if err := call.KV().Set(ctx, "k", []byte("late")); err != nil {
				return nil, err
			}
			return map[string]any{}, nil
		}),
	}})
	host := newFakeHost()
	hostID := r.serveHost(host)

	type answer struct {
		resp *pluginv1.ExecuteResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := r.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: "late", Input: []byte(`{}`),
			CallId: "late-call", HostBrokerId: hostID})
		done <- answer{resp, err}
	}()
	select {
	case <-started:
	case a := <-done:
		t.Fatalf("the call returned before its handler ran: %v, %v", a.resp, a.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the handler did not start")
	}
	// Not a synchronisation: the handler must first use Host after go-plugin's window.
	time.Sleep(brokerWindow + time.Second)
	close(release)

	var a answer
	select {
	case a = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not return")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
		t.Fatalf("the handler could not reach Host %s after its call started: %s: %s", brokerWindow+time.Second, a.resp.ErrorKind, a.resp.Message)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if string(host.kv["k"]) != "late" {
		t.Errorf("KV = %q; the handler's KVSet did not reach the host", host.kv)
	}
}
