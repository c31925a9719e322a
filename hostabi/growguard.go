package hostabi

// The grow guard makes a denied memory.grow visible to the host. wasmtime's store limiter
// denies a growth past max_memory by returning -1 to the guest, and its C API reports nothing
// to the embedder: a guest that ignored the -1 and answered would get away with it, although
// docs/reference/abi-v1.md says such an attempt fails "whatever the guest does next".
//
// So, before a module is compiled, every memory.grow instruction in it is replaced by a call to
// a small function added at the end of the module, one per memory the guest grows:
//
//	(func $grow (param $delta i32) (result i32) (local $r i32) (local $asked i64)
//	  (local.tee $r (memory.grow (local.get $delta)))
//	  (if (i32.eq (i32.const -1))
//	    (then
//	      (local.set $asked (i64.add (i64.extend_i32_u (memory.size)) (i64.extend_i32_u (local.get $delta))))
//	      (if (i64.gt_u (local.get $asked) (global.get $denied)) (then (global.set $denied (local.get $asked))))))
//	  (local.get $r))
//
// The global $denied, added too and exported as [growGuardExport], holds the largest size in
// pages a refused growth asked for; the host reads it when the guest returns or traps, and a
// size past the cap fails the attempt. A refusal below the cap (the module's own declared
// maximum) is the guest's business and is ignored. The guest cannot reach the global: its own
// code was validated against the original index spaces, in which the global does not exist.
//
// Nothing is renumbered: the type, function and global are appended after every existing one
// (imports always come first), so the only instructions that change are the memory.grows. The
// rewrite decodes every instruction of every body to find them, so a module that uses an
// encoding this file does not know (a newer proposal) is not rewritten; it runs as it is, and
// Invoke falls back to inferring a denial from the memory's size (docs/wasm.md).
//
// The core modules inside a component (growguard_component.go) get a second mode,
// [guardTrap], because the host cannot read a core instance's globals through the component
// API. There the helper traps instead of recording:
//
//	(func $fuscia:memory_denied (param $delta i32) (result i32) (local $r i32)
//	  (local.tee $r (memory.grow (local.get $delta)))
//	  (if (i32.eq (i32.const -1))
//	    (then (if (i64.le_u (i64.add (i64.extend_i32_u (memory.size)) (i64.extend_i32_u (local.get $delta)))
//	                        (i64.const MAX))
//	      (then unreachable))))
//	  (local.get $r))
//
// MAX is the memory's own declared maximum (65536 pages for a 32-bit memory without one): a
// refusal within it can only be the store limiter's, that is the cap's, and the trap ends the
// attempt before the guest can ignore it; a refusal past it is the guest's business and
// returns -1 as before. The helper is named [growGuardTrapName] in the module's name section,
// so wasmtime's backtrace names it as the frame that trapped, and the host tells a denied
// growth from any other trap by that name. No global and no export are added in this mode.
//
// The trap mode also guards the calls of the host imports whose arguments the host would
// lift at great cost (argguard.go): their helpers are appended with the grow helpers, in the
// order the rewrite meets them.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// growGuardExport names the global of a rewritten module that records refused growths. A
// module that exports this name itself is refused at load, so the export means "guarded".
const growGuardExport = "fuscia:grow_denied"

// growGuardVersion is part of the cache key: a change to the rewrite recompiles every module.
const growGuardVersion = 1

// growGuardTrapName is the name section's name of the helpers of the [guardTrap] mode: the
// function that a denied growth traps in.
const growGuardTrapName = "fuscia:memory_denied"

// guardMode says what a grow helper does with a refusal.
type guardMode int

const (
	// guardRecord records the size a refused growth asked for in an exported global.
	guardRecord guardMode = iota
	// guardTrap traps when the refusal is within the memory's own declared maximum.
	guardTrap
)

// errGuardUnsupported says the module uses an encoding the rewrite does not know.
var errGuardUnsupported = errors.New("cannot instrument memory.grow")

// errGuardReserved says the module exports the name the rewrite adds.
var errGuardReserved = fmt.Errorf("the module exports %q, a name the Fuscia host reserves", growGuardExport)

// Section ids of the core Wasm binary format.
const (
	secCustom   = 0
	secType     = 1
	secImport   = 2
	secFunction = 3
	secMemory   = 5
	secGlobal   = 6
	secExport   = 7
	secCode     = 10
)

