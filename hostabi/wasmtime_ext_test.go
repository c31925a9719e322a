package hostabi

import (
	"context"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/internal/version"
)

// TestWasmtimeLayout pins what wasmtime_ext.go assumes about wasmtime-go's internals: the C
// pointer is the first field of WasiConfig, Store and Config. If this fails after a wasmtime-go
// upgrade, fix wasmtime_ext.go before anything else: it would otherwise pass garbage to C.
func TestWasmtimeLayout(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[wasmtime.WasiConfig](), reflect.TypeFor[wasmtime.Store](), reflect.TypeFor[wasmtime.Config]()} {
		f := typ.Field(0)
		if f.Name != "_ptr" || f.Type.Kind() != reflect.Pointer || f.Offset != 0 {
			t.Fatalf("wasmtime-go %s's first field is %s %s at %d; wasmtime_ext.go expects the C pointer _ptr at offset 0 (it was written for wasmtime-go v39.0.1)",
				typ, f.Name, f.Type, f.Offset)
		}
	}
	// instancePtr reads an Instance as the C wasmtime_instance_t it holds, and nothing else.
	inst := reflect.TypeFor[wasmtime.Instance]()
	if inst.NumField() != 1 || inst.Field(0).Name != "val" || inst.Size() != 16 {
		t.Fatalf("wasmtime-go's Instance is %d fields of %d bytes, the first %q; wasmtime_ext.go expects only val, a 16-byte wasmtime_instance_t",
			inst.NumField(), inst.Size(), inst.Field(0).Name)
	}
}

// TestWasmtimeVersion pins the wasmtime-go release wasmtime_ext.go was checked against.
func TestWasmtimeVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "github.com/bytecodealliance/wasmtime-go/v39 v" + WasmtimeVersion
	if !strings.Contains(string(mod), want) {
		t.Fatalf("go.mod does not require %s: wasmtime_ext.go and WasmtimeVersion were written for it; re-check the C prototypes and TestWasmtimeLayout, then update WasmtimeVersion", want)
	}
	if version.Wasmtime != WasmtimeVersion {
		t.Fatalf("version.Wasmtime is %s, hostabi.WasmtimeVersion %s", version.Wasmtime, WasmtimeVersion)
	}
}

// blockingKV holds every Get until release is closed, counting the callers that arrived.
type blockingKV struct {
	arrived atomic.Int32
	release chan struct{}
}

func (k *blockingKV) Get(ctx context.Context, _ string) ([]byte, bool, error) {
	k.arrived.Add(1)
	select {
	case <-k.release:
	case <-ctx.Done():
	}
	return nil, false, nil
}
func (k *blockingKV) Set(context.Context, string, []byte) error { return nil }
func (k *blockingKV) Delete(context.Context, string) error      { return nil }

// TestPoolExhausted: with every pool slot held by a running guest, one more attempt waits for
// a slot: it gives up at its deadline, or runs once a slot frees; the host works afterwards.
func TestPoolExhausted(t *testing.T) {
	h := newTestHost(t, Options{})
	if h.slots == nil {
		t.Skip("the pooling allocator's address space could not be reserved here")
	}
	m := h.load(t, "t/block", wat(t, "", `(drop (call $kv_get (i32.const 2048) (i32.const 3))) `+packed(1024, len(okResponse)), okResponse, "key"))
	kv := &blockingKV{release: make(chan struct{})}
	env := &Env{KV: kv}
	slots := int(defaultPool().slots)
	var wg sync.WaitGroup
	errs := make(chan error, slots+1)
	for range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Invoke(context.Background(), m, env, []byte(`{}`))
			errs <- err
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for int(kv.arrived.Load()) < slots {
		if time.Now().After(deadline) {
			close(kv.release)
			t.Fatalf("only %d of %d guests started", kv.arrived.Load(), slots)
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := h.Invoke(ctx, m, env, []byte(`{}`))
	cancel()
	wantErr(t, err, Timeout)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := h.Invoke(context.Background(), m, env, []byte(`{}`))
		errs <- err
	}()
	time.Sleep(20 * time.Millisecond)
	close(kv.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a guest: %v", err)
		}
	}
	if resp, err := h.Invoke(context.Background(), m, env, []byte(`{}`)); err != nil || string(resp) != okResponse {
		t.Fatalf("after the burst: %s, %v", resp, err)
	}
}

// TestPoolingKeepsCompiledCode: the disk cache key leaves the pool out (configID), so code
// compiled by a pooled engine must load in an on-demand one and the other way round.
func TestPoolingKeepsCompiledCode(t *testing.T) {
	engine := func(pooled bool) *wasmtime.Engine {
		cfg := wasmtime.NewConfig()
		cfg.SetEpochInterruption(true)
		if pooled && !usePooling(cfg, poolConfig{slots: 4, maxMemory: 4 << 30}) {
			t.Skip("cannot reserve a pool")
		}
		e := wasmtime.NewEngineWithConfig(cfg)
		t.Cleanup(e.Close)
		return e
	}
	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	for _, from := range []bool{true, false} {
		mod, err := wasmtime.NewModule(engine(from), wasm)
		if err != nil {
			t.Fatal(err)
		}
		body, err := mod.Serialize()
		mod.Close()
		if err != nil {
			t.Fatal(err)
		}
		back, err := wasmtime.NewModuleDeserialize(engine(!from), body)
		if err != nil {
			t.Fatalf("compiled pooled=%t, loaded pooled=%t: %v", from, !from, err)
		}
		back.Close()
	}
}

// TestSetOnDoneWaitsForSet: an attempt whose context ends just as it finishes frees its stop
// flag (C memory) right after unwatching the context, so unwatching must wait for a set that
// has already begun; context.AfterFunc's stop alone does not.
func TestSetOnDoneWaitsForSet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	entered, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	unwatch := setOnDone(ctx, func() {
		close(entered)
		<-release
		finished.Store(true)
	})
	cancel()
	<-entered
	unwatched := make(chan struct{})
	go func() {
		defer close(unwatched)
		unwatch()
	}()
	select {
	case <-unwatched:
		t.Fatal("unwatch returned while set was still running: the flag would be freed under it")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-unwatched
	if !finished.Load() {
		t.Fatal("unwatch returned before set did")
	}
}

// TestSetOnDoneNotCalledAfterUnwatch: a context that ends after the attempt has unwatched it
// sets nothing.
func TestSetOnDoneNotCalledAfterUnwatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	setOnDone(ctx, func() { calls.Add(1) })()
	cancel()
	// AfterFunc would have started its goroutine at cancel; one that was not stopped runs soon.
	time.Sleep(20 * time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Fatalf("set ran %d times after unwatch", n)
	}
}
