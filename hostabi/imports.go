package hostabi

import (
	"errors"
	"fmt"
	"os"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/lang/schema"
)

// Limits on what a guest hands the host in one import call: a guest bug or a hostile guest
// gets a trap naming the limit, not a host that buffers without end.
const (
	maxKeyBytes   = 1 << 10
	maxValueBytes = 1 << 20
	maxLogBytes   = 16 << 10
)

// ErrNotFound is what Artifacts.Read returns for an id the execution does not have; the
// guest gets "none".
var ErrNotFound = errors.New("not found")

// newLinker defines WASI and the fuscia imports once; the linker serves every store.
func newLinker(engine *wasmtime.Engine) (*wasmtime.Linker, error) {
	l := wasmtime.NewLinker(engine)
	if err := l.DefineWasi(); err != nil {
		l.Close()
		return nil, fmt.Errorf("define WASI: %w", err)
	}
	imports := map[string]any{
		"log":            hostLog,
		"config_get":     hostConfigGet,
		"kv_get":         hostKVGet,
		"kv_set":         hostKVSet,
		"kv_delete":      hostKVDelete,
		"artifact_write": hostArtifactWrite,
		"artifact_read":  hostArtifactRead,
		"http_request":   hostHTTPRequest,
	}
	for name, f := range imports {
		if err := l.FuncWrap("fuscia", name, f); err != nil {
			l.Close()
			return nil, fmt.Errorf("define fuscia.%s: %w", name, err)
		}
	}
	return l, nil
}

func callOf(c *wasmtime.Caller) *call { return c.Data().(*call) }

// fault makes the guest trap with msg; the attempt fails with it as a fatal error.
func (cl *call) fault(format string, args ...any) *wasmtime.Trap {
	msg := fmt.Sprintf(format, args...)
	if cl.hostFault == "" {
		cl.hostFault = msg
	}
	return wasmtime.NewTrap(msg)
}

// read copies (ptr, n) out of guest memory.
func read(c *wasmtime.Caller, cl *call, fn, what string, ptr, n int32, max int) ([]byte, *wasmtime.Trap) {
	if n < 0 || int(n) > max {
		return nil, cl.fault("%s: %s is %d bytes; the limit is %s", fn, what, uint32(n), schema.FormatSize(int64(max)))
	}
	data := c.GetExport("memory").Memory().UnsafeData(c)
	p := uint64(uint32(ptr))
	if p+uint64(n) > uint64(len(data)) {
		return nil, cl.fault("%s: %s pointer out of bounds (ptr %d, len %d, memory %d bytes)", fn, what, p, n, len(data))
	}
	return append([]byte(nil), data[p:p+uint64(n)]...), nil
}

// give copies b into memory from the guest's fuscia_alloc and returns (ptr << 32 | len); nil
// is "none" (0). An empty value is (1 << 32 | 0), so that it differs from none.
func give(c *wasmtime.Caller, cl *call, fn string, b []byte) (int64, *wasmtime.Trap) {
	if b == nil {
		return 0, nil
	}
	if len(b) == 0 {
		return 1 << 32, nil
	}
	alloc := c.GetExport("fuscia_alloc").Func()
	r, err := alloc.Call(c, int32(len(b)))
	if err != nil {
		// The guest trapped (or was interrupted) inside fuscia_alloc: pass that on as it is.
		var trap *wasmtime.Trap
		if errors.As(err, &trap) {
			return 0, cl.fault("%s: fuscia_alloc(%d) trapped: %s", fn, len(b), firstLine(trap.Message()))
		}
		return 0, wasmtime.NewTrap(fmt.Sprintf("%s: fuscia_alloc: %s", fn, firstLine(err.Error())))
	}
	p32, ok := r.(int32)
	if !ok { // newModule refuses such a module; this keeps a wrong type from panicking the host
		return 0, cl.fault("%s: fuscia_alloc returned %T, not an i32", fn, r)
	}
	p := uint64(uint32(p32))
	data := c.GetExport("memory").Memory().UnsafeData(c)
	if p+uint64(len(b)) > uint64(len(data)) {
		return 0, cl.fault("%s: fuscia_alloc(%d) returned %d, outside guest memory (%d bytes)", fn, len(b), p, len(data))
	}
	copy(data[p:], b)
	return int64(p<<32 | uint64(len(b))), nil
}

func hostLog(c *wasmtime.Caller, level, ptr, n int32) *wasmtime.Trap {
	cl := callOf(c)
	msg, trap := read(c, cl, "log", "message", ptr, n, maxLogBytes)
	if trap != nil {
		return trap
	}
	lv := Level(level)
	if lv < LevelDebug || lv > LevelError {
		lv = LevelInfo
	}
	if cl.env.Log != nil {
		cl.env.Log(lv, string(msg))
	}
	return nil
}