// sectionRank is the position of a section in a module; the tag (13) and data count (12)
// sections sit between the numbered ones.
func sectionRank(id byte) float64 {
	switch id {
	case 13:
		return 5.5
	case 12:
		return 9.5
	}
	return float64(id)
}

type section struct {
	id   byte
	body []byte
}

// guardGrowth returns wasm rewritten as the file comment describes. The error wraps
// errGuardUnsupported when the module cannot be rewritten and should run as it is, and is
// errGuardReserved when it must not run at all.
func guardGrowth(wasm []byte) ([]byte, error) { return guardGrowthMode(wasm, guardRecord) }

// guardGrowthTrap returns wasm rewritten in the [guardTrap] mode; a module without a
// memory.grow or a call that argguard.go guards comes back as it is. The error wraps
// errGuardUnsupported.
func guardGrowthTrap(wasm []byte) ([]byte, error) { return guardGrowthTrapWith(wasm, nil) }

// guardGrowthTrapWith is guardGrowthTrap that also guards the imports flows names, which
// receive the host functions it maps them to (argflow.go), and replaces every reference to a
// guarded import by its guard.
func guardGrowthTrapWith(wasm []byte, flows map[importKey]string) ([]byte, error) {
	return guardGrowthModeWith(wasm, guardTrap, flows)
}

func guardGrowthMode(wasm []byte, mode guardMode) ([]byte, error) {
	return guardGrowthModeWith(wasm, mode, nil)
}

func guardGrowthModeWith(wasm []byte, mode guardMode, flows map[importKey]string) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || binary.LittleEndian.Uint32(wasm[4:8]) != 1 {
		return nil, fmt.Errorf("%w: not a core module of binary version 1", errGuardUnsupported)
	}
	var secs []section
	r := &wasmReader{b: wasm, off: 8}
	for r.more() {
		id := r.byte()
		n := r.u32()
		body := r.take(int(n))
		if r.err != nil {
			return nil, fmt.Errorf("%w: %v", errGuardUnsupported, r.err)
		}
		secs = append(secs, section{id, body})
	}

	m := guardModule{mode: mode, flows: flows}
	for _, s := range secs {
		if err := m.scan(s); err != nil {
			return nil, fmt.Errorf("%w: %v", errGuardUnsupported, err)
		}
	}
	if m.flowErr != nil {
		return nil, fmt.Errorf("%w: %v", errGuardUnsupported, m.flowErr)
	}
	// The guarded imports' other references (exports, element segments, initializers) are
	// redirected before the code, so that their guards exist when the code's are appended.
	var replaced map[int][]byte
	if len(m.guardedImports) > 0 {
		var err error
		if replaced, err = m.redirectSections(secs); err != nil {
			return nil, fmt.Errorf("%w: %v", errGuardUnsupported, err)
		}
	}
	if mode == guardRecord {
		if m.reserved {
			return nil, errGuardReserved
		}
		if !m.hasExport {
			return nil, fmt.Errorf("%w: no export section", errGuardUnsupported)
		}
	}
	code, err := m.rewriteCode()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errGuardUnsupported, err)
	}
	if len(m.helpers) > 0 && (!m.hasType || (!m.hasFunction && mode != guardTrap)) {
		return nil, fmt.Errorf("%w: code without type or function section", errGuardUnsupported)
	}
	if mode == guardTrap {
		if len(m.helpers) == 0 {
			return wasm, nil
		}
		for i, body := range replaced {
			secs[i].body = body
		}
		return m.trapModule(wasm[:8], secs, code), nil
	}

	out := append(make([]byte, 0, len(wasm)+len(wasm)/64+256), wasm[:8]...)
	globalDone := m.hasGlobal
	for _, s := range secs {
		if !globalDone && s.id != secCustom && sectionRank(s.id) > secGlobal {
			out = appendSection(out, secGlobal, m.globalSection(nil, 0))
			globalDone = true
		}
		body := s.body
		switch s.id {
		case secType:
			body = m.typeSection(s.body)
		case secFunction:
			body = m.functionSection(s.body)
		case secGlobal:
			body = m.globalSection(s.body, m.definedGlobals)
		case secExport:
			body = m.exportSection(s.body)
		case secCode:
			body = code
		}
		out = appendSection(out, s.id, body)
	}
	return out, nil
}

