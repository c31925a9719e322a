package plugin_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/syncbuf"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Task calls go on ExecuteStream streams that outlive them: one stream for calls made one after
// another, one per call running at once, all of them kept for the calls after.
func TestExecuteCallsShareStreams(t *testing.T) {
	tg := greeter(t)
	m := newManager(t, plugin.Options{})
	greet := func() {
		t.Helper()
		resp, err := execute(t, context.Background(), m, tg, "greet", `{"name": "Ada"}`, &plugin.CallEnv{KV: &memKV{}})
		if err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS || !strings.Contains(string(resp.Output), "Ada") {
			t.Fatalf("greet: %v %v", resp, err)
		}
	}
	for range 20 {
		greet()
	}
	if opened, idle := plugin.StreamsOpened(m, tg); opened != 1 || idle != 1 {
		t.Fatalf("after 20 calls one after another: %d streams opened, %d idle; want 1 and 1", opened, idle)
	}

	// Calls at once each get a stream of their own: none waits for another's. hang ignores its
	// context and sleeps 1 s; six of them one after another would take 6 s.
	const calls = 6
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			resp, err := execute(t, context.Background(), m, tg, "hang", `{"seconds": 1}`, nil)
			if err == nil && resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
				err = &plugin.Error{Message: "hang answered " + resp.Type.String() + ": " + resp.Message}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d >= calls*time.Second {
		t.Errorf("%d calls of 1 s at once took %s: they waited for each other", calls, d)
	}
	opened, idle := plugin.StreamsOpened(m, tg)
	if opened < 2 || opened > calls || idle != opened {
		t.Fatalf("after %d calls at once: %d streams opened, %d idle; want 2 to %d, all idle", calls, opened, idle, calls)
	}
	for range 10 {
		greet()
	}
	if again, _ := plugin.StreamsOpened(m, tg); again != opened {
		t.Errorf("calls after the idle streams were kept opened %d more", again-opened)
	}
	if m.Restarts() != 0 {
		t.Errorf("restarts = %d", m.Restarts())
	}
}

// A call whose context ends (cancellation, deadline) cancels its stream: the plugin's task
// sees its context end (the shell plugin kills the command), the call returns the kind the
// context says, the stream is not reused, and the plugin serves the next call.
func TestCallContextEndsThePluginsTask(t *testing.T) {
	bin := plugintest.Build(t, "plugins/shell", "shell")
	path := plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-shell")
	tg := target(t, path, "shell", "")
	m := newManager(t, plugin.Options{GracePeriod: time.Minute})
	shell := func(ctx context.Context, script string) (*pluginv1.ExecuteResponse, error) {
		input, err := json.Marshal(map[string]any{"command": "/bin/sh", "args": []string{"-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		return m.Execute(ctx, tg, plugin.Request{Task: "exec", Input: input, Config: []byte("{}"),
			Context: &pluginv1.CallContext{ExecutionId: "x1", Workflow: "wf", Node: "task.a", Attempt: 1}}, nil)
	}
	if resp, err := shell(context.Background(), "exit 0"); err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
		t.Fatalf("first call: %v %v", resp, err)
	}
	for i, tc := range []struct {
		name string
		end  func(ctx *endOnFile) // how ctx ends
		want plugin.Kind
	}{
		{"cancelled", func(ctx *endOnFile) { ctx.end(context.Canceled) }, plugin.Cancelled},
		// A deadline that passes once the command runs, however slow its start.
		{"deadline", func(ctx *endOnFile) { ctx.end(context.DeadlineExceeded) }, plugin.Timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			ctx := newEndOnFile(pidFile, tc.end)
			defer ctx.end(context.Canceled)
			_, err := shell(ctx, "echo $$ > "+pidFile+"; exec /bin/sleep 100")
			if plugin.KindOf(err) != tc.want {
				t.Fatalf("got %v (kind %s); want %s", err, plugin.KindOf(err), tc.want)
			}
			pid := readPid(t, pidFile)
			deadline := time.Now().Add(10 * time.Second)
			for processExists(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the command (pid %d) still runs 10 s after its call's context ended", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if resp, err := shell(context.Background(), "exit 0"); err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
				t.Fatalf("the call after: %v %v", resp, err)
			}
			// The first call's stream, the ended call's and the one after's.
			if opened, _ := plugin.StreamsOpened(m, tg); opened != i+2 {
				t.Errorf("%d streams opened; the ended call's stream must not be reused (want %d)", opened, i+2)
			}
			if m.Restarts() != 0 {
				t.Errorf("restarts = %d; the plugin must live on", m.Restarts())
			}
		})
	}
}

