package hostabi

// Where a component's lowered host functions go. The argument guard (argguard.go) must sit
// between a core module and every host function whose arguments it checks, and the name a core
// module imports a function under is the component's choice: `(import "x" "y" ...)` receives
// kv-set as well as `(import "fuscia:host/host@1.0.0" "kv-set" ...)` does. So the guard follows
// the component's own wiring instead of trusting names. Through the index spaces of one
// component (the component model's Binary.md), it finds:
//
//   - the instances it imports as the host interface (any version: the linker satisfies them
//     all with the host's 1.0.0), and the functions aliased from them whose arguments the host
//     guards (argGuards: kv-set, artifact-write, http-request);
//   - the core functions `canon lower` makes of those;
//   - the core instances built of exports (`(core instance (export "y" (func $f)))`) that hold
//     one, and the core modules instantiated with such an instance: their import (argument
//     name, export name) receives the host function, and is guarded whatever its names.
//
// A guarded import is then reached only through its guard: every reference to it in its module
// (calls, ref.func, element segments, exports, global initializers) is replaced by its guard
// (argguard.go, growguard.go), so a table that wit-component's fixup module fills with lowered
// functions holds the guards. Any other use of such a function is refused, because the host
// could not check what reaches it: lifting it (`canon lift`), using it as a canonical option,
// passing the host instance or one of its guarded functions to a nested component, bundling
// them into an instance of exports, or making a component's start call one. The toolchains
// (wit-component for C, Rust and Go; componentize-js) use none of these.

import (
	"bytes"
	"errors"
	"fmt"
)

// errHostCallsUnguarded says that a component hands a host function whose arguments the host
// checks to something the guard cannot stand in front of: the component is refused.
var errHostCallsUnguarded = errors.New("the host cannot check the arguments of its calls of the host interface")

// importKey names a core module's import: its module and field names.
type importKey struct{ module, field string }

// moduleGuards are, for each core module section of a component (by its position among the
// component's core module sections), the imports that receive a guarded host function, and the
// host function each receives (argGuard.field).
type moduleGuards map[int]map[importKey]string

// flowState is what the walk knows of each index space; an entry of "" is not a guarded host
// function.
type flowState struct {
	top bool // the outermost component: its instance imports are satisfied by the host

	compFuncs     []string      // component functions: the guarded host function each is
	compInstances []bool        // component instances: whether each is the host interface
	coreFuncs     []string      // core functions: the guarded host function each lowers
	coreInstances []coreInstRef // core instances
	modules       []int         // core modules: the position of their section, -1 elsewhere
	sections      int           // core module sections so far
	guards        moduleGuards
}

// coreInstRef is a core instance: made of exports (exports holds those that are guarded host
// functions), or instantiated from module (the index of the module, or -1).
type coreInstRef struct {
	fromExports bool
	exports     map[string]string
}

// hostFlows walks the component wasm (its header included) and returns where its guarded host
// functions go. top says whether it is the outermost component, whose imports the host
// satisfies; a nested one gets only what its parent passes it, and the parent may pass it
// nothing of the host's. The error wraps errHostCallsUnguarded for a use the guard cannot
// stand in front of, and errComponentGuard when the component cannot be read.
func hostFlows(wasm []byte, top bool) (moduleGuards, error) {
	f := &flowState{top: top, guards: moduleGuards{}}
	r := &wasmReader{b: wasm, off: len(componentHeader)}
	for r.more() {
		at, id, body, err := r.componentSection()
		if err != nil {
			return nil, err
		}
		switch id {
		case 0: // custom
		case compSecCoreModule:
			f.modules = append(f.modules, f.sections)
			f.sections++
		case 2:
			err = f.coreInstanceSection(body)
		case 3, 7: // core types, types
		case compSecComponent:
		case 5:
			err = f.instanceSection(body)
		case 6:
			err = f.aliasSection(body)
		case 8:
			err = f.canonSection(body)
		case 9:
			sr := &wasmReader{b: body}
			if fn := sr.u32(); sr.err == nil && f.compFunc(fn) != "" {
				err = fmt.Errorf("%w: its start function is the host's %s", errHostCallsUnguarded, f.compFunc(fn))
			}
		case 10:
			err = f.importSection(body)
		case 11:
			err = f.exportSection(body)
		default:
			err = fmt.Errorf("%w: section %d at offset %d", errComponentGuard, id, at)
		}
		if err != nil {
			return nil, err
		}
	}
	return f.guards, nil
}

