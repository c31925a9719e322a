package hostabi

// The argument guard of a component's core modules. wasmtime's C API lifts every argument of a
// host import into its own values before the host function runs: a list<u8> becomes one
// 32-byte C value per byte, plus wasmtime's Rust value, about 73 bytes of host memory per byte
// the guest passes. The host's size limits (component_imports.go) come too late for that: a
// guest that passed 64 MiB to kv-set made the host allocate 4.7 GB before kv-set could refuse
// it. So the limits are also checked inside the guest, before the lift.
//
// The core module of a component that calls the host interface imports each of its functions
// from the core module "fuscia:host/host@1.0.N" (wit-component names the core import after the
// interface), with the canonical ABI's flat signature: a list or a string is a (ptr, len)
// pair, len counting elements. Within the same rewrite as the grow guard's trap mode
// (growguard.go), every call of a guarded import is replaced by a call to a helper appended to
// the module, of the import's own type:
//
//	(func $fuscia:argument_too_large:kv-set (param $kptr i32) (param $klen i32) (param $vptr i32) (param $vlen i32)
//	  (if (i32.gt_u (local.get $klen) (i32.const 1024)) (then unreachable))
//	  (if (i32.gt_u (local.get $vlen) (i32.const 1048576)) (then unreachable))
//	  (call $kv-set (local.get $kptr) (local.get $klen) (local.get $vptr) (local.get $vlen)))
//
// The helper is named argGuardTrapPrefix+field in the name section, so the trap's backtrace
// names it and componentFailure reports the limit instead of a bare "unreachable". A call
// within the limits is forwarded untouched, and the host checks the key and byte limits again
// (component_imports.go), so a call that the rewrite did not see still meets them there.
//
// Only direct calls (call, return_call) are rewritten. A reference to the import through a
// table, an export or ref.func is left alone: the toolchains (wit-component for C and Rust,
// componentize-js) call the host imports directly from the module that imports them, and an
// indirect call still meets the host's own limits, later and at the cost of the lift.
// wit-component's shim module, which forwards such a call to the lowered host function, does
// not import the interface's name and is not guarded. An import whose type is not the world's
// flat signature is left alone too: wasmtime refuses to link it.

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fuscia/fuscia/lang/schema"
)

// argGuardTrapPrefix, followed by the import's name, names an argument guard's helper in the
// name section: the function a too large argument traps in.
const argGuardTrapPrefix = "fuscia:argument_too_large:"

// hostImportModule is the core import module of the world's host interface, without its
// version: wit-component names it after the interface, "fuscia:host/host@1.0.0".
const hostImportModule = "fuscia:host/host@"

// argLimit is one length parameter of a guarded import and the most it may be.
type argLimit struct {
	param uint32
	max   int64
}

// argGuard is what the rewrite guards of one host import.
type argGuard struct {
	field string
	// typ is the import's type entry in the type section as the canonical ABI lowers the
	// world's signature: 0x60, the parameter count and types, no results.
	typ    []byte
	limits []argLimit
}

// argGuards are the host imports whose lists the host lifts one value per element: the ones
// whose arguments carry bytes (a string is lifted as its bytes and is cheap; the keys are
// checked because the host refuses them too).
var argGuards = []argGuard{
	{
		// kv-set(kptr, klen, vptr, vlen)
		field:  "kv-set",
		typ:    flatType(4, "\x7F\x7F\x7F\x7F"),
		limits: []argLimit{{1, maxKeyBytes}, {3, maxValueBytes}},
	},
	{
		// artifact-write(tptr, tlen, dptr, dlen, retptr)
		field:  "artifact-write",
		typ:    flatType(5, "\x7F\x7F\x7F\x7F\x7F"),
		limits: []argLimit{{3, maxComponentBytes}},
	},
	{
		// http-request(method ptr, len, url ptr, len, headers ptr, len, body ptr, len,
		// timeout-ms discriminant, timeout-ms value, retptr)
		field:  "http-request",
		typ:    flatType(11, "\x7F\x7F\x7F\x7F\x7F\x7F\x7F\x7F\x7F\x7E\x7F"),
		limits: []argLimit{{5, maxComponentHeaders}, {7, maxComponentBytes}},
	},
}

// flatType is the type section entry of a function of n parameters of types params (one byte
// each) and no results.
func flatType(n byte, params string) []byte {
	return append(append([]byte{0x60, n}, params...), 0x00)
}

// argLimitsText is the limits the guard checks, for the error that reports a trap in one.
var argLimitsText = fmt.Sprintf("kv-set: values up to %s, keys up to %s; artifact-write: data up to %s; http-request: bodies up to %s, %d headers",
	schema.FormatSize(maxValueBytes), schema.FormatSize(maxKeyBytes), schema.FormatSize(maxComponentBytes),
	schema.FormatSize(maxComponentBytes), maxComponentHeaders)