// guardModule is what the rewrite needs to know of a module.
type guardModule struct {
	mode guardMode

	hasType, hasFunction, hasGlobal, hasExport bool

	types           uint32 // type indices
	importedFuncs   uint32
	definedFuncs    uint32
	importedGlobals uint32
	definedGlobals  uint32
	exports         uint32
	memories        []memLimits // by memory index, imports first
	reserved        bool        // an export is named growGuardExport
	code            []byte      // the code section's body
	typeSec         []byte      // the type section's body

	// guardedImports are the imported functions whose calls argguard.go guards, by index
	// (the trap mode only).
	guardedImports map[uint32]guardedCall
	// flows are the imports that receive a guarded host function whatever their names
	// (argflow.go), and which one; flowErr says why one of them cannot be guarded.
	flows   map[importKey]string
	flowErr error

	// helpers are the grow functions to append, in function index order.
	helpers []growHelper
}

// growHelper is a function to append: the grow helper of a memory or, when call is set, the
// argument guard of an import.
type growHelper struct {
	memory uint32
	memLimits
	call *guardedCall
}

// memLimits is what the rewrite needs of a memory's type.
type memLimits struct {
	is64 bool
	// max is the declared maximum in pages, when hasMax.
	max    uint64
	hasMax bool
}

func (m *guardModule) scan(s section) error {
	r := &wasmReader{b: s.body}
	switch s.id {
	case secType:
		m.hasType = true
		m.typeSec = s.body
		m.types = r.u32()
		for i := uint32(0); i < m.types && r.err == nil; i++ {
			// Function types only: a GC module's recursive groups and subtypes would need
			// their index count worked out, and are not rewritten.
			if b := r.byte(); b != 0x60 {
				return fmt.Errorf("type %d has form 0x%02x", i, b)
			}
			for range 2 {
				n := r.u32()
				for j := uint32(0); j < n && r.err == nil; j++ {
					r.valType()
				}
			}
		}
	case secImport:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			module := r.take(int(r.u32()))
			field := r.take(int(r.u32()))
			switch kind := r.byte(); kind {
			case 0x00:
				if typ := r.u32(); r.err == nil {
					m.noteImport(module, field, typ)
				}
				m.importedFuncs++
			case 0x01:
				r.refType()
				r.limits()
			case 0x02:
				lim, err := r.memType()
				if err != nil {
					return err
				}
				m.memories = append(m.memories, lim)
			case 0x03:
				r.valType()
				r.byte()
				m.importedGlobals++
			case 0x04:
				r.byte()
				r.u32()
			default:
				return fmt.Errorf("import of kind 0x%02x", kind)
			}
		}
	case secFunction:
		m.hasFunction = true
		m.definedFuncs = r.u32()
	case secMemory:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			lim, err := r.memType()
			if err != nil {
				return err
			}
			m.memories = append(m.memories, lim)
		}
	case secGlobal:
		m.hasGlobal = true
		m.definedGlobals = r.u32()
	case secExport:
		m.hasExport = true
		m.exports = r.u32()
		for i := uint32(0); i < m.exports && r.err == nil; i++ {
			if string(r.take(int(r.u32()))) == growGuardExport {
				m.reserved = true
			}
			r.byte()
			r.u32()
		}
	case secCode:
		m.code = s.body
	}
	return r.err
}

// helperIndex is the function index of the grow helper of memory mem, added on first use.
func (m *guardModule) helperIndex(mem uint32) (uint32, error) {
	if int(mem) >= len(m.memories) {
		return 0, fmt.Errorf("memory.grow of memory %d, which does not exist", mem)
	}
	for i, h := range m.helpers {
		if h.call == nil && h.memory == mem {
			return m.importedFuncs + m.definedFuncs + uint32(i), nil
		}
	}
	m.helpers = append(m.helpers, growHelper{memory: mem, memLimits: m.memories[mem]})
	return m.importedFuncs + m.definedFuncs + uint32(len(m.helpers)-1), nil
}

// guardGlobal is the index of the added global.
func (m *guardModule) guardGlobal() uint32 { return m.importedGlobals + m.definedGlobals }