// componentSection reads the next section of a component: its offset, id and body.
func (r *wasmReader) componentSection() (at int, id byte, body []byte, err error) {
	at = r.off
	id = r.byte()
	body = r.take(int(r.u32()))
	if r.err != nil {
		return at, 0, nil, fmt.Errorf("%w: section at offset %d: %v", errComponentGuard, at, r.err)
	}
	return at, id, body, nil
}

func (f *flowState) compFunc(i uint32) string {
	if int(i) < len(f.compFuncs) {
		return f.compFuncs[i]
	}
	return ""
}

func (f *flowState) coreFunc(i uint32) string {
	if int(i) < len(f.coreFuncs) {
		return f.coreFuncs[i]
	}
	return ""
}

func (f *flowState) hostInstance(i uint32) bool {
	return int(i) < len(f.compInstances) && f.compInstances[i]
}

// readErr is r's error as a component the walk cannot read.
func readErr(r *wasmReader, what string) error {
	if r.err == nil && r.more() {
		r.fail("%d bytes after the last entry", len(r.b)-r.off)
	}
	if r.err != nil {
		return fmt.Errorf("%w: %s: %v", errComponentGuard, what, r.err)
	}
	return nil
}

// coreInstanceSection: 0x00 module and arguments (name, 0x12, core instance), or 0x01 exports
// (name, core sort, index).
func (f *flowState) coreInstanceSection(body []byte) error {
	r := &wasmReader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		switch r.byte() {
		case 0x00:
			m := r.u32()
			args := r.u32()
			for j := uint32(0); j < args && r.err == nil; j++ {
				name := string(r.take(int(r.u32())))
				if r.byte() != 0x12 {
					r.fail("a core instance argument of another sort than an instance")
				}
				inst := r.u32()
				if r.err != nil || int(inst) >= len(f.coreInstances) {
					continue
				}
				for field, host := range f.coreInstances[inst].exports {
					if err := f.guard(m, importKey{name, field}, host); err != nil {
						return err
					}
				}
			}
			f.coreInstances = append(f.coreInstances, coreInstRef{})
		case 0x01:
			ref := coreInstRef{fromExports: true}
			exports := r.u32()
			for j := uint32(0); j < exports && r.err == nil; j++ {
				name := string(r.take(int(r.u32())))
				sort := r.byte()
				idx := r.u32()
				if sort == 0x00 && f.coreFunc(idx) != "" {
					if ref.exports == nil {
						ref.exports = map[string]string{}
					}
					ref.exports[name] = f.coreFunc(idx)
				}
			}
			f.coreInstances = append(f.coreInstances, ref)
		default:
			r.fail("a core instance of unknown form")
		}
	}
	return readErr(r, "core instances")
}

// guard records that import key of module m receives the host function host.
func (f *flowState) guard(m uint32, key importKey, host string) error {
	if int(m) >= len(f.modules) || f.modules[m] < 0 {
		return fmt.Errorf("%w: the host's %s reaches a core module defined outside the component", errHostCallsUnguarded, host)
	}
	pos := f.modules[m]
	if f.guards[pos] == nil {
		f.guards[pos] = map[importKey]string{}
	}
	f.guards[pos][key] = host
	return nil
}

// instanceSection: 0x00 a component and its arguments (string, sort, index), or 0x01 exports
// (export name, sort, index). Neither may carry the host interface or a guarded function of it.
func (f *flowState) instanceSection(body []byte) error {
	r := &wasmReader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		var items uint32
		form := r.byte()
		switch form {
		case 0x00: // a component, and arguments named by plain strings
			r.u32()
			items = r.u32()
		case 0x01: // exports, named as exports are (0x00 or 0x01, then the name)
			items = r.u32()
		default:
			r.fail("an instance of unknown form 0x%02x", form)
		}
		for j := uint32(0); j < items && r.err == nil; j++ {
			if form == 0x01 {
				if nf := r.byte(); nf > 0x01 {
					r.fail("unknown name form 0x%02x", nf)
				}
			}
			name := string(r.take(int(r.u32())))
			sort, idx := r.sortIdx()
			if r.err != nil {
				break
			}
			if sort == 0x05 && f.hostInstance(idx) {
				return fmt.Errorf("%w: it passes the host interface on as %q", errHostCallsUnguarded, name)
			}
			if sort == 0x01 && f.compFunc(idx) != "" {
				return fmt.Errorf("%w: it passes the host's %s on as %q", errHostCallsUnguarded, f.compFunc(idx), name)
			}
		}
		f.compInstances = append(f.compInstances, false)
	}
	return readErr(r, "instances")
}

