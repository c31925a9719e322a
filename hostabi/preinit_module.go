package hostabi

// The binary side of pre-initialization (preinit.go): reading what a snapshot needs of a core
// module, the instrumented copy whose globals can be read, and the module rebuilt with a
// snapshot in it. Only the sections that hold state change; code is never touched, so no index
// moves and nothing is renumbered.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Section ids that pre-initialization looks at besides growguard.go's.
const (
	secStart     = 8
	secData      = 11
	secDataCount = 12
)

// preinitGlobalExport prefixes the exports that the instrumented copy adds, one per mutable
// global, so that the host can read them after _initialize.
const preinitGlobalExport = "fuscia:preinit:global:"

// errPreinitUnsupported wraps the reasons a module cannot be snapshotted by its structure.
var errPreinitUnsupported = errors.New("the module cannot be pre-initialized")

// preinitModule is what a snapshot needs to know of a module, read once by parsePreinit.
type preinitModule struct {
	header []byte
	secs   []section

	globals []preinitGlobal // the module's own globals, in index order (no global is imported)
	// memory is the one memory's limits as written: its flags and declared maximum.
	memFlags byte
	memMax   uint64
}

// preinitGlobal is one defined global: its type, whether it is mutable, and its initializer as
// written (a constant expression ending in end).
type preinitGlobal struct {
	valType byte
	mutable bool
	init    []byte
}

// Numeric value types, the only ones a snapshotted mutable global may have.
const (
	valI32 = 0x7F
	valI64 = 0x7E
	valF32 = 0x7D
	valF64 = 0x7C
)

// parsePreinit reads wasm and checks that a snapshot of it after _initialize is all the state
// an instance has: one 32-bit memory of its own and globals of its own (none imported), no
// start function, no passive data or table changes (which a later memory.init, table.set or
// table.grow would make state that is not in memory or globals), and mutable globals of
// numeric types only. The error wraps errPreinitUnsupported.
func parsePreinit(wasm []byte) (*preinitModule, error) {
	fail := func(format string, args ...any) (*preinitModule, error) {
		return nil, fmt.Errorf("%w: %s", errPreinitUnsupported, fmt.Sprintf(format, args...))
	}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || binary.LittleEndian.Uint32(wasm[4:8]) != 1 {
		return fail("not a core module of binary version 1")
	}
	pm := &preinitModule{header: wasm[:8]}
	r := &wasmReader{b: wasm, off: 8}
	for r.more() {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil {
			return fail("%v", r.err)
		}
		pm.secs = append(pm.secs, section{id, body})
	}
	memories, initExport := 0, false
	for _, s := range pm.secs {
		r := &wasmReader{b: s.body}
		switch s.id {
		case secImport:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				r.take(int(r.u32()))
				r.take(int(r.u32()))
				if kind := r.byte(); kind != 0x00 {
					return fail("it imports a table, memory, global or tag, whose state the host does not own")
				}
				r.u32()
			}
		case secMemory:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				flags := r.byte()
				r.u64()
				if flags&0x01 != 0 {
					pm.memMax = r.u64()
				}
				pm.memFlags = flags
				memories++
			}
			if pm.memFlags&^0x01 != 0 {
				return fail("its memory is shared, 64-bit or of another page size (flags 0x%02x)", pm.memFlags)
			}
		case secGlobal:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				g := preinitGlobal{valType: r.byte()}
				switch mut := r.byte(); mut {
				case 0:
				case 1:
					g.mutable = true
				default:
					return fail("global %d has mutability 0x%02x", i, mut)
				}
				start := r.off
				if err := r.skipConstExpr(); err != nil {
					return fail("global %d: %v", i, err)
				}
				g.init = s.body[start:r.off]
				if g.mutable && (g.valType < valF64 || g.valType > valI32) {
					return fail("mutable global %d is of type 0x%02x, not a number", i, g.valType)
				}
				pm.globals = append(pm.globals, g)
			}
		case secExport:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				name := string(r.take(int(r.u32())))
				kind := r.byte()
				r.u32()
				if name == "_initialize" && kind == 0x00 {
					initExport = true
				}
			}
		case secStart:
			return fail("it has a start function, which would run again in every instance")
		case secDataCount:
			return fail("it has a data count section (passive data that memory.init could copy later)")
		case secCode:
			if err := checkPreinitCode(s.body); err != nil {
				return fail("%v", err)
			}
		}
		if r.err != nil {
			return fail("section %d: %v", s.id, r.err)
		}
	}
	switch {
	case memories != 1:
		return fail("it has %d memories of its own; one is needed", memories)
	case !initExport:
		return fail("it does not export _initialize")
	}
	return pm, nil
}