// noteImport is called by scan for each function import, in order, before importedFuncs counts
// it: in the trap mode, an import of the host interface that argGuards names, of the expected
// type, has its calls guarded.
func (m *guardModule) noteImport(module, field []byte, typ uint32) {
	if m.mode != guardTrap {
		return
	}
	want := ""
	host, wired := m.flows[importKey{string(module), string(field)}]
	if wired {
		want = host // wired to a host function, whatever its names (argflow.go)
	} else if isHostImportModule(module) {
		want = string(field)
	}
	for i := range argGuards {
		g := &argGuards[i]
		if want != g.field {
			continue
		}
		same := sameFuncType(typeEntry(m.typeSec, typ), g.typ)
		if wired && !same {
			// wasmtime would not link it; it must not run unguarded if it did.
			m.flowErr = fmt.Errorf("import %q %q receives the host's %s but is not of its type", module, field, host)
		}
		if same {
			if m.guardedImports == nil {
				m.guardedImports = map[uint32]guardedCall{}
			}
			m.guardedImports[m.importedFuncs] = guardedCall{fn: m.importedFuncs, typeIdx: typ, argGuard: g}
		}
		return
	}
}

// isHostImportModule says whether module is the core import module of a version of the host
// interface that the world admits: 1.0.N (with or without build metadata), or the canonical
// version "1" that stands for them.
func isHostImportModule(module []byte) bool {
	v, ok := bytes.CutPrefix(module, []byte(hostImportModule))
	if !ok {
		return false
	}
	if string(v) == "1" {
		return true
	}
	patch, ok := bytes.CutPrefix(v, []byte("1.0."))
	if !ok {
		return false
	}
	patch, _, _ = bytes.Cut(patch, []byte("+"))
	if len(patch) == 0 || (len(patch) > 1 && patch[0] == '0') {
		return false
	}
	for _, c := range patch {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sameFuncType says whether the function type entries a and b (as typeEntry returns them)
// are the same type: their counts may be written in LEB128 of different lengths.
func sameFuncType(a, b []byte) bool {
	decode := func(e []byte) (params, results []byte, ok bool) {
		r := &wasmReader{b: e}
		if r.byte() != 0x60 {
			return nil, nil, false
		}
		var parts [2][]byte
		for k := range 2 {
			n := r.u32()
			start := r.off
			for j := uint32(0); j < n && r.err == nil; j++ {
				r.valType()
			}
			parts[k] = e[start:min(r.off, len(e))]
		}
		return parts[0], parts[1], r.err == nil && !r.more()
	}
	ap, ar, okA := decode(a)
	bp, br, okB := decode(b)
	return okA && okB && bytes.Equal(ap, bp) && bytes.Equal(ar, br)
}

// typeEntry returns the bytes of function type idx of the type section body sec, nil when it
// cannot be read (scan has checked that every entry is a function type).
func typeEntry(sec []byte, idx uint32) []byte {
	r := &wasmReader{b: sec}
	if n := r.u32(); r.err != nil || idx >= n {
		return nil
	}
	for i := uint32(0); r.err == nil; i++ {
		start := r.off
		r.byte()
		for range 2 {
			n := r.u32()
			for j := uint32(0); j < n && r.err == nil; j++ {
				r.valType()
			}
		}
		if i == idx {
			if r.err != nil {
				return nil
			}
			return sec[start:r.off]
		}
	}
	return nil
}

// callHelperIndex is the function index of the helper that guards calls of function fn, added
// on first use; ok is false when fn is not a guarded import.
func (m *guardModule) callHelperIndex(fn uint32) (idx uint32, ok bool) {
	g, ok := m.guardedImports[fn]
	if !ok {
		return 0, false
	}
	first := m.importedFuncs + m.definedFuncs
	for i, h := range m.helpers {
		if h.call != nil && h.call.fn == fn {
			return first + uint32(i), true
		}
	}
	m.helpers = append(m.helpers, growHelper{call: &g})
	return first + uint32(len(m.helpers)-1), true
}

// guardedCall is a guarded import, and the helper that guards its calls.
type guardedCall struct {
	fn      uint32
	typeIdx uint32 // the import's type index: the helper's too
	*argGuard
}

// name is the helper's name in the name section.
func (g *guardedCall) name() string { return argGuardTrapPrefix + g.field }

// body is the helper of the file comment.
func (g *guardedCall) body() []byte {
	b := []byte{0x00} // no locals
	for _, l := range g.limits {
		b = append(b, 0x20) // local.get
		b = appendU32(b, l.param)
		b = append(b, 0x41) // i32.const
		b = appendS64(b, l.max)
		b = append(b, 0x4B, 0x04, 0x40, 0x00, 0x0B) // i32.gt_u, if, unreachable, end
	}
	for p := range uint32(g.typ[1]) {
		b = append(b, 0x20) // local.get
		b = appendU32(b, p)
	}
	b = append(b, 0x10) // call
	b = appendU32(b, g.fn)
	return append(b, 0x0B)
}

// trappedInArgGuard says whether the wasmtime error msg is a trap in an argument guard's
// helper, and of which import: the first frame of its backtrace is
// "0: 0x1d2 - Main!fuscia:argument_too_large:kv-set".
func trappedInArgGuard(msg string) (field string, ok bool) {
	fn, ok := trapFrameFunc(msg)
	if !ok {
		return "", false
	}
	if i := strings.LastIndex(fn, "!"+argGuardTrapPrefix); i >= 0 {
		fn = fn[i+1:]
	}
	field, ok = strings.CutPrefix(fn, argGuardTrapPrefix)
	for i := range argGuards {
		if ok && field == argGuards[i].field {
			return field, true
		}
	}
	return "", false
}

// Section ids that redirectSections rewrites, besides the export and global sections.
const (
	secTable = 4
	secElem  = 9
)

// redirectSections returns, by their position in secs, the export, global, table and element
// sections with every reference to a guarded import replaced by its guard's (the code's are
// replaced by rewriteBody): a guarded import must be reachable only through its guard, even
// from a table another module calls through (wit-component's fixup module fills one with the
// lowered host functions). A section it cannot read is an error: the module must not run
// with a way around its guards.
func (m *guardModule) redirectSections(secs []section) (map[int][]byte, error) {
	out := map[int][]byte{}
	for i, s := range secs {
		var body []byte
		var err error
		switch s.id {
		case secExport:
			body, err = m.redirectExports(s.body)
		case secGlobal:
			body, err = m.redirectGlobals(s.body)
		case secTable:
			body, err = m.redirectTables(s.body)
		case secElem:
			body, err = m.redirectElems(s.body)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %v", s.id, err)
		}
		out[i] = body
	}
	return out, nil
}

// redirect is the function index that replaces fn: its guard's when fn is a guarded import.
func (m *guardModule) redirect(fn uint32) uint32 {
	if idx, ok := m.callHelperIndex(fn); ok {
		return idx
	}
	return fn
}

// redirectExports: an export of a guarded import exports its guard.
func (m *guardModule) redirectExports(body []byte) ([]byte, error) {
	r := &wasmReader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.off
		r.take(int(r.u32()))
		kind := r.byte()
		out = append(out, body[start:r.off]...)
		idx := r.u32()
		if kind == 0x00 {
			idx = m.redirect(idx)
		}
		out = appendU32(out, idx)
	}
	return out, tail(r)
}

// redirectGlobals: a global's initializer may hold ref.func.
func (m *guardModule) redirectGlobals(body []byte) ([]byte, error) {
	r := &wasmReader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.off
		r.valType()
		r.byte()
		out = append(out, body[start:r.off]...)
		out = m.constExpr(r, out)
	}
	return out, tail(r)
}