// helperType is the index of the added type for an i32 (or, with is64, i64) memory.
func (m *guardModule) helperType(is64 bool) uint32 {
	if is64 && m.needs(false) {
		return m.types + 1
	}
	return m.types
}

// needs reports whether a helper of that width is added.
func (m *guardModule) needs(is64 bool) bool {
	for _, h := range m.helpers {
		if h.call == nil && h.is64 == is64 {
			return true
		}
	}
	return false
}

// rewriteCode returns the code section with every memory.grow replaced and the helpers'
// bodies appended.
func (m *guardModule) rewriteCode() ([]byte, error) {
	if m.code == nil && len(m.guardedImports) == 0 {
		return nil, nil
	}
	if m.code == nil {
		m.code = []byte{0} // no bodies: the module's guards will be its only functions
	}
	r := &wasmReader{b: m.code}
	n := r.u32()
	if r.err == nil && n != m.definedFuncs {
		return nil, fmt.Errorf("%d bodies for %d functions", n, m.definedFuncs)
	}
	var bodies []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		body := r.take(int(size))
		if r.err != nil {
			break
		}
		nb, err := m.rewriteBody(body)
		if err != nil {
			return nil, fmt.Errorf("function %d: %v", m.importedFuncs+i, err)
		}
		bodies = appendU32(bodies, uint32(len(nb)))
		bodies = append(bodies, nb...)
	}
	if r.err != nil {
		return nil, r.err
	}
	for _, h := range m.helpers {
		var hb []byte
		switch {
		case h.call != nil:
			hb = h.call.body()
		case m.mode == guardTrap:
			hb = trapHelperBody(h)
		default:
			hb = m.helperBody(h)
		}
		bodies = appendU32(bodies, uint32(len(hb)))
		bodies = append(bodies, hb...)
	}
	out := appendU32(nil, n+uint32(len(m.helpers)))
	return append(out, bodies...), nil
}