// checkPreinitCode refuses code that changes a table or copies passive data: a snapshot holds
// memory and globals only, and tables keep the contents their element segments give them.
func checkPreinitCode(code []byte) error {
	r := &wasmReader{b: code}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		body := r.take(int(r.u32()))
		if r.err != nil {
			break
		}
		br := &wasmReader{b: body}
		groups := br.u32()
		for j := uint32(0); j < groups && br.err == nil; j++ {
			br.u32()
			br.valType()
		}
		for br.err == nil && br.more() {
			op := br.byte()
			switch op {
			case 0x40: // memory.grow memidx, which skipInstr leaves to growguard.go
				br.u32()
				continue
			case 0x26: // table.set
				return fmt.Errorf("function body %d sets a table element", i)
			case 0xFC:
				// memory.init, data.drop, table.init, elem.drop, table.copy, table.grow, table.fill
				at := br.off
				switch sub := br.u32(); sub {
				case 8, 9, 12, 13, 14, 15, 17:
					return fmt.Errorf("function body %d uses the instruction 0xfc %d, which changes state a snapshot does not hold", i, sub)
				}
				br.off = at
			}
			if err := br.skipInstr(op); err != nil {
				return fmt.Errorf("function body %d: %v", i, err)
			}
		}
		if br.err != nil {
			return fmt.Errorf("function body %d: %v", i, br.err)
		}
	}
	return r.err
}

// skipConstExpr skips a constant expression, its end included.
func (r *wasmReader) skipConstExpr() error {
	for r.err == nil {
		op := r.byte()
		if op == 0x0B {
			return r.err
		}
		if err := r.skipInstr(op); err != nil {
			return err
		}
	}
	return r.err
}

// globalExportName is the instrumented copy's export of global i.
func globalExportName(i int) string { return fmt.Sprintf("%s%d", preinitGlobalExport, i) }

// instrumented returns the module with every mutable global exported as globalExportName(i).
// The copy only runs _initialize once at load; what attempts run is built by withSnapshot.
func (pm *preinitModule) instrumented() []byte {
	var added []byte
	k := uint32(0)
	for i, g := range pm.globals {
		if g.mutable {
			added = appendName(added, globalExportName(i))
			added = append(added, 0x03)
			added = appendU32(added, uint32(i))
			k++
		}
	}
	out := append([]byte(nil), pm.header...)
	for _, s := range pm.secs {
		body := s.body
		if s.id == secExport {
			r := &wasmReader{b: body}
			n := r.u32()
			nb := appendU32(nil, n+k)
			nb = append(nb, body[r.off:]...)
			body = append(nb, added...)
		}
		out = appendSection(out, s.id, body)
	}
	return out
}

// preinitValue is a mutable global's value after _initialize, as its bits.
type preinitValue uint64

