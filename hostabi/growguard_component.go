package hostabi

// The grow guard of a component. A component's memories belong to the core module instances
// inside it, and the component API gives the host no way to read their globals, so the
// recording guard of core modules cannot report to it. Instead each core module is rewritten
// in growguard.go's trap mode: a growth that the store limiter (the cap, max_memory) refuses
// traps in a helper named growGuardTrapName, and componentFailure turns that trap into the
// memory limit's error, whatever the guest would have done with the -1. The same rewrite
// guards the calls of the host imports that carry bytes (argguard.go).
//
// A component binary is its preamble (componentHeader) and sections, each an id byte, a u32
// LEB128 size and a body (the component model's Binary.md). A core module section (id 1)
// holds a complete core module, a component section (id 4) a complete nested component; the
// others refer to what they define by index, never by byte offset, so rewriting a module's
// bytes changes nothing else but the section sizes.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// componentGuardVersion is part of a component's cache key: a change to this rewrite, or to
// the trap mode it applies, recompiles every component (a string: it is spliced into the
// constant kindComponent).
const componentGuardVersion = "3"

// Section ids of the component binary format that the rewrite looks into.
const (
	compSecCoreModule = 1
	compSecComponent  = 4
)

// maxComponentNesting bounds the recursion into nested components. Toolchains nest one or two
// levels; only a hostile file goes deeper.
const maxComponentNesting = 32

// errComponentGuard says the component could not be walked; it runs as it is.
var errComponentGuard = errors.New("cannot instrument the component's memory.grow")

// guardComponent returns the component wasm with every core module inside it, at any depth of
// nesting, rewritten in the trap mode of growguard.go. A module that the rewrite does not
// support stays as it is; an error (wrapping errComponentGuard) means the component's own
// structure could not be read, and the caller compiles the original.
func guardComponent(wasm []byte) ([]byte, error) {
	var out pieces
	changed, err := guardComponentAt(wasm, 0, &out)
	if err != nil {
		return nil, err
	}
	if !changed {
		return wasm, nil
	}
	return out.join(), nil
}

// pieces is a binary being assembled: slices of the input and rewritten modules, joined once
// at the end, so that a nested component is not copied once per level of nesting.
type pieces struct {
	parts [][]byte
	n     int
}

func (p *pieces) add(b []byte) {
	p.parts = append(p.parts, b)
	p.n += len(b)
}

func (p *pieces) join() []byte {
	out := make([]byte, 0, p.n)
	for _, b := range p.parts {
		out = append(out, b...)
	}
	return out
}

// guardComponentAt adds the rewrite of the component wasm, found at depth levels of nesting,
// to out, and reports whether any module in it changed.
func guardComponentAt(wasm []byte, depth int, out *pieces) (bool, error) {
	if !bytes.HasPrefix(wasm, componentHeader) {
		return false, fmt.Errorf("%w: not a component of binary version 0x0d, layer 1", errComponentGuard)
	}
	if depth > maxComponentNesting {
		return false, fmt.Errorf("%w: components nested deeper than %d", errComponentGuard, maxComponentNesting)
	}
	flows, err := hostFlows(wasm, depth == 0)
	if err != nil {
		if errors.Is(err, errHostCallsUnguarded) || (depth == 0 && bytes.Contains(wasm, []byte(hostImportPrefix))) {
			// A component that may call the host's guarded functions must be read whole.
			return false, fmt.Errorf("%w: %v", errHostCallsUnguarded, err)
		}
		flows = nil
	}
	out.add(wasm[:len(componentHeader)])
	changed := false
	modules := 0
	r := &wasmReader{b: wasm, off: len(componentHeader)}
	for r.more() {
		_, id, body, err := r.componentSection()
		if err != nil {
			return false, err
		}
		switch id {
		case compSecCoreModule:
			// A module the rewrite does not understand runs unguarded, under the same cap,
			// unless it receives a host function whose arguments the host checks.
			wired := flows[modules]
			modules++
			guarded, err := guardGrowthTrapWith(body, wired)
			if err == nil && len(guarded) > math.MaxUint32 {
				err = fmt.Errorf("a module of %d bytes", len(guarded))
			}
			switch {
			case err == nil:
				changed = changed || !bytes.Equal(guarded, body)
				body = guarded
			case len(wired) > 0:
				return false, fmt.Errorf("%w: a core module that receives the host's %s cannot be rewritten: %v", errHostCallsUnguarded, firstHost(wired), err)
			}
		case compSecComponent:
			var nested pieces
			c, err := guardComponentAt(body, depth+1, &nested)
			if err != nil {
				return false, err
			}
			if nested.n > math.MaxUint32 {
				return false, fmt.Errorf("%w: a nested component of %d bytes", errComponentGuard, nested.n)
			}
			changed = changed || c
			out.add(appendU32([]byte{id}, uint32(nested.n)))
			out.parts = append(out.parts, nested.parts...)
			out.n += nested.n
			continue
		}
		out.add(appendU32([]byte{id}, uint32(len(body))))
		out.add(body)
	}
	return changed, nil
}

// compileComponentGuarded compiles wasm with the memory.grow instructions of its core modules
// guarded. A component the rewrite cannot walk, or whose rewrite wasmtime refuses, is compiled
// as it is: it still runs under the same cap, but a guest that ignores a refusal gets away
// with it. One whose calls of the host's guarded functions cannot all be guarded
// (errHostCallsUnguarded) is refused.
func compileComponentGuarded(engine *wasmtime.Engine, wasm []byte) (*component, error) {
	guarded, err := guardComponent(wasm)
	if errors.Is(err, errHostCallsUnguarded) {
		return nil, err
	}
	if err == nil {
		comp, cerr := compileComponent(engine, guarded)
		if cerr == nil {
			return comp, nil
		}
		if flows, ferr := hostFlows(wasm, true); ferr == nil && len(flows) > 0 {
			return nil, fmt.Errorf("%w: wasmtime refuses the guarded component: %v", errHostCallsUnguarded, cerr)
		}
	}
	return compileComponent(engine, wasm)
}

// firstHost names a host function of wired, for a message.
func firstHost(wired map[importKey]string) string {
	best := ""
	for _, h := range wired {
		if best == "" || h < best {
			best = h
		}
	}
	return best
}

// trappedInGrowGuard says whether the wasmtime error msg is a trap in a grow helper of the
// trap mode: the first frame of its wasm backtrace, "0: 0x4d8 - Main!fuscia:memory_denied"
// (the module's name, when it has one, before the "!").
func trappedInGrowGuard(msg string) bool {
	fn, ok := trapFrameFunc(msg)
	return ok && (fn == growGuardTrapName || strings.HasSuffix(fn, "!"+growGuardTrapName))
}

// trapFrameFunc returns the function of the first frame of the wasm backtrace in the wasmtime
// error msg, "Main!fuscia:memory_denied" for "0: 0x4d8 - Main!fuscia:memory_denied".
func trapFrameFunc(msg string) (string, bool) {
	_, trace, ok := strings.Cut(msg, "wasm backtrace:")
	if !ok {
		return "", false
	}
	for _, line := range strings.Split(trace, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		frame, ok := strings.CutPrefix(line, "0:")
		if !ok {
			return "", false
		}
		_, fn, ok := strings.Cut(frame, " - ")
		return strings.TrimSpace(fn), ok
	}
	return "", false
}
