package plugin_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/syncbuf"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// memKV is an in-memory KV: the journal's KV is tested with Badger in engine/journal; here the
// subject is the Host service round trip.
type memKV struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (k *memKV) Get(_ context.Context, key string) ([]byte, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok, nil
}

func (k *memKV) Set(_ context.Context, key string, v []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string][]byte{}
	}
	k.m[key] = append([]byte(nil), v...)
	return nil
}

func (k *memKV) Delete(_ context.Context, key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, key)
	return nil
}

// greeter copies the example plugin into a directory of the test's, so the process check
// sees only this test's processes.
func greeter(t *testing.T) plugin.Target {
	t.Helper()
	tg := greeterTarget(t)
	t.Cleanup(func() { plugintest.NoneLeft(t, tg.Path) })
	return tg
}

// greeterTarget is the greeter plugin installed in a directory of tb's own, without greeter's
// check that no process of it is left at the end: for benchmarks, and for a test whose plugin
// outlives the test's own process tree.
func greeterTarget(tb testing.TB) plugin.Target {
	tb.Helper()
	bin := plugintest.Build(tb, "examples/plugins/greeter", "greeter")
	path := plugintest.Install(tb, bin, tb.TempDir(), "fuscia-plugin-greeter_v0.1.0")
	d, err := plugin.Digest(path)
	if err != nil {
		tb.Fatal(err)
	}
	return plugin.Target{Name: "greeter", Path: path, Digest: d, Version: "0.1.0"}
}

func target(t *testing.T, path, name, version string) plugin.Target {
	t.Helper()
	d, err := plugin.Digest(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	return plugin.Target{Name: name, Path: path, Digest: d, Version: version}
}

// warm starts tg's process with a call that returns at once.
func warm(t *testing.T, m *plugin.Manager, tg plugin.Target) {
	t.Helper()
	if _, err := execute(t, context.Background(), m, tg, "greet", `{"name": "warm"}`, nil); err != nil {
		t.Fatalf("start the plugin: %v", err)
	}
}

func newManager(t *testing.T, opts plugin.Options) *plugin.Manager {
	t.Helper()
	m := plugin.NewManager(opts)
	t.Cleanup(func() { m.Close() })
	return m
}

func execute(t *testing.T, ctx context.Context, m *plugin.Manager, tg plugin.Target, task, input string, env *plugin.CallEnv) (*pluginv1.ExecuteResponse, error) {
	t.Helper()
	return m.Execute(ctx, tg, plugin.Request{Task: task, Input: []byte(input), Config: []byte("{}"),
		Context: &pluginv1.CallContext{ExecutionId: "x1", Workflow: "wf", Node: "task.a", Attempt: 1}}, env)
}

func TestExecuteSuccessWithHostCallbacks(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{})
	kv := &memKV{}
	var mu sync.Mutex
	var logs []string
	env := &plugin.CallEnv{KV: kv, Log: func(level, msg string) {
		mu.Lock()
		logs = append(logs, level+": "+msg)
		mu.Unlock()
	}}
	for i := 1; i <= 3; i++ {
		resp, err := execute(t, context.Background(), m, tg, "greet", `{"name": "Ada"}`, env)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
			t.Fatalf("type %v, message %q", resp.Type, resp.Message)
		}
		var out struct{ Message string }
		if err := json.Unmarshal(resp.Output, &out); err != nil || !strings.Contains(out.Message, "Ada") {
			t.Fatalf("output %s (%v)", resp.Output, err)
		}
	}
	if len(kv.m) == 0 {
		t.Error("the plugin wrote nothing to the KV through the Host service")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) < 3 {
		t.Errorf("logs through the Host service: %q", logs)
	}
	if m.Restarts() != 0 {
		t.Errorf("restarts = %d; one process must serve every call", m.Restarts())
	}
}