// withSnapshot rebuilds the module in the state memory and globals describe: the memory's
// initial size is the snapshot's, the data section holds the snapshot's non-zero pages (and
// replaces the original segments, which the snapshot contains), each mutable global starts at
// its snapshotted value, and _initialize is no longer exported. globals holds one value per
// mutable global, in index order.
func (pm *preinitModule) withSnapshot(memory []byte, globals []preinitValue) ([]byte, error) {
	if len(memory)%wasmPage != 0 {
		return nil, fmt.Errorf("memory of %d bytes is not a whole number of pages", len(memory))
	}
	pages := uint64(len(memory) / wasmPage)
	if pm.memFlags&0x01 != 0 && pages > pm.memMax {
		return nil, fmt.Errorf("memory of %d pages is past its declared maximum of %d", pages, pm.memMax)
	}
	var values []preinitValue
	for i, g := range pm.globals {
		if g.mutable {
			if len(globals) == 0 {
				return nil, fmt.Errorf("no value for global %d", i)
			}
			values, globals = append(values, globals[0]), globals[1:]
		}
	}

	data := snapshotData(memory)
	out := make([]byte, 0, len(pm.header)+len(data)+4<<20)
	out = append(out, pm.header...)
	// The new data section replaces the module's, or, in a module without one, follows the
	// last section that comes before it.
	dataDone, last := false, -1
	for i, s := range pm.secs {
		if s.id == secData {
			last = -1
			break
		}
		if s.id != secCustom && sectionRank(s.id) < secData {
			last = i
		}
	}
	for i, s := range pm.secs {
		body := s.body
		switch s.id {
		case secMemory:
			body = []byte{0x01, pm.memFlags}
			body = appendU64(body, pages)
			if pm.memFlags&0x01 != 0 {
				body = appendU64(body, pm.memMax)
			}
		case secGlobal:
			body = pm.globalSection(values)
		case secExport:
			body = withoutExport(body, "_initialize")
		case secData:
			body, dataDone = data, true
		}
		out = appendSection(out, s.id, body)
		if i == last {
			out = appendSection(out, secData, data)
			dataDone = true
		}
	}
	if !dataDone {
		// No data section, and none of the sections that precede one.
		out = appendSection(out, secData, data)
	}
	return out, nil
}

// globalSection is the global section with each mutable global's initializer replaced by the
// constant of its value.
func (pm *preinitModule) globalSection(values []preinitValue) []byte {
	out := appendU32(nil, uint32(len(pm.globals)))
	for _, g := range pm.globals {
		out = append(out, g.valType)
		if !g.mutable {
			out = append(out, 0x00)
			out = append(out, g.init...)
			continue
		}
		v := values[0]
		values = values[1:]
		out = append(out, 0x01)
		switch g.valType {
		case valI32:
			out = append(out, 0x41)
			out = appendS64(out, int64(int32(uint32(v))))
		case valI64:
			out = append(out, 0x42)
			out = appendS64(out, int64(v))
		case valF32:
			out = append(out, 0x43)
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		case valF64:
			out = append(out, 0x44)
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
		out = append(out, 0x0B)
	}
	return out
}

// withoutExport is an export section's body without the export called name.
func withoutExport(body []byte, name string) []byte {
	r := &wasmReader{b: body}
	n := r.u32()
	var kept []byte
	k := uint32(0)
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.off
		got := string(r.take(int(r.u32())))
		r.byte()
		r.u32()
		if got != name {
			kept = append(kept, body[start:r.off]...)
			k++
		}
	}
	return append(appendU32(nil, k), kept...)
}

// snapshotPage is the granularity of the snapshot's data segments: each run of pages with a
// non-zero byte becomes one segment, trimmed of the zeros at both ends. A Go guest's 3.5 MB
// become a few hundred segments. wasmtime accepts at most 100,000: a memory of more than
// 256 MiB is cut in Wasm pages (64 KiB) instead, so that even alternating zero and non-zero
// pages of a 4 GiB memory stay under it.
const snapshotPage = 4 << 10

// snapshotData is a data section holding the non-zero parts of memory as active segments of
// memory 0.
func snapshotData(memory []byte) []byte {
	page := snapshotPage
	if len(memory) > 256<<20 {
		page = wasmPage
	}
	var segs []byte
	count := uint32(0)
	for start := 0; start < len(memory); {
		if isZero(memory[start:min(start+page, len(memory))]) {
			start += page
			continue
		}
		end := start + page
		for end < len(memory) && !isZero(memory[end:min(end+page, len(memory))]) {
			end += page
		}
		end = min(end, len(memory))
		run := memory[start:end]
		lead := len(run) - len(bytes.TrimLeft(run, "\x00"))
		run = bytes.TrimRight(run[lead:], "\x00")
		segs = append(segs, 0x00, 0x41) // active, memory 0, i32.const offset
		segs = appendS64(segs, int64(int32(uint32(start+lead))))
		segs = append(segs, 0x0B)
		segs = appendU32(segs, uint32(len(run)))
		segs = append(segs, run...)
		count++
		start = end
	}
	return append(appendU32(make([]byte, 0, len(segs)+5), count), segs...)
}

var zeroPage [wasmPage]byte

// isZero says whether b, at most a Wasm page long, holds only zeros.
func isZero(b []byte) bool { return bytes.Equal(b, zeroPage[:len(b)]) }

func appendU64(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