// rewriteBody replaces the memory.grow instructions of one function body.
func (m *guardModule) rewriteBody(body []byte) ([]byte, error) {
	r := &wasmReader{b: body}
	groups := r.u32()
	for i := uint32(0); i < groups && r.err == nil; i++ {
		r.u32()
		r.valType()
	}
	var out []byte
	last := 0
	for r.err == nil && r.more() {
		at := r.off
		op := r.byte()
		if op == 0x40 { // memory.grow memidx
			mem := r.u32()
			if r.err != nil {
				break
			}
			idx, err := m.helperIndex(mem)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = make([]byte, 0, len(body)+8)
			}
			out = append(out, body[last:at]...)
			out = append(out, 0x10) // call
			out = appendU32(out, idx)
			last = r.off
			continue
		}
		if (op == 0x10 || op == 0x12 || op == 0xD2) && len(m.guardedImports) > 0 { // call, return_call, ref.func funcidx
			fn := r.u32()
			if r.err != nil {
				break
			}
			if idx, ok := m.callHelperIndex(fn); ok {
				if out == nil {
					out = make([]byte, 0, len(body)+8)
				}
				out = append(out, body[last:at]...)
				out = append(out, op)
				out = appendU32(out, idx)
				last = r.off
			}
			continue
		}
		if err := r.skipInstr(op); err != nil {
			return nil, fmt.Errorf("offset %d: %v", at, err)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if out == nil {
		return body, nil
	}
	return append(out, body[last:]...), nil
}

// helperBody is the grow helper of the file comment, for h's memory.
func (m *guardModule) helperBody(h growHelper) []byte {
	g := m.guardGlobal()
	mem := appendU32(nil, h.memory)
	var b []byte
	if h.is64 {
		// Locals: $r i64, $asked i64.
		b = append(b, 0x01, 0x02, 0x7E)
		b = append(b, 0x20, 0x00, 0x40)
		b = append(b, mem...)
		b = append(b, 0x22, 0x01, 0x42, 0x7F, 0x51, 0x04, 0x40) // local.tee 1, i64.const -1, i64.eq, if
		b = append(b, 0x3F)
		b = append(b, mem...)
		b = append(b, 0x20, 0x00, 0x7C, 0x22, 0x02) // local.get 0, i64.add, local.tee 2
		// An addition that wraps asked for more than any memory can hold.
		b = append(b, 0x20, 0x00, 0x54, 0x04, 0x40, 0x42, 0x7F, 0x21, 0x02, 0x0B) // lt_u 0 → asked = -1
	} else {
		// Locals: $r i32, $asked i64.
		b = append(b, 0x02, 0x01, 0x7F, 0x01, 0x7E)
		b = append(b, 0x20, 0x00, 0x40)
		b = append(b, mem...)
		b = append(b, 0x22, 0x01, 0x41, 0x7F, 0x46, 0x04, 0x40) // local.tee 1, i32.const -1, i32.eq, if
		b = append(b, 0x3F)
		b = append(b, mem...)
		b = append(b, 0xAD, 0x20, 0x00, 0xAD, 0x7C, 0x21, 0x02) // extend_u, local.get 0, extend_u, i64.add, local.set 2
	}
	b = append(b, 0x20, 0x02, 0x23) // local.get 2, global.get g
	b = appendU32(b, g)
	b = append(b, 0x56, 0x04, 0x40, 0x20, 0x02, 0x24) // i64.gt_u, if, local.get 2, global.set g
	b = appendU32(b, g)
	b = append(b, 0x0B, 0x0B, 0x20, 0x01, 0x0B) // end, end, local.get 1, end
	return b
}

// trapHelperBody is the grow helper of the [guardTrap] mode (the file comment), for h's memory.
func trapHelperBody(h growHelper) []byte {
	mem := appendU32(nil, h.memory)
	var b []byte
	if h.is64 {
		// Locals: $r i64, $asked i64.
		b = append(b, 0x01, 0x02, 0x7E)
		b = append(b, 0x20, 0x00, 0x40)
		b = append(b, mem...)
		b = append(b, 0x22, 0x01, 0x42, 0x7F, 0x51, 0x04, 0x40) // local.tee 1, i64.const -1, i64.eq, if
		if h.hasMax {
			b = append(b, 0x3F)
			b = append(b, mem...)
			// asked = size + delta; within the maximum unless the addition wrapped (asked < delta).
			b = append(b, 0x20, 0x00, 0x7C, 0x22, 0x02, 0x20, 0x00, 0x5A) // local.get 0, i64.add, local.tee 2, local.get 0, i64.ge_u
			b = append(b, 0x20, 0x02, 0x42)                               // local.get 2, i64.const max
			b = appendS64(b, int64(min(h.max, math.MaxInt64)))
			b = append(b, 0x58, 0x71, 0x04, 0x40, 0x00, 0x0B) // i64.le_u, i32.and, if unreachable end
		} else {
			// No declared maximum: any refusal is the cap's.
			b = append(b, 0x00)
		}
	} else {
		// Locals: $r i32.
		b = append(b, 0x01, 0x01, 0x7F)
		b = append(b, 0x20, 0x00, 0x40)
		b = append(b, mem...)
		b = append(b, 0x22, 0x01, 0x41, 0x7F, 0x46, 0x04, 0x40) // local.tee 1, i32.const -1, i32.eq, if
		b = append(b, 0x3F)
		b = append(b, mem...)
		b = append(b, 0xAD, 0x20, 0x00, 0xAD, 0x7C, 0x42) // extend_u, local.get 0, extend_u, i64.add, i64.const max
		// Without a declared maximum, the most pages a 32-bit memory can have.
		max := uint64(1 << 16)
		if h.hasMax {
			max = h.max
		}
		b = appendS64(b, int64(min(max, math.MaxInt64)))
		b = append(b, 0x58, 0x04, 0x40, 0x00, 0x0B) // i64.le_u, if unreachable end
	}
	return append(b, 0x0B, 0x20, 0x01, 0x0B) // end, local.get 1, end
}

// trapModule assembles a module rewritten in the [guardTrap] mode from its sections, code
// being the rewritten code section, and names the helpers in its name section.
func (m *guardModule) trapModule(header []byte, secs []section, code []byte) []byte {
	size := len(header) + len(code) + 64*len(m.helpers) + 64
	for _, s := range secs {
		size += len(s.body) + 6
	}
	out := append(make([]byte, 0, size), header...)
	named := false
	// A module with no function or code section of its own (wit-component's fixup module,
	// whose guards are added by argflow.go) gets them, in their place.
	functionDone, codeDone := m.hasFunction, m.code == nil || hasSection(secs, secCode)
	for _, s := range secs {
		if s.id != secCustom {
			if !functionDone && sectionRank(s.id) > secFunction {
				out = appendSection(out, secFunction, m.functionSection(nil))
				functionDone = true
			}
			if !codeDone && sectionRank(s.id) > secCode {
				out = appendSection(out, secCode, code)
				codeDone = true
			}
		}
		body := s.body
		switch s.id {
		case secType:
			body = m.typeSection(s.body)
		case secFunction:
			body = m.functionSection(s.body)
		case secCode:
			body = code
		case secCustom:
			if !named && customName(s.body) == "name" {
				named = true
				if nb, ok := m.nameSection(s.body); ok {
					body = nb
				}
			}
		}
		out = appendSection(out, s.id, body)
	}
	if !functionDone {
		out = appendSection(out, secFunction, m.functionSection(nil))
	}
	if !codeDone {
		out = appendSection(out, secCode, code)
	}
	if !named {
		// The name section follows every other section.
		body := appendName(nil, "name")
		out = appendSection(out, secCustom, m.addFunctionNames(body, nil))
	}
	return out
}

// hasSection says whether secs holds a section id.
func hasSection(secs []section, id byte) bool {
	for _, s := range secs {
		if s.id == id {
			return true
		}
	}
	return false
}

// customName is the name of a custom section, "" when it cannot be read.
func customName(body []byte) string {
	r := &wasmReader{b: body}
	name := r.take(int(r.u32()))
	if r.err != nil {
		return ""
	}
	return string(name)
}

// nameSection returns the custom section "name" (body) with the helpers' names added to its
// function names subsection (id 1), made when missing; ok is false when the section cannot
// be read, and then it is left as it is.
func (m *guardModule) nameSection(body []byte) ([]byte, bool) {
	r := &wasmReader{b: body}
	r.take(int(r.u32()))
	out := append([]byte(nil), body[:r.off]...)
	done := false
	for r.more() {
		id := r.byte()
		payload := r.take(int(r.u32()))
		if r.err != nil {
			return nil, false
		}
		switch {
		case id == 1:
			if done {
				return nil, false // a second function names subsection
			}
			out, done = m.addFunctionNames(out, payload), true
			if out == nil {
				return nil, false
			}
			continue
		case id > 1 && !done:
			out, done = m.addFunctionNames(out, nil), true
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(payload)))
		out = append(out, payload...)
	}
	if r.err != nil {
		return nil, false
	}
	if !done {
		out = m.addFunctionNames(out, nil)
	}
	return out, true
}

