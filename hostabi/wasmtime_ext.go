package hostabi

// This file reaches under wasmtime-go for what its v39.0.1 API lacks: WASI stdout and stderr
// into a Go writer (wasi_config_set_std{out,err}_custom), an epoch-deadline callback per store
// so that one attempt can be interrupted without touching the others
// (wasmtime_store_epoch_deadline_callback), and the pooling instance allocator
// (wasmtime_pooling_allocation_strategy_set). They need the C pointer wasmtime-go keeps in the
// unexported first field of WasiConfig, Store and Config. TestWasmtimeLayout fails loudly if a
// wasmtime-go upgrade moves those fields; keep everything that depends on them here.

/*
#include <stdint.h>
#include <stdlib.h>
void fuscia_wasi_capture(void *config, uintptr_t out, uintptr_t err);
void fuscia_store_interrupt_on(void *store, int32_t *flag);
void fuscia_config_pooling(void *config, uint32_t slots, size_t max_memory,
                           size_t memory_keep_resident, size_t table_keep_resident);
int fuscia_can_reserve(uint64_t bytes);
#include "core_ext.h"
*/
import "C"

import (
	"fmt"
	"io"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// firstPointer is the value of the first field of *v, which must be an unsafe pointer-sized
// C pointer (checked by TestWasmtimeLayout).
func firstPointer[T any](v *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(v)) }

// captureOutput sends the guest's stdout and stderr to out and errw until the end it returns
// is called; what the guest writes after that is dropped. Call end once the attempt is over,
// before reading what out and errw hold.
//
// A component's writes may reach the host after its store is closed: wasmtime hands a
// component's stdout to a background writer, which calls back from a thread of its own (a
// write the guest did not flush before returning lands later). So the sinks are not freed by
// the attempt but by wasmtime, when it drops the last copy of the stream (fuscia_release).
func captureOutput(cfg *wasmtime.WasiConfig, out, errw io.Writer) (end func()) {
	so, se := &outputSink{w: out}, &outputSink{w: errw}
	C.fuscia_wasi_capture(firstPointer(cfg), C.uintptr_t(cgo.NewHandle(so)), C.uintptr_t(cgo.NewHandle(se)))
	runtime.KeepAlive(cfg)
	return func() {
		so.end()
		se.end()
	}
}

// outputSink passes a guest's output to w until the attempt ends.
type outputSink struct {
	mu    sync.Mutex
	w     io.Writer
	ended bool
}

func (s *outputSink) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		// The writers never fail and never keep p, so the guest's bytes are not copied first.
		_, _ = s.w.Write(p)
	}
}

func (s *outputSink) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}

//export fusciaWasiWrite
func fusciaWasiWrite(h C.uintptr_t, buf *C.uchar, n C.size_t) C.ptrdiff_t {
	cgo.Handle(h).Value().(*outputSink).write(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n)))
	return C.ptrdiff_t(n)
}

//export fusciaWasiRelease
func fusciaWasiRelease(h C.uintptr_t) { cgo.Handle(h).Delete() }

// stopFlag is a C int32 the epoch callback reads at every tick; setting it makes the guest
// trap at the next tick.
type stopFlag struct{ p *C.int32_t }

func newStopFlag() stopFlag { return stopFlag{(*C.int32_t)(C.calloc(1, 4))} }

func (f stopFlag) set() { atomic.StoreInt32((*int32)(unsafe.Pointer(f.p)), 1) }

func (f stopFlag) isSet() bool { return atomic.LoadInt32((*int32)(unsafe.Pointer(f.p))) != 0 }

// free releases the flag; only after the store that reads it is closed.
func (f stopFlag) free() { C.free(unsafe.Pointer(f.p)) }

// interruptOn makes store check flag at every epoch tick, starting at the next one.
func interruptOn(store *wasmtime.Store, flag stopFlag) {
	C.fuscia_store_interrupt_on(firstPointer(store), flag.p)
	runtime.KeepAlive(store)
	store.SetEpochDeadline(1)
}

// The pooling allocator (issue 4, docs/performance.md). By default wasmtime maps, guards and
// unmaps every instance's memory and table per attempt; with a pool it reserves slots once and
// reuses them, keeping a module's copy-on-write image mapped in the slot it last used and
// resetting the memory in place. A tiny attempt costs a third of what it did, and a Go guest,
// whose heap stays resident, no longer page-faults through it on every attempt.
//
// The pool does not change compiled code (wasmtime's documentation: .cwasm files work with
// and without it), so it is not part of Host.configID.

// poolConfig sizes the pooling allocator.
type poolConfig struct {
	// slots is how many instances, linear memories and tables may exist at once, across all
	// stores. Instantiating beyond it fails with wasmtime's "maximum concurrent limit of N for
	// core instances reached". Each memory slot reserves (never commits) 4 GiB of address
	// space plus a 32 MiB guard, wasmtime's defaults for 32-bit memories.
	slots uint32
	// maxMemory is the most any linear memory may grow to. Per-call caps (Env.MaxMemory) are
	// the store's limiter's, below it.
	maxMemory uint64
	// memoryKeepResident and tableKeepResident are how many bytes of a freed slot are zeroed
	// (or reset to the module's image) and kept in RAM instead of returned to the kernel: a
	// guest that fits never page-faults on its heap again, at the price of that much resident
	// memory per slot used so far.
	memoryKeepResident uint64
	tableKeepResident  uint64
}

// defaultPool is the pool New configures: room for a few hundred attempts at once on a small
// machine, memories up to the 32-bit limit (so that any max_memory a manifest may ask for still
// works), and 8 MiB kept resident, which holds a Go guest's runtime and first heap arena.
func defaultPool() poolConfig {
	return poolConfig{slots: 256, maxMemory: 4 << 30, memoryKeepResident: 8 << 20, tableKeepResident: 64 << 10}
}