// endOnFile is a context with a deadline an hour away that ends, as end says, once a file
// exists: a call's context ending while its task runs, without a race against a slow start.
type endOnFile struct {
	context.Context // Background's values
	deadline        time.Time
	done            chan struct{}
	once            sync.Once
	err             error
}

func newEndOnFile(file string, end func(*endOnFile)) *endOnFile {
	c := &endOnFile{Context: context.Background(), deadline: time.Now().Add(time.Hour), done: make(chan struct{})}
	go func() {
		for {
			select {
			case <-c.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := os.Stat(file); err == nil {
				end(c)
				return
			}
		}
	}()
	return c
}

func (c *endOnFile) end(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

func (c *endOnFile) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *endOnFile) Done() <-chan struct{}       { return c.done }
func (c *endOnFile) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file: %q", data)
	}
	return pid
}

// processExists reports whether pid is alive or a zombie nobody reaped yet.
func processExists(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

// A plugin whose schema does not say it serves ExecuteStream gets its calls on Execute: no
// stream is tried.
func TestPluginWithoutExecuteStream(t *testing.T) {
	bin := plugintest.Build(t, "plugin/testdata/unaryonly", "unaryonly")
	path := plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-unaryonly")
	tg := target(t, path, "unaryonly", "")
	m := newManager(t, plugin.Options{})
	for i := range 5 {
		in := `{"n":` + strconv.Itoa(i) + `}`
		resp, err := execute(t, context.Background(), m, tg, "echo", in, nil)
		if err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS || string(resp.Output) != in {
			t.Fatalf("call %d: %v %v; want the input echoed", i, resp, err)
		}
	}
	if opened, idle := plugin.StreamsOpened(m, tg); opened != 0 || idle != 0 {
		t.Errorf("%d streams opened, %d idle; want none", opened, idle)
	}
	if m.Restarts() != 0 {
		t.Errorf("restarts = %d", m.Restarts())
	}
}

// rawStream is plugin/testdata/rawstream, installed for t.
func rawStream(t *testing.T) plugin.Target {
	t.Helper()
	bin := plugintest.Build(t, "plugin/testdata/rawstream", "rawstream")
	path := plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-rawstream")
	return target(t, path, "rawstream", "")
}

// An error that ends a call's stream is the call's error: the request is never sent again
// (on Execute or another stream), since the plugin may have done the task's work before it.
// The first call is on a new stream, the second on a stream that has carried a call (which
// the plugin may have ended while the request was on its way: that request is sent again, on
// a new stream, since the plugin never read it).
func TestStreamErrorNeverResent(t *testing.T) {
	tg := rawStream(t)
	m := newManager(t, plugin.Options{})
	for i := range 2 {
		effects := filepath.Join(t.TempDir(), "effects")
		_, err := execute(t, context.Background(), m, tg, "effect", effects, nil)
		if err == nil || plugin.KindOf(err) != plugin.Fatal || !strings.Contains(err.Error(), "downstream") {
			t.Errorf("call %d: %v; want the plugin's error, fatal", i, err)
		}
		if b, _ := os.ReadFile(effects); string(b) != "effect\n" {
			t.Errorf("call %d: the task ran %d times; want once", i, strings.Count(string(b), "effect"))
		}
		if i == 0 {
			if _, err := execute(t, context.Background(), m, tg, "once", `{}`, nil); err != nil {
				t.Fatal(err) // leaves an idle stream, which the plugin ends
			}
		}
	}
}

// A plugin that reads a request and ends a new stream without an answer (and without an
// error) fails the call: it is not sent again, which would meet the same end.
func TestStreamEndedWithoutAnswer(t *testing.T) {
	tg := rawStream(t)
	m := newManager(t, plugin.Options{})
	calls := filepath.Join(t.TempDir(), "calls")
	for i := range 2 { // on a new stream, then after a call that leaves an idle stream
		_, err := execute(t, context.Background(), m, tg, "silent", calls, nil)
		if plugin.KindOf(err) != plugin.Fatal || !strings.Contains(err.Error(), "without an answer") {
			t.Errorf("call %d: %v; want fatal, without an answer", i, err)
		}
		if _, err := execute(t, context.Background(), m, tg, "once", `{}`, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(calls); string(b) != "silent\nsilent\n" {
		t.Errorf("the plugin read the request %d times in 2 calls; want 2", strings.Count(string(b), "silent"))
	}
}

// A stream the plugin ended while it was idle is not the next call's failure: the request,
// never sent on it, goes on a new stream.
func TestIdleStreamEndedByPlugin(t *testing.T) {
	tg := rawStream(t)
	m := newManager(t, plugin.Options{})
	for i := range 3 {
		resp, err := execute(t, context.Background(), m, tg, "once", `{}`, nil)
		if err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
			t.Fatalf("call %d: %v %v", i, resp, err)
		}
	}
	if opened, _ := plugin.StreamsOpened(m, tg); opened < 2 {
		t.Errorf("%d streams opened for 3 calls on streams that end after one; want more than 1", opened)
	}
	if m.Restarts() != 0 {
		t.Errorf("restarts = %d; the process is healthy", m.Restarts())
	}
}

// A call whose context has ended before it starts is never sent: the task does not run (a
// stream's cancellation would race with the request).
func TestEndedContextCallNeverSent(t *testing.T) {
	bin := plugintest.Build(t, "plugins/shell", "shell")
	path := plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-shell")
	tg := target(t, path, "shell", "")
	m := newManager(t, plugin.Options{})
	marker := filepath.Join(t.TempDir(), "ran")
	run := func(ctx context.Context, script string) error {
		in, err := json.Marshal(map[string]any{"command": "/bin/sh", "args": []string{"-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = execute(t, ctx, m, tg, "exec", string(in), nil)
		return err
	}
	if err := run(context.Background(), "exit 0"); err != nil {
		t.Fatal(err) // the process is up, with an idle stream
	}
	for range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(ctx, "echo x >> "+marker); plugin.KindOf(err) != plugin.Cancelled {
			t.Fatalf("a call with an ended context: %v; want cancelled", err)
		}
	}
	// One call more, which gives a task sent by mistake the time to run.
	if err := run(context.Background(), "exit 0"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("tasks ran %d times with an ended context; want none", strings.Count(string(b), "x"))
	}
}

// TestDescribeAsksOnce: Describe of a binary whose schema is not known starts its process,
// which asks for the schema to learn whether the plugin serves streams; Describe answers with
// that answer instead of asking again, and later from memory.
func TestDescribeAsksOnce(t *testing.T) {
	tg := rawStream(t)
	m := newManager(t, plugin.Options{})
	for range 2 {
		s, err := m.Describe(context.Background(), tg)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != "rawstream" || !s.ExecuteStream {
			t.Fatalf("Describe = %+v; want rawstream's schema, which declares ExecuteStream", s)
		}
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(tg.Path), "getschema.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "GetSchema"); n != 1 {
		t.Errorf("the plugin answered GetSchema %d times; want 1", n)
	}
}

// A plugin that answers a call twice leaves the second answer on the stream; the next call on
// that stream must get its own answer, not the leftover, and the leftover is logged. A plugin
// that keeps sending answers for another call fails the call instead of holding it.
func TestStrayAnswersDropped(t *testing.T) {
	tg := rawStream(t)
	var logs syncbuf.Buffer
	m := newManager(t, plugin.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	resp, err := execute(t, context.Background(), m, tg, "twice", `{}`, nil)
	if err != nil || string(resp.Output) != `{"answer":1}` {
		t.Fatalf("twice: %v %v; want its first answer", resp, err)
	}
	for i := range 2 {
		resp, err = execute(t, context.Background(), m, tg, "echo", `{}`, nil)
		if err != nil || string(resp.Output) != `{"task":"echo"}` {
			t.Fatalf("echo %d: output %q, %v; want its own answer, not the one left over", i, resp.GetOutput(), err)
		}
	}
	if opened, _ := plugin.StreamsOpened(m, tg); opened != 1 {
		t.Fatalf("%d streams opened; want the calls on one (else the leftover was not met)", opened)
	}
	if !strings.Contains(logs.String(), "plugin answered a call it had answered already") {
		t.Errorf("log %q; want the dropped answer noted", logs.String())
	}

	if _, err := execute(t, context.Background(), m, tg, "flood", `{}`, nil); err != nil {
		t.Fatal(err)
	}
	_, err = execute(t, context.Background(), m, tg, "echo", `{}`, nil)
	if err == nil || !strings.Contains(err.Error(), "answers for other calls") {
		t.Fatalf("echo after flood: %v; want the call failed for the stray answers", err)
	}
	if resp, err := execute(t, context.Background(), m, tg, "echo", `{}`, nil); err != nil || string(resp.Output) != `{"task":"echo"}` {
		t.Fatalf("echo on a new stream: %v %v", resp, err)
	}
}