// addFunctionNames appends to out the function names subsection: the entries of names (an
// existing subsection's payload, or nil) followed by the helpers'. It returns nil when names
// cannot be read or names a function at or past the first helper (the map must stay in
// increasing index order).
func (m *guardModule) addFunctionNames(out, names []byte) []byte {
	first := m.importedFuncs + m.definedFuncs
	var n uint32
	var entries []byte
	if names != nil {
		r := &wasmReader{b: names}
		n = r.u32()
		start := r.off
		for i := uint32(0); i < n && r.err == nil; i++ {
			idx := r.u32()
			r.take(int(r.u32()))
			if r.err == nil && idx >= first {
				return nil
			}
		}
		if r.err != nil || r.more() || n > math.MaxUint32-uint32(len(m.helpers)) {
			return nil
		}
		entries = names[start:]
	}
	payload := appendU32(nil, n+uint32(len(m.helpers)))
	payload = append(payload, entries...)
	for i, h := range m.helpers {
		payload = appendU32(payload, first+uint32(i))
		if h.call != nil {
			payload = appendName(payload, h.call.name())
		} else {
			payload = appendName(payload, growGuardTrapName)
		}
	}
	out = append(out, 1)
	out = appendU32(out, uint32(len(payload)))
	return append(out, payload...)
}