// redirectTables: a table of the function-references proposal (0x40 0x00) has an initializer.
func (m *guardModule) redirectTables(body []byte) ([]byte, error) {
	r := &wasmReader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.off
		init := r.off < len(r.b) && r.b[r.off] == 0x40
		if init {
			r.byte()
			if r.byte() != 0x00 {
				r.fail("table of unknown form")
			}
		}
		r.refType()
		r.limits()
		out = append(out, body[start:r.off]...)
		if init {
			out = m.constExpr(r, out)
		}
	}
	return out, tail(r)
}

// redirectElems: element segments list functions by index (flags 0-3) or by expressions
// (flags 4-7).
func (m *guardModule) redirectElems(body []byte) ([]byte, error) {
	r := &wasmReader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		flags := r.u32()
		if flags > 7 {
			r.fail("element segment of flags %d", flags)
			break
		}
		out = appendU32(out, flags)
		if flags&0x02 != 0 && flags&0x01 == 0 { // an explicit table index
			out = appendU32(out, r.u32())
		}
		if flags&0x01 == 0 { // active: the offset
			out = m.constExpr(r, out)
		}
		if flags&0x03 != 0 { // an element kind (0x00) or a reference type
			start := r.off
			if flags&0x04 == 0 {
				r.byte()
			} else {
				r.refType()
			}
			out = append(out, body[start:r.off]...)
		}
		count := r.u32()
		out = appendU32(out, count)
		for j := uint32(0); j < count && r.err == nil; j++ {
			if flags&0x04 == 0 {
				out = appendU32(out, m.redirect(r.u32()))
			} else {
				out = m.constExpr(r, out)
			}
		}
	}
	return out, tail(r)
}

// constExpr copies a constant expression from r to out, up to and with its end, replacing the
// index of each ref.func by its redirect.
func (m *guardModule) constExpr(r *wasmReader, out []byte) []byte {
	for r.err == nil {
		start := r.off
		op := r.byte()
		switch op {
		case 0x0B: // end
			return append(out, op)
		case 0xD2: // ref.func
			out = append(out, op)
			out = appendU32(out, m.redirect(r.u32()))
			continue
		}
		if err := r.skipInstr(op); err != nil {
			r.fail("%v", err)
		}
		out = append(out, r.b[start:r.off]...)
	}
	return out
}

// tail is r's error, or one for bytes left after what r read.
func tail(r *wasmReader) error {
	if r.err == nil && r.more() {
		return fmt.Errorf("%d bytes after the last entry", len(r.b)-r.off)
	}
	return r.err
}