// sortIdx reads a sort and an index; a core sort comes back as 0x100 + its code.
func (r *wasmReader) sortIdx() (sort, idx uint32) {
	s := uint32(r.byte())
	if s == 0x00 {
		s = 0x100 + uint32(r.byte())
	}
	return s, r.u32()
}

// aliasSection: a sort and a target, 0x00 a component instance's export, 0x01 a core instance's
// export, 0x02 an outer definition.
func (f *flowState) aliasSection(body []byte) error {
	r := &wasmReader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		sort := uint32(r.byte())
		if sort == 0x00 {
			sort = 0x100 + uint32(r.byte())
		}
		var inst uint32
		var name string
		switch target := r.byte(); target {
		case 0x00, 0x01:
			inst = r.u32()
			name = string(r.take(int(r.u32())))
		case 0x02:
			r.u32()
			r.u32()
		default:
			r.fail("an alias of unknown target 0x%02x", target)
		}
		if r.err != nil {
			break
		}
		switch sort {
		case 0x01: // a component function
			host := ""
			if f.hostInstance(inst) && guardedHostFunc(name) {
				host = name
			}
			f.compFuncs = append(f.compFuncs, host)
		case 0x05: // a component instance
			f.compInstances = append(f.compInstances, false)
		case 0x100: // a core function: a guarded one only from an instance of exports
			host := ""
			if int(inst) < len(f.coreInstances) && f.coreInstances[inst].fromExports {
				host = f.coreInstances[inst].exports[name]
			}
			f.coreFuncs = append(f.coreFuncs, host)
		case 0x111: // a core module, defined elsewhere
			f.modules = append(f.modules, -1)
		case 0x112: // a core instance
			f.coreInstances = append(f.coreInstances, coreInstRef{})
		}
	}
	return readErr(r, "aliases")
}

// guardedHostFunc says whether name is a host function whose arguments the guard checks.
func guardedHostFunc(name string) bool {
	for i := range argGuards {
		if argGuards[i].field == name {
			return true
		}
	}
	return false
}

// canonSection: each definition makes one function, a component function (lift) or a core
// function (lower and the built-ins). A lowered guarded host function is followed; one lifted
// or named as an option is refused.
func (f *flowState) canonSection(body []byte) error {
	r := &wasmReader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		op := r.byte()
		switch op {
		case 0x00: // lift: 0x00 core function, options, type
			r.byte()
			fn := r.u32()
			if host := f.coreFunc(fn); host != "" && r.err == nil {
				return fmt.Errorf("%w: it lifts the host's %s", errHostCallsUnguarded, host)
			}
			if err := f.canonOpts(r); err != nil {
				return err
			}
			r.u32()
			f.compFuncs = append(f.compFuncs, "")
			continue
		case 0x01: // lower: 0x00 component function, options
			r.byte()
			fn := r.u32()
			if err := f.canonOpts(r); err != nil {
				return err
			}
			f.coreFuncs = append(f.coreFuncs, f.compFunc(fn))
			continue
		case 0x02, 0x03, 0x04, 0x07, 0x0e, 0x13, 0x14, 0x15, 0x1a, 0x1b, 0x40: // a type index
			r.u32()
		case 0x05, 0x0d, 0x1e, 0x1f, 0x22, 0x23, 0x42, 0x08, 0x24, 0x25: // nothing
		case 0x06, 0x0c: // async?
			r.byte()
		case 0x0a, 0x0b: // context.get/set: a value type and an index
			r.byte()
			r.u32()
		case 0x09: // task.return: a result list, options
			if r.byte() == 0x00 {
				r.valType()
			} else {
				r.byte()
			}
			if err := f.canonOpts(r); err != nil {
				return err
			}
		case 0x0f, 0x10, 0x16, 0x17: // a type index, options
			r.u32()
			if err := f.canonOpts(r); err != nil {
				return err
			}
		case 0x11, 0x12, 0x18, 0x19: // a type index, async?
			r.u32()
			r.byte()
		case 0x1c, 0x1d: // options
			if err := f.canonOpts(r); err != nil {
				return err
			}
		case 0x20, 0x21: // async?, a memory
			r.byte()
			r.u32()
		case 0x41: // a type index, a table
			r.u32()
			r.u32()
		default:
			r.fail("canonical definition 0x%02x", op)
		}
		f.coreFuncs = append(f.coreFuncs, "")
	}
	return readErr(r, "canonical definitions")
}