func hostConfigGet(c *wasmtime.Caller, kptr, klen int32) (int64, *wasmtime.Trap) {
	cl := callOf(c)
	key, trap := read(c, cl, "config_get", "key", kptr, klen, maxKeyBytes)
	if trap != nil {
		return 0, trap
	}
	v, ok := cl.env.Config[string(key)]
	if !ok {
		return 0, nil
	}
	if v == nil {
		v = []byte{}
	}
	return give(c, cl, "config_get", v)
}

func (cl *call) kv(fn string) (KV, *wasmtime.Trap) {
	if cl.env.KV == nil {
		return nil, cl.fault("%s: this call has no key-value scope", fn)
	}
	return cl.env.KV, nil
}

func hostKVGet(c *wasmtime.Caller, kptr, klen int32) (int64, *wasmtime.Trap) {
	cl := callOf(c)
	key, trap := read(c, cl, "kv_get", "key", kptr, klen, maxKeyBytes)
	if trap != nil {
		return 0, trap
	}
	kv, trap := cl.kv("kv_get")
	if trap != nil {
		return 0, trap
	}
	v, ok, err := kv.Get(cl.ctx, string(key))
	if err != nil {
		return 0, cl.fault("kv_get %q: %v", key, err)
	}
	if !ok {
		return 0, nil
	}
	if v == nil {
		v = []byte{}
	}
	return give(c, cl, "kv_get", v)
}

func hostKVSet(c *wasmtime.Caller, kptr, klen, vptr, vlen int32) *wasmtime.Trap {
	cl := callOf(c)
	key, trap := read(c, cl, "kv_set", "key", kptr, klen, maxKeyBytes)
	if trap != nil {
		return trap
	}
	val, trap := read(c, cl, "kv_set", "value", vptr, vlen, maxValueBytes)
	if trap != nil {
		return trap
	}
	kv, trap := cl.kv("kv_set")
	if trap != nil {
		return trap
	}
	if err := kv.Set(cl.ctx, string(key), val); err != nil {
		return cl.fault("kv_set %q: %v", key, err)
	}
	return nil
}

func hostKVDelete(c *wasmtime.Caller, kptr, klen int32) *wasmtime.Trap {
	cl := callOf(c)
	key, trap := read(c, cl, "kv_delete", "key", kptr, klen, maxKeyBytes)
	if trap != nil {
		return trap
	}
	kv, trap := cl.kv("kv_delete")
	if trap != nil {
		return trap
	}
	if err := kv.Delete(cl.ctx, string(key)); err != nil {
		return cl.fault("kv_delete %q: %v", key, err)
	}
	return nil
}

// maxArtifactBytes bounds one artifact_write; larger data belongs in several artifacts.
const maxArtifactBytes = 64 << 20

func hostArtifactWrite(c *wasmtime.Caller, ctptr, ctlen, dptr, dlen int32) (int64, *wasmtime.Trap) {
	cl := callOf(c)
	ct, trap := read(c, cl, "artifact_write", "content type", ctptr, ctlen, maxKeyBytes)
	if trap != nil {
		return 0, trap
	}
	data, trap := read(c, cl, "artifact_write", "data", dptr, dlen, maxArtifactBytes)
	if trap != nil {
		return 0, trap
	}
	if cl.env.Artifacts == nil {
		return 0, cl.fault("artifact_write: this call has no artifact store")
	}
	ref, err := cl.env.Artifacts.Write(cl.ctx, string(ct), data)
	if err != nil {
		return 0, cl.fault("artifact_write: %v", err)
	}
	return give(c, cl, "artifact_write", ref)
}

func hostArtifactRead(c *wasmtime.Caller, idptr, idlen int32) (int64, *wasmtime.Trap) {
	cl := callOf(c)
	id, trap := read(c, cl, "artifact_read", "id", idptr, idlen, maxKeyBytes)
	if trap != nil {
		return 0, trap
	}
	if cl.env.Artifacts == nil {
		return 0, cl.fault("artifact_read: this call has no artifact store")
	}
	data, err := cl.env.Artifacts.Read(cl.ctx, string(id))
	if errors.Is(err, ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, cl.fault("artifact_read %q: %v", id, err)
	}
	if data == nil {
		data = []byte{}
	}
	return give(c, cl, "artifact_read", data)
}

// maxHTTPRequestBytes bounds the JSON of one http_request (the body is in it, base64).
const maxHTTPRequestBytes = 16 << 20

func hostHTTPRequest(c *wasmtime.Caller, ptr, n int32) (int64, *wasmtime.Trap) {
	cl := callOf(c)
	req, trap := read(c, cl, "http_request", "request", ptr, n, maxHTTPRequestBytes)
	if trap != nil {
		return 0, trap
	}
	resp, violation, err := cl.env.HTTP.Do(cl.ctx, req)
	if err != nil {
		return 0, cl.fault("http_request: %v", err)
	}
	if violation != "" && cl.violation == "" {
		cl.violation = violation
	}
	return give(c, cl, "http_request", resp)
}
