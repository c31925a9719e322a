package hostabi

// This file is the one place that binds wasmtime's component-model C API, which wasmtime-go
// v39.0.1 does not wrap (its issues 248 and 280): compile, serialize and deserialize a
// component, a linker with the world's host imports and WASI 0.2, instantiate-call-post-return,
// and the values that cross. component_ext.h declares the C side (checked against the real
// headers by TestComponentLayout); world.go maps the world's records and variants to Go types
// with the helpers at the end of this file.

/*
#include <stdlib.h>
#include "component_ext.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/lang/schema"
)

// cval is a component-model value as wasmtime's C API lays it out.
type cval = C.wasmtime_component_val_t

// Value kinds (wasmtime/component/val.h).
const (
	kindBool    = C.WASMTIME_COMPONENT_BOOL
	kindU8      = C.WASMTIME_COMPONENT_U8
	kindU16     = C.WASMTIME_COMPONENT_U16
	kindU32     = C.WASMTIME_COMPONENT_U32
	kindU64     = C.WASMTIME_COMPONENT_U64
	kindF64     = C.WASMTIME_COMPONENT_F64
	kindString  = C.WASMTIME_COMPONENT_STRING
	kindList    = C.WASMTIME_COMPONENT_LIST
	kindRecord  = C.WASMTIME_COMPONENT_RECORD
	kindTuple   = C.WASMTIME_COMPONENT_TUPLE
	kindVariant = C.WASMTIME_COMPONENT_VARIANT
	kindEnum    = C.WASMTIME_COMPONENT_ENUM
	kindOption  = C.WASMTIME_COMPONENT_OPTION
	kindResult  = C.WASMTIME_COMPONENT_RESULT
)

// kindNames name the kinds in messages about a guest's values.
var kindNames = [...]string{"bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f32", "f64", "char",
	"string", "list", "record", "tuple", "variant", "enum", "option", "result", "flags", "resource"}

func kindName(k uint8) string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}

// wasmtimeError is an error wasmtime returned: its message and, when WASI's exit ended the
// guest, the status.
type wasmtimeError struct {
	msg        string
	exitStatus int
	exited     bool
}

func (e *wasmtimeError) Error() string { return e.msg }

// takeError converts and frees a wasmtime_error_t; nil stays nil.
func takeError(err *C.wasmtime_error_t) error {
	if err == nil {
		return nil
	}
	defer C.wasmtime_error_delete(err)
	var msg C.wasm_name_t
	C.wasmtime_error_message(err, &msg)
	e := &wasmtimeError{msg: C.GoStringN(msg.data, C.int(msg.size))}
	C.wasm_byte_vec_delete(&msg)
	var status C.int
	if C.wasmtime_error_exit_status(err, &status) {
		e.exited, e.exitStatus = true, int(status)
	}
	return e
}

func enginePtr(e *wasmtime.Engine) *C.wasm_engine_t {
	return (*C.wasm_engine_t)(firstPointer(e))
}

// bytesPtr is a pointer C may read len(b) bytes from during one call (never nil).
func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		var one [1]byte
		return (*C.char)(unsafe.Pointer(&one[0]))
	}
	return (*C.char)(unsafe.Pointer(unsafe.SliceData(b)))
}

func stringPtr(s string) *C.char {
	if s == "" {
		var one [1]byte
		return (*C.char)(unsafe.Pointer(&one[0]))
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s)))
}

// component is a compiled component and the index of its `call` export.
type component struct {
	ptr  *C.wasmtime_component_t
	call *C.wasmtime_component_export_index_t

	// worldOnce checks, once, that the component's types are the world's (worldErr).
	worldOnce sync.Once
	worldErr  error
}

// compileComponent compiles a component binary (or, wasmtime having its WAT feature, the text
// format) for engine.
func compileComponent(engine *wasmtime.Engine, wasm []byte) (*component, error) {
	var ptr *C.wasmtime_component_t
	err := C.wasmtime_component_new(enginePtr(engine), (*C.uint8_t)(unsafe.Pointer(bytesPtr(wasm))), C.size_t(len(wasm)), &ptr)
	runtime.KeepAlive(engine)
	if err != nil {
		return nil, takeError(err)
	}
	return newComponent(ptr)
}

// deserializeComponent loads what serialize wrote, for the same wasmtime version and engine
// configuration (wasmtime refuses anything else). It trusts the bytes: callers check them.
func deserializeComponent(engine *wasmtime.Engine, data []byte) (*component, error) {
	var ptr *C.wasmtime_component_t
	err := C.wasmtime_component_deserialize(enginePtr(engine), (*C.uint8_t)(unsafe.Pointer(bytesPtr(data))), C.size_t(len(data)), &ptr)
	runtime.KeepAlive(engine)
	if err != nil {
		return nil, takeError(err)
	}
	return newComponent(ptr)
}

// deserializeComponentFile loads a file that holds exactly what serialize wrote. wasmtime maps
// the file instead of copying it, which for a large component is most of the cost of a load.
// It trusts the file: callers check it.
func deserializeComponentFile(engine *wasmtime.Engine, path string) (*component, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var ptr *C.wasmtime_component_t
	err := C.wasmtime_component_deserialize_file(enginePtr(engine), cpath, &ptr)
	runtime.KeepAlive(engine)
	if err != nil {
		return nil, takeError(err)
	}
	return newComponent(ptr)
}

func newComponent(ptr *C.wasmtime_component_t) (*component, error) {
	name := "call"
	idx := C.wasmtime_component_get_export_index(ptr, nil, stringPtr(name), C.size_t(len(name)))
	if idx == nil {
		C.wasmtime_component_delete(ptr)
		return nil, errors.New("the component does not export the function `call` of world " + World)
	}
	return &component{ptr: ptr, call: idx}, nil
}

func (c *component) serialize() ([]byte, error) {
	var out C.wasm_byte_vec_t
	if err := takeError(C.wasmtime_component_serialize(c.ptr, &out)); err != nil {
		return nil, err
	}
	defer C.wasm_byte_vec_delete(&out)
	return C.GoBytes(unsafe.Pointer(out.data), C.int(out.size)), nil
}

func (c *component) close() {
	C.wasmtime_component_export_index_delete(c.call)
	C.wasmtime_component_delete(c.ptr)
}

// componentLinker satisfies a component's imports: WASI 0.2 and the world's host interface,
// whose functions call Host.componentImport.
type componentLinker struct {
	ptr    *C.wasmtime_component_linker_t
	host   cgo.Handle
	engine *wasmtime.Engine

	// reference is worldReference compiled, at the first check (fitsWorld).
	refOnce   sync.Once
	reference *component
	refErr    error
}

func newComponentLinker(engine *wasmtime.Engine, h *Host) (*componentLinker, error) {
	l := &componentLinker{ptr: C.wasmtime_component_linker_new(enginePtr(engine)), host: cgo.NewHandle(h), engine: engine}
	runtime.KeepAlive(engine)
	if err := takeError(C.wasmtime_component_linker_add_wasip2(l.ptr)); err != nil {
		l.close()
		return nil, fmt.Errorf("define WASI 0.2: %w", err)
	}
	names := make([]*C.char, len(worldImports))
	for i, imp := range worldImports {
		names[i] = C.CString(imp.name)
	}
	defer func() {
		for _, n := range names {
			C.free(unsafe.Pointer(n))
		}
	}()
	cnames := (**C.char)(C.malloc(C.size_t(len(names)) * C.size_t(unsafe.Sizeof(names[0]))))
	defer C.free(unsafe.Pointer(cnames))
	copy(unsafe.Slice(cnames, len(names)), names)
	if err := takeError(C.fuscia_component_define(l.ptr, C.uintptr_t(l.host), stringPtr(HostInterface), C.size_t(len(HostInterface)), cnames, C.size_t(len(names)))); err != nil {
		l.close()
		return nil, fmt.Errorf("define %s: %w", HostInterface, err)
	}
	if err := takeError(C.fuscia_component_define_empty(l.ptr, stringPtr(TypesInterface), C.size_t(len(TypesInterface)))); err != nil {
		l.close()
		return nil, fmt.Errorf("define %s: %w", TypesInterface, err)
	}
	return l, nil
}

func (l *componentLinker) close() {
	C.wasmtime_component_linker_delete(l.ptr)
	l.host.Delete()
	if l.reference != nil {
		l.reference.close()
	}
}

// fitsWorld is nil when every function of the host interface that c imports, and its export
// `call`, have the types world fuscia:host/component@1.0.0 gives them; otherwise it says which
// does not. Checked once per component, before its first attempt: wasmtime lifts values by
// the component's own types, so a mistyped one must never run (worldReference).
func (l *componentLinker) fitsWorld(c *component) error {
	c.worldOnce.Do(func() { c.worldErr = l.checkWorld(c) })
	return c.worldErr
}

func (l *componentLinker) checkWorld(c *component) error {
	l.refOnce.Do(func() { l.reference, l.refErr = compileComponent(l.engine, []byte(worldReference)) })
	if l.refErr != nil {
		return fmt.Errorf("compile the world's reference component: %w", l.refErr)
	}
	// Every import the linker would satisfy with the host interface is checked, whatever its
	// version: wasmtime links fuscia:host/host@1.0.1 (or @1.x) to the 1.0.0 it defines, and
	// would then lift the values by the component's types.
	for _, iface := range l.hostImports(c) {
		for _, fn := range l.instanceFuncs(c, iface) {
			if fn.kind != C.WASMTIME_COMPONENT_ITEM_COMPONENT_FUNC {
				continue // a type: its uses in functions are compared with theirs
			}
			if !slices.ContainsFunc(worldImports, func(imp hostImport) bool { return imp.name == fn.name }) {
				return fmt.Errorf("it imports %s from %s, which world %s does not have; rebuild it against hostabi/wit/fuscia.wit", fn.name, iface, World)
			}
			if !l.sameFunc(c, iface, fn.name) {
				what := fn.name
				if iface != HostInterface {
					what += " of " + iface
				}
				return fmt.Errorf("it imports %s with another type than world %s declares; rebuild it against hostabi/wit/fuscia.wit", what, World)
			}
		}
	}
	if !l.sameFunc(c, "", "call") {
		return fmt.Errorf("its export `call` is not func(request: request) -> response of world %s; rebuild it against hostabi/wit/fuscia.wit", World)
	}
	return nil
}

// hostImportPrefix begins the name of every import the linker may satisfy with the host
// interface.
const hostImportPrefix = "fuscia:host/host@"

// hostImports are the names of c's imports of the host interface, at any version.
func (l *componentLinker) hostImports(c *component) []string {
	var out []string
	buf := make([]byte, 256)
	for nth := 0; ; nth++ {
		var kind C.int
		n := C.fuscia_import_name(c.ptr, enginePtr(l.engine), C.size_t(nth), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &kind)
		if n == C.SIZE_MAX {
			break
		}
		if int(n) > len(buf) {
			continue // longer than any name of the host interface
		}
		if name := string(buf[:n]); strings.HasPrefix(name, hostImportPrefix) {
			out = append(out, name)
		}
	}
	runtime.KeepAlive(l.engine)
	return out
}

// importedFunc is an export of an imported instance: its name and item kind.
type importedFunc struct {
	name string
	kind C.int
}

// instanceFuncs lists the exports of the instance c imports as iface.
func (l *componentLinker) instanceFuncs(c *component, iface string) []importedFunc {
	var out []importedFunc
	buf := make([]byte, 256)
	for nth := 0; ; nth++ {
		var kind C.int
		n := C.fuscia_instance_export_name(c.ptr, enginePtr(l.engine), stringPtr(iface), C.size_t(len(iface)), C.size_t(nth), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &kind)
		if n == C.SIZE_MAX {
			break
		}
		name := string(buf[:min(int(n), len(buf))])
		if int(n) > len(buf) {
			name += "…"
		}
		out = append(out, importedFunc{name: name, kind: kind})
	}
	runtime.KeepAlive(l.engine)
	return out
}

// sameFunc says whether c's function name (of its imported instance iface, or its export when
// iface is "") has the type of the reference's (of HostInterface, or its export); true when c
// has no such import.
func (l *componentLinker) sameFunc(c *component, iface, name string) bool {
	lookup := func(comp *component, iface string) *C.wasmtime_component_func_type_t {
		var ifacePtr *C.char
		if iface != "" {
			ifacePtr = stringPtr(iface)
		}
		return C.fuscia_func_type(comp.ptr, enginePtr(l.engine), ifacePtr, C.size_t(len(iface)), stringPtr(name), C.size_t(len(name)))
	}
	got := lookup(c, iface)
	if got == nil {
		return iface != "" // a missing `call` is refused when the component is made
	}
	defer C.wasmtime_component_func_type_delete(got)
	refIface := ""
	if iface != "" {
		refIface = HostInterface
	}
	want := lookup(l.reference, refIface)
	if want == nil {
		return false
	}
	defer C.wasmtime_component_func_type_delete(want)
	same := bool(C.fuscia_func_types_equal(got, want))
	runtime.KeepAlive(l.engine)
	return same
}

// Stages of componentLinker.call, for messages.
var callStages = [...]string{"instantiate", "looking up call", "call", "post-return"}

// call instantiates c in store and calls its `call` export with arg; result receives the
// answer, which the caller must free with freeVal. The stage names where it failed;
// instantiated is how long instantiation took, zero when it failed.
func (l *componentLinker) call(store *wasmtime.Store, c *component, arg, result *cval) (instantiated time.Duration, stage string, err error) {
	var st C.int
	var ns C.uint64_t
	e := C.fuscia_component_call(l.ptr, (*C.wasmtime_store_t)(firstPointer(store)), c.ptr, c.call, arg, result, &st, &ns)
	runtime.KeepAlive(store)
	if e != nil {
		return time.Duration(ns), callStages[st], takeError(e)
	}
	return time.Duration(ns), "", nil
}

// storeKey identifies the store a host import is called from: the data wasmtime-go gives each
// store (a slab index, unique among live stores).
func storeKey(ctx *C.wasmtime_context_t) uintptr { return uintptr(C.wasmtime_context_get_data(ctx)) }

func storeKeyOf(store *wasmtime.Store) uintptr {
	k := storeKey(C.wasmtime_store_context((*C.wasmtime_store_t)(firstPointer(store))))
	runtime.KeepAlive(store)
	return k
}

//export fusciaComponentImport
func fusciaComponentImport(host C.uintptr_t, fn C.uint32_t, ctx *C.wasmtime_context_t, args *cval, nargs C.size_t, results *cval, nresults C.size_t) (cerr *C.wasmtime_error_t) {
	defer func() {
		// A bug here must not unwind through wasmtime's frames.
		if r := recover(); r != nil {
			msg := C.CString(fmt.Sprintf("fuscia host: %s panicked: %v", worldImports[fn].name, r))
			cerr = C.wasmtime_error_new(msg)
			C.free(unsafe.Pointer(msg))
		}
	}()
	h := cgo.Handle(host).Value().(*Host)
	err := h.componentImport(storeKey(ctx), int(fn), unsafe.Slice(args, int(nargs)), unsafe.Slice(results, int(nresults)))
	if err == nil {
		return nil
	}
	msg := C.CString(err.Error())
	defer C.free(unsafe.Pointer(msg))
	return C.wasmtime_error_new(msg)
}

// Values. Setters write wasmtime-allocated values into v (which must hold nothing to free);
// getters read values wasmtime made, with the kind checked.

func freeVal(v *cval) { C.wasmtime_component_val_delete(v) }

// setString makes v the string s. wasmtime takes a component string for valid UTF-8 and aborts
// the process otherwise, so invalid sequences are replaced here, whatever the caller did.
func setString(v *cval, s string) {
	s = validUTF8(s)
	C.fuscia_set_string(v, kindString, stringPtr(s), C.size_t(len(s)))
}

func setEnum(v *cval, name string) {
	C.fuscia_set_string(v, kindEnum, stringPtr(name), C.size_t(len(name)))
}

func setBytes(v *cval, b []byte) { C.fuscia_set_bytes(v, bytesPtr(b), C.size_t(len(b))) }

func setU16(v *cval, n uint16)  { v.kind = kindU16; *(*uint16)(unsafe.Pointer(&v.of)) = n }
func setU32(v *cval, n uint32)  { v.kind = kindU32; *(*uint32)(unsafe.Pointer(&v.of)) = n }
func setU64(v *cval, n uint64)  { v.kind = kindU64; *(*uint64)(unsafe.Pointer(&v.of)) = n }
func setF64(v *cval, f float64) { v.kind = kindF64; *(*float64)(unsafe.Pointer(&v.of)) = f }

// setRecord makes v a record with these field names and returns the fields' values to fill.
func setRecord(v *cval, names ...string) []*cval {
	entries := unsafe.Slice(C.fuscia_set_record(v, C.size_t(len(names))), len(names))
	out := make([]*cval, len(names))
	for i, n := range names {
		C.wasm_byte_vec_new(&entries[i].name, C.size_t(len(n)), stringPtr(n))
		out[i] = &entries[i].val
	}
	return out
}

// setList makes v a list of n values and returns them to fill.
func setList(v *cval, n int) []cval {
	return unsafe.Slice(C.fuscia_set_list(v, kindList, C.size_t(n)), n)
}

// setTuple makes v a tuple of n values and returns them to fill.
func setTuple(v *cval, n int) []cval {
	return unsafe.Slice(C.fuscia_set_list(v, kindTuple, C.size_t(n)), n)
}

// setCase makes v the variant case name with payload (nil: none), taking payload's contents.
func setCase(v *cval, name string, payload *cval) {
	C.fuscia_box(v, kindVariant, stringPtr(name), C.size_t(len(name)), payload)
}

// setOption makes v none (payload nil) or some(payload), taking payload's contents.
func setOption(v *cval, payload *cval) { C.fuscia_box(v, kindOption, nil, 0, payload) }

// setResult makes v ok(payload) or err(payload), taking payload's contents.
func setResult(v *cval, ok bool, payload *cval) {
	name := "err"
	if ok {
		name = "ok"
	}
	C.fuscia_box(v, kindResult, stringPtr(name), C.size_t(len(name)), payload)
}

// valueError says that a value the guest produced is not of the world's type.
type valueError struct{ where, want, got string }

func (e *valueError) Error() string {
	return fmt.Sprintf("%s is a %s, not the %s of world %s", e.where, e.got, e.want, World)
}

// kindMissing marks the stand-in for a record field the guest's value does not have (field).
const kindMissing = 255

func want(v *cval, kind uint8, where string) error {
	if uint8(v.kind) == kindMissing {
		return fmt.Errorf("%s is missing: the value has no such field of world %s", where, World)
	}
	if uint8(v.kind) != kind {
		return &valueError{where: where, want: kindName(kind), got: kindName(uint8(v.kind))}
	}
	return nil
}

// nameOf copies a wasmtime name or string. Not C.GoStringN: its int length turns a string of
// 2 GiB or more (a guest with that much memory can make one) negative, and the runtime then
// dies of it.
func nameOf(n *C.wasm_name_t) string {
	if n.size == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(n.data)), uint64(n.size)))
}

// stringLen is the length of a string value, read without copying it: a limit is checked
// before a guest's string is copied. 0 for a value of another kind (getString reports it).
func stringLen(v *cval) uint64 {
	if uint8(v.kind) != kindString {
		return 0
	}
	return uint64((*C.wasm_name_t)(unsafe.Pointer(&v.of)).size)
}

func getString(v *cval, where string) (string, error) {
	if err := want(v, kindString, where); err != nil {
		return "", err
	}
	return nameOf((*C.wasm_name_t)(unsafe.Pointer(&v.of))), nil
}

func getEnum(v *cval, where string) (string, error) {
	if err := want(v, kindEnum, where); err != nil {
		return "", err
	}
	return nameOf((*C.wasm_name_t)(unsafe.Pointer(&v.of))), nil
}

func getU16(v *cval, where string) (uint16, error) {
	if err := want(v, kindU16, where); err != nil {
		return 0, err
	}
	return *(*uint16)(unsafe.Pointer(&v.of)), nil
}

func getU64(v *cval, where string) (uint64, error) {
	if err := want(v, kindU64, where); err != nil {
		return 0, err
	}
	return *(*uint64)(unsafe.Pointer(&v.of)), nil
}

func getF64(v *cval, where string) (float64, error) {
	if err := want(v, kindF64, where); err != nil {
		return 0, err
	}
	return *(*float64)(unsafe.Pointer(&v.of)), nil
}

// getBytes reads a list<u8> of at most max bytes.
func getBytes(v *cval, where string, max int) ([]byte, error) {
	if err := want(v, kindList, where); err != nil {
		return nil, err
	}
	list := (*C.wasmtime_component_vallist_t)(unsafe.Pointer(&v.of))
	if int(list.size) > max {
		return nil, fmt.Errorf("%s is %s; the limit is %s", where, schema.FormatSize(int64(list.size)), schema.FormatSize(int64(max)))
	}
	out := make([]byte, int(list.size))
	if n := C.fuscia_get_bytes(v, bytesPtr(out), C.size_t(len(out))); n == ^C.size_t(0) {
		return nil, &valueError{where: where, want: "list<u8>", got: "list of another type"}
	}
	return out, nil
}

// getList returns a list's (or a tuple's, with kind) elements.
func getList(v *cval, kind uint8, where string) ([]cval, error) {
	if err := want(v, kind, where); err != nil {
		return nil, err
	}
	list := (*C.wasmtime_component_vallist_t)(unsafe.Pointer(&v.of))
	if list.size == 0 {
		return nil, nil
	}
	return unsafe.Slice(list.data, int(list.size)), nil
}

// getRecord returns a record's fields by name.
func getRecord(v *cval, where string) (map[string]*cval, error) {
	if err := want(v, kindRecord, where); err != nil {
		return nil, err
	}
	rec := (*C.wasmtime_component_valrecord_t)(unsafe.Pointer(&v.of))
	fields := make(map[string]*cval, int(rec.size))
	if rec.size > 0 {
		entries := unsafe.Slice(rec.data, int(rec.size))
		for i := range entries {
			fields[nameOf(&entries[i].name)] = &entries[i].val
		}
	}
	return fields, nil
}

// getCase returns a variant's case and payload (nil: none).
func getCase(v *cval, where string) (string, *cval, error) {
	if err := want(v, kindVariant, where); err != nil {
		return "", nil, err
	}
	vv := (*C.wasmtime_component_valvariant_t)(unsafe.Pointer(&v.of))
	return nameOf(&vv.discriminant), vv.val, nil
}

// getOption returns an option's payload, nil for none.
func getOption(v *cval, where string) (*cval, error) {
	if err := want(v, kindOption, where); err != nil {
		return nil, err
	}
	return *(**cval)(unsafe.Pointer(&v.of)), nil
}

// cLayout reports the sizes and offsets of component_ext.h's copies of wasmtime's structures,
// for TestComponentLayout to compare with the real headers.
func cLayout() map[string]uintptr {
	var v cval
	var e C.wasmtime_component_valrecord_entry_t
	var vv C.wasmtime_component_valvariant_t
	var r C.wasmtime_component_valresult_t
	var f C.wasmtime_component_func_t
	var i C.wasmtime_component_instance_t
	var b C.wasm_byte_vec_t
	var vt C.wasmtime_component_valtype_t
	var it C.wasmtime_component_item_t
	return map[string]uintptr{
		"sizeof(wasmtime_component_valtype_t)":                unsafe.Sizeof(vt),
		"sizeof(wasmtime_component_item_t)":                   unsafe.Sizeof(it),
		"offsetof(wasmtime_component_item_t, of)":             unsafe.Offsetof(it.of),
		"WASMTIME_COMPONENT_ITEM_COMPONENT_INSTANCE":          C.WASMTIME_COMPONENT_ITEM_COMPONENT_INSTANCE,
		"WASMTIME_COMPONENT_ITEM_COMPONENT_FUNC":              C.WASMTIME_COMPONENT_ITEM_COMPONENT_FUNC,
		"sizeof(wasmtime_component_val_t)":                    unsafe.Sizeof(v),
		"offsetof(wasmtime_component_val_t, of)":              unsafe.Offsetof(v.of),
		"sizeof(wasmtime_component_valunion_t)":               unsafe.Sizeof(v.of),
		"sizeof(wasmtime_component_valrecord_entry_t)":        unsafe.Sizeof(e),
		"offsetof(wasmtime_component_valrecord_entry_t, val)": unsafe.Offsetof(e.val),
		"sizeof(wasmtime_component_valvariant_t)":             unsafe.Sizeof(vv),
		"offsetof(wasmtime_component_valvariant_t, val)":      unsafe.Offsetof(vv.val),
		"sizeof(wasmtime_component_valresult_t)":              unsafe.Sizeof(r),
		"offsetof(wasmtime_component_valresult_t, val)":       unsafe.Offsetof(r.val),
		"sizeof(wasmtime_component_func_t)":                   unsafe.Sizeof(f),
		"sizeof(wasmtime_component_instance_t)":               unsafe.Sizeof(i),
		"sizeof(wasm_byte_vec_t)":                             unsafe.Sizeof(b),
		"offsetof(wasm_byte_vec_t, data)":                     unsafe.Offsetof(b.data),
		"WASMTIME_COMPONENT_RESULT":                           kindResult,
		"WASMTIME_COMPONENT_OPTION":                           kindOption,
		"WASMTIME_COMPONENT_U8":                               kindU8,
	}
}

// cloneVal deep-copies src into dst with wasmtime's own code, which reads and writes the
// structures as wasmtime's Rust side lays them out (TestComponentLayout).
func cloneVal(src, dst *cval) { C.wasmtime_component_val_clone(src, dst) }

func getU32(v *cval, where string) (uint32, error) {
	if err := want(v, kindU32, where); err != nil {
		return 0, err
	}
	return *(*uint32)(unsafe.Pointer(&v.of)), nil
}
