package plugin_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// killedHostEnv makes the test binary a host that starts a plugin, calls it and waits to be
// killed: TestSocketDirOfAKilledHostIsSwept runs it in a process of its own.
const killedHostEnv = "FUSCIA_TEST_KILLED_HOST"

// TestSocketDirOfAKilledHostIsSwept kills a host with SIGKILL while its plugin runs, after a call
// that used the Host service (so the broker has a listener on the host's side). Everything the
// two processes left must be in the plugin's socket directory, and the next Manager to start a
// plugin must remove that directory.
func TestSocketDirOfAKilledHostIsSwept(t *testing.T) {
	if spec := os.Getenv(killedHostEnv); spec != "" {
		runKilledHost(spec) // does not return
	}
	// Not greeter(t): its cleanup counts the killed host's plugin until it is reaped, and who
	// reaps an orphan is up to the machine's init (TestPluginDiesWithSIGKILLedFuscia, in
	// cmd/fuscia, checks that the plugin dies). Nothing below needs it gone: killed, it cannot
	// remove its socket.
	tg := greeterTarget(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	child := exec.Command(os.Args[0], "-test.run=^TestSocketDirOfAKilledHostIsSwept$")
	child.Env = append(os.Environ(), killedHostEnv+"="+tg.Path+"\n"+tg.Digest)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Only a child that never answers is killed by this timer, and the test then fails below.
	guard := time.AfterFunc(2*time.Minute, func() { _ = child.Process.Kill() })
	defer guard.Stop()
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = child.Process.Kill()
	_ = child.Wait()
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("the host child said %q, not ready", line)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !entries[0].IsDir() || !strings.HasPrefix(entries[0].Name(), "fuscia-sock-") {
		t.Fatalf("left in the temporary directory: %v; want only the plugin's socket directory", names(entries))
	}
	left := filepath.Join(tmp, entries[0].Name())
	inside, err := os.ReadDir(left)
	if err != nil {
		t.Fatal(err)
	}
	// The plugin's listener and the broker's on the host's side.
	if len(inside) < 2 {
		t.Errorf("in the socket directory: %v; want the plugin's socket and the host broker's", names(inside))
	}

	// A directory younger than a minute may belong to a host between its MkdirTemp and its lock.
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(left, old, old); err != nil {
		t.Fatal(err)
	}
	m := plugin.NewManager(plugin.Options{StartTimeout: 10 * time.Second})
	defer m.Close()
	if _, err := execute(t, context.Background(), m, tg, "greet", `{"name": "next"}`, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed host's socket directory is still there after the next start (%v)", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("left in the temporary directory after Close: %v (%v)", names(entries), err)
	}
}

// runKilledHost is the child's side: spec is the plugin's path and digest on two lines.
func runKilledHost(spec string) {
	path, digest, _ := strings.Cut(spec, "\n")
	m := plugin.NewManager(plugin.Options{StartTimeout: time.Minute})
	tg := plugin.Target{Name: "greeter", Path: path, Digest: digest, Version: "0.1.0"}
	_, err := m.Execute(context.Background(), tg, plugin.Request{Task: "greet", Input: []byte(`{"name": "Ada"}`), Config: []byte("{}"),
		Context: &pluginv1.CallContext{ExecutionId: "x1", Workflow: "wf", Node: "task.a", Attempt: 1}}, &plugin.CallEnv{KV: &memKV{}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host child:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	time.Sleep(10 * time.Minute) // killed long before
	os.Exit(3)
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