// appendName appends a name: its length, then its bytes.
func appendName(b []byte, name string) []byte {
	b = appendU32(b, uint32(len(name)))
	return append(b, name...)
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func (m *guardModule) typeSection(body []byte) []byte {
	r := &wasmReader{b: body}
	r.u32()
	var added []byte
	k := uint32(0)
	for _, is64 := range []bool{false, true} {
		if m.needs(is64) {
			t := byte(0x7F)
			if is64 {
				t = 0x7E
			}
			added = append(added, 0x60, 0x01, t, 0x01, t)
			k++
		}
	}
	out := appendU32(nil, m.types+k)
	out = append(out, body[r.off:]...)
	return append(out, added...)
}

func (m *guardModule) functionSection(body []byte) []byte {
	out := appendU32(nil, m.definedFuncs+uint32(len(m.helpers)))
	if body != nil {
		r := &wasmReader{b: body}
		r.u32()
		out = append(out, body[r.off:]...)
	}
	for _, h := range m.helpers {
		if h.call != nil {
			out = appendU32(out, h.call.typeIdx)
			continue
		}
		out = appendU32(out, m.helperType(h.is64))
	}
	return out
}

// globalSection appends (global (mut i64) (i64.const 0)) to body, which holds n globals.
func (m *guardModule) globalSection(body []byte, n uint32) []byte {
	rest := []byte(nil)
	if body != nil {
		r := &wasmReader{b: body}
		r.u32()
		rest = body[r.off:]
	}
	out := appendU32(nil, n+1)
	out = append(out, rest...)
	return append(out, 0x7E, 0x01, 0x42, 0x00, 0x0B)
}

func (m *guardModule) exportSection(body []byte) []byte {
	r := &wasmReader{b: body}
	r.u32()
	out := appendU32(nil, m.exports+1)
	out = append(out, body[r.off:]...)
	out = appendU32(out, uint32(len(growGuardExport)))
	out = append(out, growGuardExport...)
	out = append(out, 0x03)
	return appendU32(out, m.guardGlobal())
}

func appendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// wasmReader decodes the binary format. The first error sticks: later reads return zeros.
type wasmReader struct {
	b   []byte
	off int
	err error
}

func (r *wasmReader) more() bool { return r.err == nil && r.off < len(r.b) }

func (r *wasmReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *wasmReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("unexpected end at offset %d", r.off)
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *wasmReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("%d bytes at offset %d run past the end", n, r.off)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

// uleb reads an unsigned LEB128 of at most bits bits.
func (r *wasmReader) uleb(bits uint) uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift >= bits {
			r.fail("integer too long at offset %d", r.off)
			return 0
		}
		v |= uint64(c&0x7F) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *wasmReader) u32() uint32 {
	v := r.uleb(32)
	if v > math.MaxUint32 {
		r.fail("integer too large at offset %d", r.off)
	}
	return uint32(v)
}

func (r *wasmReader) u64() uint64 { return r.uleb(64) }

// sleb skips a signed LEB128 (s32, s33, s64): only its length matters here.
func (r *wasmReader) sleb() { r.uleb(70) }

// valType skips a value type: a one-byte type or (ref null? heaptype).
func (r *wasmReader) valType() {
	switch b := r.byte(); {
	case b == 0x63 || b == 0x64:
		r.sleb()
	case b >= 0x69 && b <= 0x7F:
	default:
		r.fail("value type 0x%02x", b)
	}
}

func (r *wasmReader) refType() { r.valType() }

// limits skips table limits.
func (r *wasmReader) limits() {
	flags := r.byte()
	r.u64()
	if flags&0x01 != 0 {
		r.u64()
	}
}

// memType reads a memory type: whether it is a 64-bit memory, and its declared maximum.
func (r *wasmReader) memType() (memLimits, error) {
	flags := r.byte()
	if flags&^0x07 != 0 {
		// Custom page sizes (0x08) would make a page something other than 64 KiB.
		return memLimits{}, fmt.Errorf("memory limits flags 0x%02x", flags)
	}
	lim := memLimits{is64: flags&0x04 != 0}
	r.u64()
	if flags&0x01 != 0 {
		lim.max, lim.hasMax = r.u64(), true
	}
	return lim, r.err
}

func (r *wasmReader) memarg() {
	if r.u32()&0x40 != 0 {
		r.u32()
	}
	r.u64()
}

// blockType skips an empty type (0x40), a value type, or a type index (s33).
func (r *wasmReader) blockType() {
	if r.off < len(r.b) {
		if b := r.b[r.off]; b == 0x40 {
			r.off++
			return
		} else if b > 0x40 && b < 0x80 {
			r.valType()
			return
		}
	}
	r.sleb()
}

func (r *wasmReader) skipU32s(n int) {
	for range n {
		r.u32()
	}
}

// skipInstr skips the immediates of the instruction whose opcode op was just read. Opcodes
// of proposals it does not know are an error, never guessed.
func (r *wasmReader) skipInstr(op byte) error {
	switch {
	case op <= 0x01, op == 0x05, op == 0x0A, op == 0x0B, op == 0x0F, op == 0x19, op == 0x1A, op == 0x1B:
	case op == 0x02, op == 0x03, op == 0x04, op == 0x06: // block, loop, if, try
		r.blockType()
	case op == 0x07, op == 0x08, op == 0x09, op == 0x0C, op == 0x0D, op == 0x10, op == 0x12,
		op == 0x14, op == 0x15, op == 0x18:
		r.u32()
	case op == 0x0E: // br_table
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.u32()
		}
		r.u32()
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
		r.skipU32s(2)
	case op == 0x1C: // select t*
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.valType()
		}
	case op == 0x1F: // try_table
		r.blockType()
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			switch kind := r.byte(); kind {
			case 0x00, 0x01:
				r.skipU32s(2)
			case 0x02, 0x03:
				r.u32()
			default:
				return fmt.Errorf("catch clause 0x%02x", kind)
			}
		}
	case op >= 0x20 && op <= 0x26: // locals, globals, table.get/set
		r.u32()
	case op >= 0x28 && op <= 0x3E: // loads and stores
		r.memarg()
	case op == 0x3F: // memory.size
		r.u32()
	case op == 0x41, op == 0x42:
		r.sleb()
	case op == 0x43:
		r.take(4)
	case op == 0x44:
		r.take(8)
	case op >= 0x45 && op <= 0xC4: // numeric
	case op == 0xD0: // ref.null
		r.sleb()
	case op == 0xD1, op == 0xD3, op == 0xD4:
	case op == 0xD2, op == 0xD5, op == 0xD6:
		r.u32()
	case op == 0xFB:
		return r.skipGC()
	case op == 0xFC:
		return r.skipMisc()
	case op == 0xFD:
		return r.skipSIMD()
	case op == 0xFE:
		return r.skipAtomic()
	default:
		return fmt.Errorf("opcode 0x%02x", op)
	}
	return r.err
}

