package sdk

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// TestLogsInResponse: a host that takes a call's lines in its answer gets them there, in the
// order logged, and no Host.Log request for them; one that does not (TestHostCallbacks' "log")
// still gets each through Host.Log.
func TestLogsInResponse(t *testing.T) {
	pr := newProvider(testPlugin(nil, nil))
	pr.logWindow = time.Hour // the call's lines wait for its answer, however slow this machine
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{PluginKey: &clientPlugin{grpcPlugin{provider: pr}}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(PluginKey)
	if err != nil {
		t.Fatal(err)
	}
	r := raw.(*remote)
	host := newFakeHost()
	hostID := r.serveHost(host)

	resp, err := r.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: "host", Input: []byte(`{"op":"log"}`),
		CallId: "batched", HostBrokerId: hostID, LogsInResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range resp.Logs {
		got = append(got, l.Level+" "+l.Message)
	}
	want := []string{"info hello world", "debug 100%", "warn w", "error e", "info direct"}
	if !slices.Equal(got, want) {
		t.Errorf("logs in the answer = %q, want %q", got, want)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.logs) != 0 {
		t.Errorf("Host.Log got %q; the lines belong in the answer", host.logs)
	}
}

// recorder is a logBatch's Host.Log.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) send(level Level, msg string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, string(level)+" "+msg)
	return nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// TestLogBatchWindow: a call still running when the window closes sends what it kept through
// Host.Log, and every later line there, in order; its answer then carries none.
func TestLogBatchWindow(t *testing.T) {
	var rec recorder
	b := newLogBatch(time.Millisecond, time.Time{}, rec.send)
	if err := b.log(LevelInfo, "early"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(rec.got()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the kept line was not sent when the window closed")
		}
		time.Sleep(time.Millisecond)
	}
	if err := b.log(LevelWarn, "late"); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.got(), []string{"info early", "warn late"}; !slices.Equal(got, want) {
		t.Errorf("Host.Log got %q, want %q", got, want)
	}
	if lines := b.take(); len(lines) != 0 {
		t.Errorf("the answer carries %d lines already sent", len(lines))
	}
}

// TestLogBatchLimits: a batch past batchBytes sends what it kept at once, in order; a deadline
// that leaves no time keeps nothing; the answer takes what is kept.
func TestLogBatchLimits(t *testing.T) {
	var rec recorder
	b := newLogBatch(time.Hour, time.Now().Add(time.Hour), rec.send)
	big := strings.Repeat("x", batchBytes/2)
	for _, m := range []string{"1" + big, "2" + big, "3" + big} {
		if err := b.log(LevelInfo, m); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.got()
	if len(got) != 3 || !strings.HasPrefix(got[0], "info 1") || !strings.HasPrefix(got[2], "info 3") {
		t.Errorf("after %d bytes Host.Log got %d lines; want the 3 kept, in order", 3*len(big), len(got))
	}

	var late recorder
	b = newLogBatch(time.Hour, time.Now().Add(-time.Second), late.send)
	_ = b.log(LevelInfo, "past the deadline")
	if got := late.got(); !slices.Equal(got, []string{"info past the deadline"}) || len(b.take()) != 0 {
		t.Errorf("a call past its deadline kept %q for an answer nobody waits for", got)
	}

	var none recorder
	b = newLogBatch(time.Hour, time.Time{}, none.send)
	_ = b.log(LevelDebug, "kept")
	if lines := b.take(); len(lines) != 1 || lines[0].Message != "kept" || lines[0].Level != "debug" {
		t.Errorf("take = %v", lines)
	}
	_ = b.log(LevelInfo, "after the answer")
	if got := none.got(); !slices.Equal(got, []string{"info after the answer"}) {
		t.Errorf("a line after the answer: Host.Log got %q", got)
	}
}
