package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// bindComponent binds a component block through the coordinator, as a run does; config is
// the block's config (cty.NilVal: none).
func (c *fixture) bindComponent(t testing.TB, local, source string, config cty.Value) task.Binding {
	t.Helper()
	var expr hcl.Expression
	if config != cty.NilVal {
		expr = hcl.StaticExpr(config, hcl.Range{Filename: "w.fsc.hcl"})
	}
	b, err := c.coord.Bind(testCtx(t), task.Block{
		Uses:     lang.Uses{Kind: lang.UsesComponent, Local: local},
		Workflow: &lang.Workflow{Name: "w", Components: []*lang.Component{{Name: local, Source: source, Config: expr}}},
		Eval: func(e hcl.Expression) (cty.Value, *outcome.Error) {
			v, diags := e.Value(nil)
			if diags.HasErrors() {
				return cty.NilVal, outcome.Errorf(outcome.Fatal, "%s", diags.Error())
			}
			return v, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spinWAT is a component whose task spin loops forever: only an interruption stops it.
const spinWAT = `(module (memory (export "memory") 1)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "fuscia_call") (param i32 i32) (result i64) (loop (br 0)) (i64.const 0)))`

const spinManifest = `{"name": "t/spin", "version": "1.0.0", "abi": 1, "digest": "",
  "capabilities": {"allowed_hosts": [], "allowed_paths": []}, "tasks": {"spin": {}}}`

// installWAT packs and installs a component made of a WebAssembly text module and a manifest.
func installWAT(t testing.TB, componentsDir, wat, manifest string) registry.Installed {
	t.Helper()
	src := t.TempDir()
	wasm, err := wasmtime.Wat2Wasm(wat)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "component.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(t.TempDir(), "component.fcpkg")
	if _, err := registry.Pack(src, pkg); err != nil {
		t.Fatal(err)
	}
	inst, err := registry.Install(componentsDir, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// installWatEcho installs the repository's example component fuscia/wat-echo, which answers
// with the request it got and logs its config's greeting.
func installWatEcho(t testing.TB, componentsDir string) registry.Installed {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "components", "wat-echo")
	wat, err := os.ReadFile(filepath.Join(src, "component.wat"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return installWAT(t, componentsDir, string(wat), string(manifest))
}

// echoOutput is what wat-echo's task echo answers.
type echoOutput struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Context map[string]any  `json:"context"`
	Input   json.RawMessage `json:"input"`
}

// TestComponentByDigest: a worker that does not have a component gets it from the cluster by
// the digest the coordinator installed, and runs it with the block's config; a cancelled call
// interrupts its Wasm on the worker at once.
func TestComponentByDigest(t *testing.T) {
	srv := natstest.Start(t)
	home := t.TempDir()
	echo := installWatEcho(t, filepath.Join(home, "components"))
	installWAT(t, filepath.Join(home, "components"), spinWAT, spinManifest)
	c := newCluster(t, srv.URL(), clusterOptions{Home: home})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindComponent(t, "echo", "fuscia/wat-echo", cty.ObjectVal(map[string]cty.Value{"greeting": cty.StringVal("hello from the coordinator")}))

	logs := &logLines{}
	call := newCall("task.look", lang.Uses{Kind: lang.UsesComponent, Local: "echo", Name: "echo"}, map[string]any{"item": "a"}, "", logs)
	r := c.call(t, b, call)
	wantSuccess(t, "wat-echo's echo", r)
	var out echoOutput
	if err := json.Unmarshal(r.Output, &out); err != nil || out.Name != "echo" || string(out.Input) != `{"item":"a"}` ||
		out.Context["task_id"] != call.TaskID || out.Context["node"] != "task.look" {
		t.Fatalf("wat-echo's output = %s (%v)", r.Output, err)
	}
	if l := logs.String(); !strings.Contains(l, "info: wat-echo: hello from the coordinator") {
		t.Fatalf("the call's log lines = %q; want the greeting of the block's config", l)
	}
	ctx := testCtx(t)
	if _, err := c.coord.objects.GetInfo(ctx, echo.Digest); err != nil {
		t.Fatalf("the component is not in the cluster's object store under %s: %v", echo.Digest, err)
	}
	got, err := registry.Find(filepath.Join(w.home, "components"), "fuscia/wat-echo", "")
	if err != nil || got.Digest != echo.Digest || got.Version != echo.Version {
		t.Fatalf("the worker installed %+v, %v; want %s %s", got, err, echo.Ref(), echo.Digest)
	}

	// A task that loops forever stops when its call is cancelled.
	sb := c.bindComponent(t, "spin", "t/spin", cty.NilVal)
	spin := newCall("task.spin", lang.Uses{Kind: lang.UsesComponent, Local: "spin", Name: "spin"}, map[string]any{}, "", nil)
	id := attemptID(spin)
	p := c.callAsync(sb, spin)
	eventually(t, "the worker to start the attempt", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cancels[id] != nil
	})
	cancelled := time.Now()
	p.cancel(nil)
	wantKind(t, "the cancelled spin", p.result(t), outcome.Cancelled)
	// The worker answers once the Wasm stopped.
	res := c.workerAnswer(t, id)
	d := time.Since(cancelled)
	t.Logf("the worker answered the cancelled spin %s after the cancellation: %s: %s", d, res.Result.Kind, res.Result.Message)
	if res.Result.Type != outcome.Failure || (res.Result.Kind != outcome.Cancelled && res.Result.Kind != outcome.Timeout) {
		t.Fatalf("the worker answered the cancelled spin with %+v", res.Result)
	}
	if d > stopBound {
		t.Fatalf("the worker stopped the cancelled spin %s after the cancellation; want within %s", d, stopBound)
	}
}

// workerAnswer waits for the result the worker itself stored for attempt id (the coordinator
// may have answered the call before it, as for a cancelled call).
func (c *fixture) workerAnswer(t testing.TB, id string) resultMsg {
	t.Helper()
	var res resultMsg
	eventually(t, "the worker's answer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		raw, err := c.coord.results.GetLastMsgForSubject(ctx, c.conn.names.resultSubject(execution, id))
		if err != nil {
			return false
		}
		plain, err := c.cfg.Key.Open(raw.Data, []byte(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(plain, &res); err != nil {
			t.Fatal(err)
		}
		return true
	})
	return res
}

// TestCancelDuringComponentFetch: a call cancelled while its worker still fetches the
// component from the object store gets its answer at once, not when the fetch's own bound
// (minutes) runs out. The component's chunks are purged from the store, so the fetch waits
// for chunks that never come; the call is cancelled once the worker blocks on them.
func TestCancelDuringComponentFetch(t *testing.T) {
	srv := natstest.Start(t)
	home := t.TempDir()
	spinInst := installWAT(t, filepath.Join(home, "components"), spinWAT, spinManifest)
	c := newCluster(t, srv.URL(), clusterOptions{Home: home})
	w := c.startWorker(t, WorkerOptions{})
	sb := c.bindComponent(t, "spin", "t/spin", cty.NilVal)

	ctx := testCtx(t)
	// The coordinator puts the component into the store as a call's first step; done here
	// first, so its chunks can be purged before the call.
	spec := *sb.(*binding).spec
	if err := c.coord.distribute(ctx, &spec); err != nil {
		t.Fatal(err)
	}
	info, err := c.coord.objects.GetInfo(ctx, spinInst.Digest)
	if err != nil {
		t.Fatalf("the component is not in the cluster's object store under %s: %v", spinInst.Digest, err)
	}
	bucket := c.conn.names.componentsBucket()
	stream, err := c.conn.js.Stream(ctx, "OBJ_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSubject("$O."+bucket+".C."+info.NUID)); err != nil {
		t.Fatal(err)
	}

	spin := newCall("task.spin", lang.Uses{Kind: lang.UsesComponent, Local: "spin", Name: "spin"}, map[string]any{}, "", nil)
	id := attemptID(spin)
	p := c.callAsync(sb, spin)
	eventually(t, "the worker to wait for the component's chunks", func() bool {
		w.mu.Lock()
		taken := w.cancels[id] != nil
		w.mu.Unlock()
		return taken && blockedOnObjectChunks()
	})
	cancelled := time.Now()
	p.cancel(nil)
	wantKind(t, "the cancelled call", p.result(t), outcome.Cancelled)
	// workerAnswer waits patience (1 min), half the fetch's own bound: a fetch deaf to the
	// cancellation fails here.
	res := c.workerAnswer(t, id)
	t.Logf("the worker answered %s after the cancellation: %s: %s", time.Since(cancelled), res.Result.Kind, res.Result.Message)
	if res.Result.Kind != outcome.Cancelled {
		t.Fatalf("the worker answered the call cancelled during its fetch with %+v; want cancelled", res.Result)
	}
	if _, err := registry.Find(filepath.Join(w.home, "components"), "t/spin", ""); err == nil {
		t.Fatal("the worker installed a component whose fetch was cancelled")
	}
}

// blockedOnObjectChunks says whether a goroutine of this process waits in an object store
// read for the object's next chunk.
func blockedOnObjectChunks() bool {
	buf := make([]byte, 8<<20)
	n := runtime.Stack(buf, true)
	for _, g := range bytes.Split(buf[:n], []byte("\n\n")) {
		if bytes.Contains(g, []byte("jetstream.(*objResult).Read")) && bytes.Contains(g, []byte("net.(*pipe).read")) {
			return true
		}
	}
	return false
}

// TestForgedComponentPackage: the digest covers component.wasm, not the manifest, so a
// package with the same module and wider grants has the same digest. One put in the object
// store by anyone but the coordinator is replaced by the coordinator before its first use, and
// refused by a worker when it is put there after.
func TestForgedComponentPackage(t *testing.T) {
	srv := natstest.Start(t)
	home := t.TempDir()
	echo := installWatEcho(t, filepath.Join(home, "components"))
	forged := forgedPackage(t, echo)
	c := newCluster(t, srv.URL(), clusterOptions{Home: home})
	ctx := testCtx(t)
	if _, err := c.coord.objects.PutBytes(ctx, echo.Digest, forged); err != nil {
		t.Fatal(err)
	}
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindComponent(t, "echo", "fuscia/wat-echo", cty.NilVal)
	call := newCall("task.look", lang.Uses{Kind: lang.UsesComponent, Local: "echo", Name: "echo"}, map[string]any{}, "", nil)
	wantSuccess(t, "wat-echo's echo", c.call(t, b, call))
	got, err := registry.Find(filepath.Join(w.home, "components"), "fuscia/wat-echo", "")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadFile(filepath.Join(got.Dir, "manifest.json")); bytes.Contains(m, []byte("evil.example")) {
		t.Fatalf("the worker installed the forged manifest: %s", m)
	}

	// Forged after the coordinator's upload: a worker that fetches it refuses it.
	w.stop(t)
	if _, err := c.coord.objects.PutBytes(ctx, echo.Digest, forged); err != nil {
		t.Fatal(err)
	}
	w2 := c.startWorker(t, WorkerOptions{})
	call2 := newCall("task.look2", lang.Uses{Kind: lang.UsesComponent, Local: "echo", Name: "echo"}, map[string]any{}, "", nil)
	r := c.call(t, b, call2)
	if r.Type != outcome.Failure || !strings.Contains(r.Message, "was not put there by this cluster's coordinator") {
		t.Fatalf("a call of the forged package: %+v; want a failure saying it was not put there by the coordinator", r)
	}
	if _, err := registry.Find(filepath.Join(w2.home, "components"), "fuscia/wat-echo", ""); err == nil {
		t.Fatal("the worker installed the forged package")
	}
}

// forgedPackage packs inst's module with its manifest granting one host more.
func forgedPackage(t testing.TB, inst registry.Installed) []byte {
	t.Helper()
	src := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join(inst.Dir, "component.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(inst.Dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	m["capabilities"] = map[string]any{"allowed_hosts": []string{"evil.example"}, "allowed_paths": []string{}}
	manifest, _ = json.Marshal(m)
	for name, b := range map[string][]byte{"component.wasm": wasm, "manifest.json": manifest} {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkg := filepath.Join(t.TempDir(), "forged.fcpkg")
	packed, err := registry.Pack(src, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if packed.Digest != inst.Digest {
		t.Fatalf("the forged package's digest is %s, not %s: the test no longer forges", packed.Digest, inst.Digest)
	}
	b, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
