package plugin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// brokerWindow is how long go-plugin's broker, in the plugin process, keeps the address Fuscia
// announced for a broker id before it forgets it, when nothing has dialed the id.
const brokerWindow = 5 * time.Second

// TestHostReachableAfterIdleStart: `fuscia serve` starts a workflow's plugins when it loads the
// workflow (Preload asks for their schemas), and the first run may come minutes later. The
// first call's Host requests must still reach Fuscia: Host is announced on the broker when a
// call needs it, not when the process starts, or go-plugin has forgotten the address by then
// and every Host request of the process waits 5 s and fails.
func TestHostReachableAfterIdleStart(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{})
	if _, err := m.Schema(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	// Not a synchronisation: the plugin must sit idle past go-plugin's window.
	time.Sleep(brokerWindow + time.Second)

	kv := &memKV{}
	resp, err := execute(t, context.Background(), m, tg, "greet", `{"name": "Ada"}`, &plugin.CallEnv{KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
		t.Fatalf("greet on a process idle for %s: %s: %s", brokerWindow+time.Second, resp.ErrorKind, resp.Message)
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if got := string(kv.m["greetings"]); got != "1" {
		t.Errorf("greetings = %q; greet's KV requests did not reach the host", got)
	}
	if m.Restarts() != 0 {
		t.Errorf("restarts = %d; the call must run on the process Schema started", m.Restarts())
	}
	if strings.Contains(resp.Message, "timeout") {
		t.Errorf("message %q", resp.Message)
	}
}
