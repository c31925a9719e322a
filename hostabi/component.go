package hostabi

// Components of the component model (manifest "abi": 2) next to ABI v1's core modules: the
// same Load (digest check, disk cache keyed by digest and engine configuration) and the same
// Invoke (fresh store and instance per attempt, epoch interruption, the memory limiter, fuel,
// WASI with the node's capabilities, the result model). Only the instance differs: a
// component is instantiated by the component linker of component_ext.go and called with the
// world's typed request (world.go).

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/lang/schema"
)

// componentHeader is the preamble of a component binary: the Wasm magic, version 0x0d and
// layer 1 (the component model's Binary.md). A core module has version 1, layer 0.
var componentHeader = []byte{0x00, 'a', 's', 'm', 0x0d, 0x00, 0x01, 0x00}

// isComponent says whether wasm is a component binary rather than a core module.
func isComponent(wasm []byte) bool {
	return len(wasm) >= 8 && bytes.Equal(wasm[:4], componentHeader[:4]) && wasm[6] == 1 && wasm[7] == 0
}

// linkerForComponents returns the host's component linker, made at the first component: WASI 0.2
// defines hundreds of functions, which a host that runs only core modules need not pay for.
func (h *Host) linkerForComponents() (*componentLinker, error) {
	h.compOnce.Do(func() {
		h.compLinker, h.compLinkerErr = newComponentLinker(h.engine, h)
	})
	return h.compLinker, h.compLinkerErr
}

func (h *Host) loadComponent(name, wasmPath, digest string, wasm []byte) (*Module, error) {
	if _, err := h.linkerForComponents(); err != nil {
		return nil, fmt.Errorf("load component %s: %w", name, err)
	}
	if h.cacheDir != "" {
		if path, err := h.entryFromCache(digest, kindComponent); err == nil {
			if comp, err := deserializeComponentFile(h.engine, path); err == nil {
				return &Module{Name: name, Digest: digest, Loaded: "cache", comp: comp}, nil
			}
		}
		// A missing, foreign or damaged entry is rebuilt below; never trusted.
	}
	comp, err := compileComponentGuarded(h.engine, wasm)
	if err != nil {
		return nil, fmt.Errorf("load component %s: compile %s: %w", name, wasmPath, err)
	}
	if h.cacheDir != "" {
		// A cache that cannot be written costs the next process a compile, nothing more.
		if body, err := comp.serialize(); err == nil {
			_ = h.toCache(digest, kindComponent, body)
		}
	}
	return &Module{Name: name, Digest: digest, Loaded: "compiled", comp: comp}, nil
}

// invokeComponent runs request in a fresh instance of c.module's component in store, which
// Invoke has prepared (WASI, limits, interruption).
func (c *call) invokeComponent(store *wasmtime.Store, request []byte, flag stopFlag, times *invokeTimes) ([]byte, error) {
	m := c.module
	req, err := ParseRequest(request)
	if err != nil {
		return nil, errorf(Fatal, "component %s: %v", m.Name, err)
	}
	linker, err := c.host.linkerForComponents()
	if err != nil {
		return nil, errorf(Fatal, "component %s: %v", m.Name, err)
	}
	if err := linker.fitsWorld(m.comp); err != nil {
		return nil, errorf(Fatal, "component %s: %v", m.Name, err)
	}
	key := storeKeyOf(store)
	c.host.componentCalls.Store(key, c)
	defer c.host.componentCalls.Delete(key)

	// result starts zeroed (a bool false, nothing to free), so it can be freed whatever
	// happened: wasmtime fills it when the call returns, even if post-return then traps.
	var arg, result cval
	req.lower(&arg)
	defer freeVal(&arg)
	defer freeVal(&result)
	times.instantiating()
	instantiated, stage, err := linker.call(store, m.comp, &arg, &result)
	if c.host.onInstantiate != nil && instantiated > 0 {
		c.host.onInstantiate(instantiated)
	}
	if times != nil && instantiated > 0 {
		times.instantiatedAt(times.start.Add(instantiated))
	}
	if err != nil {
		return nil, c.componentFailure(stage, err, flag)
	}
	if c.violation != "" {
		return nil, errorf(SandboxViolation, "component %s: %s", m.Name, c.violation)
	}
	resp, err := liftResponse(&result)
	if err != nil {
		return nil, errorf(Fatal, "component %s: its answer does not fit world %s: %v", m.Name, World, err)
	}
	if asked := req.Target.Trigger != nil; resp.Trigger != asked {
		what := map[bool]string{false: "task", true: "trigger"}
		return nil, errorf(Fatal, "component %s: it answered a %s response to a %s request", m.Name, what[resp.Trigger], what[asked])
	}
	return resp.JSON, nil
}

