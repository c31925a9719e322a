//go:build wasip1 && !fuscia_nopreinit

package guest

import "runtime"

// exportPreinit asks the host to pre-initialize the component (docs/reference/abi-v1.md): to
// run _initialize — the Go runtime's start and every package's init, which registers the
// handlers — once when it loads the module, then this function, and to start every attempt from
// a snapshot of the memory they left instead of running them again. The SDK needs nothing an
// attempt provides before the first request, so the snapshot holds what every attempt would
// have built, and more: the JSON codecs that every call needs (registry.prepare), which an
// attempt would otherwise build afresh for each request.
//
// The collection at the end leaves the heap with free room, as it would be after a few calls,
// so that a small call allocates without growing linear memory: a growth in an attempt costs
// the host a change of the memory's protection when the attempt ends (about a millisecond on a
// virtual machine), more than the call itself.
//
// What a component gives up (docs/wasm.md): the runtime's pseudo-random generator is seeded
// in _initialize, so math/rand's top-level functions and map iteration order repeat from one
// attempt to the next (crypto/rand does not), and an init function must not call the host or
// write to stdout or stderr (either makes the host run the module without a snapshot). Build
// with -tags fuscia_nopreinit to leave this export out and have _initialize run in every
// attempt.
//
//go:wasmexport fuscia_preinit
func exportPreinit() {
	handlers.prepare()
	runtime.GC()
}