// reservation is an upper bound of the address space p reserves: memory slots with their
// guards, tables, and a margin for wasmtime's other pools.
func (p poolConfig) reservation() uint64 {
	const slotBytes = 4<<30 + 64<<20
	return uint64(p.slots)*slotBytes + 1<<30
}

// usePooling makes engines built from cfg allocate instances from a pool sized by p, when its
// address space can be reserved now, and reports whether it did. wasmtime aborts the process
// when an engine's pool cannot be mapped (RLIMIT_AS, a small virtual address space, or the
// pools of closed Hosts that the Go GC has not finalized yet: wasmtime-go's FuncWrap leaves
// FuncTypes that hold the engine until they are collected), so New tries the reservation first
// and falls back to wasmtime's on-demand allocator, which works the same, only slower.
func usePooling(cfg *wasmtime.Config, p poolConfig) bool {
	if C.fuscia_can_reserve(C.uint64_t(p.reservation())) == 0 {
		return false
	}
	C.fuscia_config_pooling(firstPointer(cfg), C.uint32_t(p.slots), C.size_t(p.maxMemory),
		C.size_t(p.memoryKeepResident), C.size_t(p.tableKeepResident))
	runtime.KeepAlive(cfg)
	return true
}

// instancePtr is the C value wasmtime-go keeps as the first field of an Instance (checked by
// TestWasmtimeLayout).
func instancePtr(inst *wasmtime.Instance) *C.wasmtime_instance_t {
	return (*C.wasmtime_instance_t)(unsafe.Pointer(inst))
}

func contextPtr(store *wasmtime.Store) *C.wasmtime_context_t {
	return (*C.wasmtime_context_t)(unsafe.Pointer(store.Context()))
}

// trapError is a trap a guest raised, with wasmtime's message.
type trapError struct{ msg string }

func (e *trapError) Error() string { return e.msg }

// callExport calls inst's function export name with i32 arguments and at most one result (an
// i32 zero-extended, or an i64). It is wasmtime-go's GetFunc(…).Call(…) without the objects
// those make per call (an Extern, a FuncType and its ValTypes, each with a finalizer: ≈ 6% of
// a Go guest's attempt, docs/performance.md). newModule has checked the types of the ABI's
// exports. A trap comes back as a *trapError, any other failure (WASI's exit) as a
// *wasmtimeError. A panic in a host import ends the call with a trap, as wasmtime-go's own
// trampoline reports it, instead of being raised again here.
func callExport(store *wasmtime.Store, inst *wasmtime.Instance, name string, results int, args ...int32) (int64, error) {
	var argv [2]C.int32_t
	for i, a := range args {
		argv[i] = C.int32_t(a)
	}
	var result C.int64_t
	var trap *C.wasm_trap_t
	var missing C.int
	err := C.fuscia_call_export(contextPtr(store), instancePtr(inst), stringPtr(name), C.size_t(len(name)),
		&argv[0], C.size_t(len(args)), C.size_t(results), &result, &trap, &missing)
	runtime.KeepAlive(store)
	runtime.KeepAlive(inst)
	switch {
	case missing != 0:
		return 0, fmt.Errorf("the module has no function %s taking %d i32 arguments", name, len(args))
	case trap != nil:
		var msg C.wasm_byte_vec_t
		C.wasm_trap_message(trap, &msg)
		text := C.GoStringN(msg.data, C.int(max(int(msg.size)-1, 0))) // without its NUL
		C.wasm_byte_vec_delete(&msg)
		C.wasm_trap_delete(trap)
		return 0, &trapError{msg: text}
	case err != nil:
		return 0, takeError(err)
	}
	return int64(result), nil
}

// globalI64 reads inst's i64 global export name; false when there is none.
func globalI64(store *wasmtime.Store, inst *wasmtime.Instance, name string) (int64, bool) {
	var v C.int64_t
	ok := C.fuscia_global_i64(contextPtr(store), instancePtr(inst), stringPtr(name), C.size_t(len(name)), &v)
	runtime.KeepAlive(store)
	runtime.KeepAlive(inst)
	return int64(v), bool(ok)
}

// coreLayout is what core_ext.h declares, for TestComponentLayout to compare with wasmtime's
// headers.
func coreLayout() map[string]uintptr {
	var inst C.wasmtime_instance_t
	var f C.wasmtime_func_t
	var e C.wasmtime_extern_t
	var v C.wasmtime_val_t
	return map[string]uintptr{
		"sizeof(wasmtime_instance_t)":     unsafe.Sizeof(inst),
		"sizeof(wasmtime_func_t)":         unsafe.Sizeof(f),
		"sizeof(wasmtime_extern_t)":       unsafe.Sizeof(e),
		"offsetof(wasmtime_extern_t, of)": unsafe.Offsetof(e.of),
		"sizeof(wasmtime_extern_union_t)": unsafe.Sizeof(e.of),
		"sizeof(wasmtime_val_t)":          unsafe.Sizeof(v),
		"offsetof(wasmtime_val_t, of)":    unsafe.Offsetof(v.of),
		"sizeof(wasmtime_valunion_t)":     unsafe.Sizeof(v.of),
		"WASMTIME_EXTERN_FUNC":            C.WASMTIME_EXTERN_FUNC,
		"WASMTIME_EXTERN_GLOBAL":          C.WASMTIME_EXTERN_GLOBAL,
		"WASMTIME_I32":                    C.WASMTIME_I32,
		"WASMTIME_I64":                    C.WASMTIME_I64,
	}
}
