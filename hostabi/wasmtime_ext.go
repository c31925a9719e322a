package hostabi

// This file reaches under wasmtime-go for three things its v39.0.1 API lacks: WASI stdout and
// stderr into a Go writer (wasi_config_set_std{out,err}_custom), and an epoch-deadline
// callback per store so that one attempt can be interrupted without touching the others
// (wasmtime_store_epoch_deadline_callback). Both need the C pointer wasmtime-go keeps in the
// unexported first field of WasiConfig and Store. TestWasmtimeLayout fails loudly if a
// wasmtime-go upgrade moves those fields; keep everything that depends on them here.

/*
#include <stdint.h>
#include <stdlib.h>
void fuscia_wasi_capture(void *config, uintptr_t out, uintptr_t err);
void fuscia_store_interrupt_on(void *store, int32_t *flag);
*/
import "C"

import (
	"io"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// firstPointer is the value of the first field of *v, which must be an unsafe pointer-sized
// C pointer (checked by TestWasmtimeLayout).
func firstPointer[T any](v *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(v)) }

// captureOutput sends the guest's stdout and stderr to out and errw. The handles it returns
// must be deleted after the store that took cfg is closed.
func captureOutput(cfg *wasmtime.WasiConfig, out, errw io.Writer) (cgo.Handle, cgo.Handle) {
	ho, he := cgo.NewHandle(out), cgo.NewHandle(errw)
	C.fuscia_wasi_capture(firstPointer(cfg), C.uintptr_t(ho), C.uintptr_t(he))
	runtime.KeepAlive(cfg)
	return ho, he
}

//export fusciaWasiWrite
func fusciaWasiWrite(h C.uintptr_t, buf *C.uchar, n C.size_t) C.ptrdiff_t {
	w := cgo.Handle(h).Value().(io.Writer)
	// The writers never fail and never keep buf, so the guest's bytes are not copied first.
	_, _ = w.Write(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n)))
	return C.ptrdiff_t(n)
}

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