// canonOpts reads canonical options; one naming a guarded core function (realloc, post-return,
// callback) is refused.
func (f *flowState) canonOpts(r *wasmReader) error {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		switch opt := r.byte(); opt {
		case 0x00, 0x01, 0x02, 0x06: // string encodings, async
		case 0x03: // memory
			r.u32()
		case 0x04, 0x05, 0x07: // realloc, post-return, callback
			if host := f.coreFunc(r.u32()); host != "" && r.err == nil {
				return fmt.Errorf("%w: it names the host's %s as a canonical option", errHostCallsUnguarded, host)
			}
		default:
			r.fail("canonical option 0x%02x", opt)
		}
	}
	return nil
}

// importSection: imports add to the index space of their kind; an instance the outermost
// component imports under the host interface's name is the host's.
func (f *flowState) importSection(body []byte) error {
	r := &wasmReader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.externName()
		f.addExtern(r, f.top && bytes.HasPrefix(name, []byte(hostImportPrefix)), "")
	}
	return readErr(r, "imports")
}

// externName reads an import's or export's name (forms 0x00, 0x01; 0x02 with attributes, of
// which a version suffix is appended).
func (r *wasmReader) externName() []byte {
	form := r.byte()
	name := r.take(int(r.u32()))
	switch form {
	case 0x00, 0x01:
	case 0x02:
		attrs := r.u32()
		for i := uint32(0); i < attrs && r.err == nil; i++ {
			kind := r.byte()
			val := r.take(int(r.u32()))
			if kind == 0x01 {
				name = append(append([]byte{}, name...), val...)
			}
		}
	default:
		r.fail("unknown name form 0x%02x", form)
	}
	return name
}

// addExtern reads an externtype and adds an entry to the index space of its kind: an instance
// that is the host's when host is set, a function that is the guarded host function fn.
func (f *flowState) addExtern(r *wasmReader, host bool, fn string) {
	switch kind := r.byte(); kind {
	case 0x00: // a core module type
		r.byte()
		r.u32()
		f.modules = append(f.modules, -1)
	case 0x01:
		r.u32()
		f.compFuncs = append(f.compFuncs, fn)
	case 0x02: // a value bound
		if r.byte() == 0x00 {
			r.u32()
		} else {
			r.sleb()
		}
	case 0x03: // a type bound
		if r.byte() == 0x00 {
			r.u32()
		}
	case 0x04:
		r.u32()
	case 0x05:
		r.u32()
		f.compInstances = append(f.compInstances, host)
	default:
		r.fail("unknown extern type 0x%02x", kind)
	}
}

// exportSection: an export adds an entry to the index space of its sort, the same definition
// under a new index: the host interface, a guarded function and a core module stay what they
// were.
func (f *flowState) exportSection(body []byte) error {
	r := &wasmReader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.externName()
		sort, idx := r.sortIdx()
		switch r.byte() {
		case 0x00:
		case 0x01:
			// The type ascribed to the export; the entry it adds is the sort's below.
			sub := &flowState{}
			sub.addExtern(r, false, "")
		default:
			r.fail("unknown byte before an export's optional type")
		}
		if r.err != nil {
			break
		}
		switch sort {
		case 0x01:
			f.compFuncs = append(f.compFuncs, f.compFunc(idx))
		case 0x05:
			f.compInstances = append(f.compInstances, f.hostInstance(idx))
		case 0x111:
			m := -1
			if int(idx) < len(f.modules) {
				m = f.modules[idx]
			}
			f.modules = append(f.modules, m)
		}
	}
	return readErr(r, "exports")
}