// componentFailure explains why a component did not answer.
func (c *call) componentFailure(stage string, err error, flag stopFlag) *Error {
	m := c.module
	if flag.isSet() {
		e := ctxError(c.ctx, m)
		if c.hostFault != "" {
			// The host's refusal came first; the guest ran on until its deadline.
			e.Message += " (after a host import refused it: " + c.hostFault + ")"
		}
		return e
	}
	if c.violation != "" {
		return errorf(SandboxViolation, "component %s: %s", m.Name, c.violation)
	}
	if c.hostFault != "" {
		return errorf(Fatal, "component %s: %s", m.Name, c.hostFault)
	}
	var werr *wasmtimeError
	if errors.As(err, &werr) && werr.exited {
		return errorf(Fatal, "component %s: the guest exited with status %d in %s%s", m.Name, werr.exitStatus, stage, c.stderr.lastLine())
	}
	if trappedInGrowGuard(err.Error()) {
		return errorf(Fatal, "component %s: memory limit of %s (max_memory) exceeded: memory.grow was denied; raise max_memory or use less", m.Name, schema.FormatSize(c.memoryLimit()))
	}
	if field, ok := trappedInArgGuard(err.Error()); ok {
		return errorf(Fatal, "component %s: %s: an argument is larger than the host accepts (%s)", m.Name, field, argLimitsText)
	}
	msg := trapSummary(err.Error())
	if strings.Contains(msg, "all fuel consumed") {
		return errorf(Fatal, "component %s: the guest used up its CPU budget of %d fuel (max_fuel)", m.Name, c.env.MaxFuel)
	}
	if stage == "instantiate" && strings.Contains(msg, "exceeds memory limits") {
		// wasmtime: "memory minimum size of 145 pages exceeds memory limits".
		return errorf(Fatal, "component %s: its initial memory is larger than the memory limit of %s (max_memory): %s; raise max_memory",
			m.Name, schema.FormatSize(c.memoryLimit()), msg)
	}
	if stage == "instantiate" && strings.Contains(msg, "memory count too high") {
		// wasmtime: "resource limit exceeded: memory count too high at 5".
		return errorf(Fatal, "component %s: it defines more than %d linear memories, the most one attempt may have (each up to max_memory): %s",
			m.Name, maxMemoriesPerAttempt, msg)
	}
	if stage == "call" && (strings.Contains(msg, "type mismatch") || strings.Contains(msg, "argument(s)") || strings.Contains(msg, "result(s)")) {
		// wasmtime checks values against the component's own types: "type mismatch: expected
		// u32, found record". Our values are the world's, so the component's types are not.
		if c.lastImport != "" {
			return errorf(Fatal, "component %s: it imports %s with another type than world %s declares (%s); rebuild it against hostabi/wit/fuscia.wit",
				m.Name, c.lastImport, World, msg)
		}
		return errorf(Fatal, "component %s: its export `call` is not func(request: request) -> response of world %s (%s); rebuild it against hostabi/wit/fuscia.wit",
			m.Name, World, msg)
	}
	if stage == "instantiate" {
		// wasmtime's first line names what did not link ("component imports instance
		// `wasi:cli/nope@0.2.0`, but a matching implementation was not found in the linker");
		// the causes below it say why.
		if head := firstLine(err.Error()); head != msg && !strings.Contains(head, "wasm backtrace") && !strings.HasPrefix(head, "error while executing") {
			msg = head + ": " + msg
		}
		return errorf(Fatal, "component %s: cannot instantiate it: %s", m.Name, msg)
	}
	return errorf(Fatal, "component %s: the guest trapped in %s: %s%s", m.Name, stage, msg, c.stderr.lastLine())
}