func TestExecuteErrorKinds(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{})
	for _, kind := range []string{"retryable", "fatal", "validation"} {
		resp, err := execute(t, context.Background(), m, tg, "fail", `{"kind": "`+kind+`", "message": "boom"}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Type != pluginv1.ExecuteResponse_TYPE_ERROR || resp.ErrorKind != kind || !strings.Contains(resp.Message, "boom") {
			t.Errorf("%s: got %v %q %q", kind, resp.Type, resp.ErrorKind, resp.Message)
		}
	}
}

func TestCrashIsPluginCrashedAndRestarts(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{})
	kv := &memKV{}
	_, err := execute(t, context.Background(), m, tg, "crash", `{}`, &plugin.CallEnv{KV: kv})
	if plugin.KindOf(err) != plugin.Crashed {
		t.Fatalf("first call: %v (kind %s); want plugin_crashed", err, plugin.KindOf(err))
	}
	if !strings.Contains(err.Error(), `plugin "greeter"`) {
		t.Errorf("the error does not name the plugin: %v", err)
	}
	resp, err := execute(t, context.Background(), m, tg, "crash", `{}`, &plugin.CallEnv{KV: kv})
	if err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
		t.Fatalf("retry on a restarted process: %v %v", resp, err)
	}
	if m.Restarts() != 1 {
		t.Errorf("restarts = %d; want 1", m.Restarts())
	}
}

func TestHangIsKilledAfterGracePeriod(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{GracePeriod: 300 * time.Millisecond})
	// Start the process first: on a loaded machine its start can outlast a short deadline, and
	// a call that never reached the plugin leaves nothing running to kill.
	warm(t, m, tg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := execute(t, ctx, m, tg, "hang", `{"seconds": 3600}`, nil)
	if plugin.KindOf(err) != plugin.Timeout {
		t.Fatalf("got %v (kind %s); want timeout", err, plugin.KindOf(err))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call returned after %s; the deadline was 2s", d)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(plugintest.Running(tg.Path)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the hung plugin is still running long after its grace period")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if m.Restarts() != 1 {
		t.Errorf("restarts = %d; the killed process must be counted", m.Restarts())
	}
}

// TestOtherCallsOfAKilledPlugin: the calls in flight on a process killed for another call's
// hang fail as plugin_crashed (retryable) with that reason, not with whatever the plugin last
// wrote to stderr, which is about something else.
func TestOtherCallsOfAKilledPlugin(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{GracePeriod: 300 * time.Millisecond})
	warm(t, m, tg)
	other := make(chan error, 1)
	hanging := make(chan struct{})
	var once sync.Once
	// The other call is in flight once its line "hanging for 60s" arrives (sent through
	// Host.Log after the SDK kept it 50 ms).
	env := &plugin.CallEnv{Log: func(string, string) { once.Do(func() { close(hanging) }) }}
	go func() {
		_, err := execute(t, context.Background(), m, tg, "hang", `{"seconds": 60}`, env)
		other <- err
	}()
	select {
	case <-hanging:
	case <-time.After(30 * time.Second):
		t.Fatal("the other call did not start within 30 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := execute(t, ctx, m, tg, "hang", `{"seconds": 3600}`, nil); plugin.KindOf(err) != plugin.Timeout {
		t.Fatalf("got %v; want timeout", err)
	}
	select {
	case err := <-other:
		if plugin.KindOf(err) != plugin.Crashed || !strings.Contains(err.Error(), "grace period") || strings.Contains(err.Error(), "stderr") {
			t.Fatalf("the other call: %v (kind %s); want plugin_crashed, saying the process was killed for a hung call", err, plugin.KindOf(err))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the other call still runs 30 s after the process was to be killed")
	}
}

func TestCancelledCallThatReturnsIsNotKilled(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{GracePeriod: 5 * time.Second})
	warm(t, m, tg)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// hang sleeps 0.5 s ignoring its context, then returns: well within the grace period, even
	// on a loaded machine.
	if _, err := execute(t, ctx, m, tg, "hang", `{"seconds": 0.5}`, nil); plugin.KindOf(err) != plugin.Timeout {
		t.Fatalf("got %v; want timeout", err)
	}
	// Past the grace period: the watcher has decided by now.
	time.Sleep(6 * time.Second)
	if m.Restarts() != 0 || len(plugintest.Running(tg.Path)) != 1 {
		t.Errorf("restarts %d, running %v: a plugin that returned within the grace period must live", m.Restarts(), plugintest.Running(tg.Path))
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		pkg, name, want string
	}{
		{"plugin/testdata/badstdout", "badstdout", `wrote "hello from a chatty plugin" to stdout`},
		{"plugin/testdata/wrongcookie", "wrongcookie", "exited before the handshake"},
		{"plugin/testdata/notplugin", "notplugin", "exited before the handshake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := plugintest.Install(t, plugintest.Build(t, tc.pkg, tc.name), dir, "fuscia-plugin-"+tc.name)
			tg := target(t, bin, tc.name, "")
			m := newManager(t, plugin.Options{StartTimeout: 5 * time.Second})
			_, err := execute(t, context.Background(), m, tg, "noop", `{}`, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `plugin "`+tc.name+`"`) {
				t.Fatalf("got %v; want an error naming the plugin and saying %q", err, tc.want)
			}
			if plugin.KindOf(err) != plugin.Fatal {
				t.Errorf("kind %s; want fatal", plugin.KindOf(err))
			}
		})
	}
}

func TestChangedDigestIsRefused(t *testing.T) {
	tg := greeter(t)
	tg.Digest = "sha256:" + strings.Repeat("ab", 32)
	m := newManager(t, plugin.Options{})
	_, err := execute(t, context.Background(), m, tg, "greet", `{"name": "x"}`, nil)
	if err == nil || !strings.Contains(err.Error(), "changed since it was planned") {
		t.Fatalf("got %v", err)
	}
}

func TestSchemaCachedByDigest(t *testing.T) {
	tg := greeter(t)
	cache := t.TempDir()
	m := newManager(t, plugin.Options{CacheDir: cache})
	s, err := m.Schema(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "greeter" || s.Version != "0.1.0" || len(s.Tasks["greet"].Input) == 0 {
		t.Fatalf("schema %+v", s)
	}
	m.Close()
	// A second process finds it on disk without starting the plugin.
	m2 := newManager(t, plugin.Options{CacheDir: cache})
	if m2.CachedSchema(tg) == nil {
		t.Fatal("the schema was not cached on disk")
	}
	if n := len(plugintest.Running(tg.Path)); n != 0 {
		t.Errorf("%d plugin processes after CachedSchema; it must not start one", n)
	}
}

// TestVersionMustMatchFileName: Schema refuses a binary whose file name says another version
// than the plugin reports, naming both; Describe still gives what the plugin reports (for
// `plugin list`), and Check says why it cannot be used.
func TestVersionMustMatchFileName(t *testing.T) {
	bin := plugintest.Build(t, "examples/plugins/greeter", "greeter")
	path := plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-greeter_v9.9.9")
	tg := target(t, path, "greeter", "9.9.9")
	m := newManager(t, plugin.Options{})
	_, err := m.Schema(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), `reports version "0.1.0"`) || !strings.Contains(err.Error(), "9.9.9") {
		t.Fatalf("got %v", err)
	}
	s, err := m.Describe(context.Background(), tg)
	if err != nil || s.Version != "0.1.0" || len(s.Tasks) == 0 {
		t.Fatalf("Describe: %+v, %v; want the reported version 0.1.0 and the tasks", s, err)
	}
	if err := tg.Check(s); err == nil || !strings.Contains(err.Error(), "file name says 9.9.9") {
		t.Errorf("Check: %v", err)
	}
	// Without a version in the file name, the reported one stands.
	unversioned := tg
	unversioned.Version = ""
	if err := unversioned.Check(s); err != nil {
		t.Errorf("Check of an unversioned file: %v", err)
	}
}

func TestCloseStopsEveryProcess(t *testing.T) {
	tg := greeter(t)
	m := plugin.NewManager(plugin.Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := execute(t, context.Background(), m, tg, "greet", `{"name": "x"}`, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(plugintest.Running(tg.Path)); n != 1 {
		t.Errorf("%d processes for 8 concurrent first calls; want 1", n)
	}
	m.Close()
	if n := len(plugintest.Running(tg.Path)); n != 0 {
		t.Errorf("%d processes after Close", n)
	}
	_, err := execute(t, context.Background(), m, tg, "greet", `{"name": "x"}`, nil)
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a call after Close: %v", err)
	}
}

// TestNoSocketLeftBehind: a plugin that crashes, one that fails its handshake and one that
// is stopped leave nothing in the temporary directory. A plugin removes its socket only when
// it exits cleanly, so each one's socket sits in a directory the manager owns and removes.
func TestNoSocketLeftBehind(t *testing.T) {
	tg := greeter(t)
	chatty := target(t, plugintest.Install(t, plugintest.Build(t, "plugin/testdata/badstdout", "badstdout"), t.TempDir(), "fuscia-plugin-badstdout"), "badstdout", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the manager's, the plugins' and the broker's temporary files
	m := plugin.NewManager(plugin.Options{StartTimeout: 5 * time.Second})
	defer m.Close()
	kv := &memKV{}
	if _, err := execute(t, context.Background(), m, tg, "crash", `{}`, &plugin.CallEnv{KV: kv}); plugin.KindOf(err) != plugin.Crashed {
		t.Fatalf("first call: %v; want plugin_crashed", err)
	}
	if _, err := execute(t, context.Background(), m, tg, "crash", `{}`, &plugin.CallEnv{KV: kv}); err != nil {
		t.Fatalf("call on the restarted process: %v", err)
	}
	if _, err := execute(t, context.Background(), m, chatty, "noop", `{}`, nil); err == nil {
		t.Fatal("a plugin that writes to stdout before its handshake started")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left in the temporary directory: %s (%s)", e.Name(), e.Type())
	}
}

// TestCrashKeepsItsLastStderrLine: a plugin that writes a line to stderr and exits at once
// (os.Exit right after) has that line in the crash's error and in the log, at info. Through
// go-plugin's stream of os.Stderr it was lost with the process.
func TestCrashKeepsItsLastStderrLine(t *testing.T) {
	tg := greeter(t)
	var logs syncbuf.Buffer
	m := newManager(t, plugin.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	warm(t, m, tg)
	_, err := execute(t, context.Background(), m, tg, "crash", `{"always": true}`, &plugin.CallEnv{KV: &memKV{}})
	const line = "greeter: crash task exits on purpose (attempt 1)"
	if plugin.KindOf(err) != plugin.Crashed || !strings.Contains(err.Error(), line) {
		t.Fatalf("got %v; want plugin_crashed quoting %q", err, line)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), line); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the line is not in the log:\n%s", logs.String())
		}
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, line) && !strings.Contains(l, "level=INFO") {
			t.Errorf("the stderr line is logged as %q; want level INFO", l)
		}
	}
}