func (r *wasmReader) skipGC() error {
	switch sub := r.u32(); {
	case sub <= 1, sub >= 6 && sub <= 7, sub >= 11 && sub <= 14, sub == 16:
		r.u32()
	case sub >= 2 && sub <= 5, sub >= 8 && sub <= 10, sub >= 17 && sub <= 19:
		r.skipU32s(2)
	case sub == 15, sub >= 26 && sub <= 30:
	case sub >= 20 && sub <= 23:
		r.sleb()
	case sub == 24, sub == 25: // br_on_cast(_fail) flags label ht ht
		r.byte()
		r.u32()
		r.sleb()
		r.sleb()
	default:
		return fmt.Errorf("opcode 0xfb %d", sub)
	}
	return r.err
}

func (r *wasmReader) skipMisc() error {
	switch sub := r.u32(); {
	case sub <= 7, sub >= 19 && sub <= 22:
	case sub == 8, sub == 10, sub == 12, sub == 14:
		r.skipU32s(2)
	case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17:
		r.u32()
	default:
		return fmt.Errorf("opcode 0xfc %d", sub)
	}
	return r.err
}

func (r *wasmReader) skipSIMD() error {
	switch sub := r.u32(); {
	case sub <= 11, sub == 92, sub == 93:
		r.memarg()
	case sub == 12, sub == 13:
		r.take(16)
	case sub >= 21 && sub <= 34:
		r.byte()
	case sub >= 84 && sub <= 91:
		r.memarg()
		r.byte()
	case sub <= 0x113: // the rest of SIMD and relaxed SIMD take no immediates
	default:
		return fmt.Errorf("opcode 0xfd %d", sub)
	}
	return r.err
}

func (r *wasmReader) skipAtomic() error {
	switch sub := r.u32(); {
	case sub == 0x03:
		r.byte()
	case sub <= 0x02, sub >= 0x10 && sub <= 0x4E:
		r.memarg()
	default:
		return fmt.Errorf("opcode 0xfe %d", sub)
	}
	return r.err
}
