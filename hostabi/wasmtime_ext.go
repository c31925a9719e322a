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
*/
import "C"

import (
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
