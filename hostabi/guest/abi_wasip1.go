//go:build wasip1

package guest

import (
	"slices"
	"unsafe"
)

// This file is the ABI itself (docs/reference/abi-v1.md, version 1): the exports the host calls and the
// imports it provides. Everything else in the package is plain Go that sees the host through
// hostLog, hostConfigGet and the other host* functions below.

// pinned holds the buffers fuscia_alloc handed out that the guest has not taken back yet, and
// the last response, which the host reads after fuscia_call returns. Go's GC does not move
// objects, so a buffer stays where it is as long as it is referenced here.
var pinned [][]byte

//go:wasmexport fuscia_abi_v1
func exportABIv1() {}

// exportAlloc returns n writable bytes for the host (a request, or an import's answer). It is
// called by the host, also from inside an import while the guest waits for it.
//
//go:wasmexport fuscia_alloc
func exportAlloc(n int32) uint32 {
	if n < 0 {
		return 0
	}
	// A zero-length allocation gets its own byte, so that its address is unique and non-zero.
	b := make([]byte, n, max(n, 1))
	pinned = append(pinned, b)
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// exportCall answers one request. The response stays pinned until the next call.
//
//go:wasmexport fuscia_call
func exportCall(ptr unsafe.Pointer, n int32) int64 {
	n = max(n, 0)
	req, ok := take(uint32(uintptr(ptr)), uint32(n))
	if !ok {
		// Not memory from fuscia_alloc: copy it before anything can reuse it.
		req = slices.Clone(unsafe.Slice((*byte)(ptr), int(n)))
	}
	// Whatever is still pinned was the previous response, or a buffer the host never used.
	clear(pinned)
	pinned = pinned[:0]
	resp := handlers.handle(req)
	pinned = append(pinned, resp)
	return pack(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(resp)))), len(resp))
}

func pack(ptr uint32, n int) int64 { return int64(uint64(ptr)<<32 | uint64(uint32(n))) }

// take unpins the fuscia_alloc buffer that holds [ptr, ptr+n) and returns that range, or false
// when no buffer holds it.
func take(ptr, n uint32) ([]byte, bool) {
	for i := len(pinned) - 1; i >= 0; i-- {
		b := pinned[i]
		start := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
		if ptr >= start && uint64(ptr)+uint64(n) <= uint64(start)+uint64(len(b)) {
			pinned = slices.Delete(pinned, i, i+1)
			off := ptr - start
			return b[off : off+n : off+n], true
		}
	}
	return nil, false
}

// answer turns an import's (ptr << 32) | len into the bytes it names; 0 means none. An empty
// value may come with any non-zero pointer (a host need not allocate for it).
func answer(packed int64) ([]byte, bool) {
	if packed == 0 {
		return nil, false
	}
	n := uint32(packed)
	if n == 0 {
		return []byte{}, true
	}
	b, ok := take(uint32(uint64(packed)>>32), n)
	if !ok {
		panic("guest: the host answered with memory that fuscia_alloc did not hand out")
	}
	return b, true
}

//go:wasmimport fuscia log
func importLog(level int32, ptr unsafe.Pointer, n int32)

//go:wasmimport fuscia config_get
func importConfigGet(kptr unsafe.Pointer, klen int32) int64

//go:wasmimport fuscia kv_get
func importKVGet(kptr unsafe.Pointer, klen int32) int64

//go:wasmimport fuscia kv_set
func importKVSet(kptr unsafe.Pointer, klen int32, vptr unsafe.Pointer, vlen int32)

//go:wasmimport fuscia kv_delete
func importKVDelete(kptr unsafe.Pointer, klen int32)

//go:wasmimport fuscia artifact_write
func importArtifactWrite(ctptr unsafe.Pointer, ctlen int32, dptr unsafe.Pointer, dlen int32) int64

//go:wasmimport fuscia artifact_read
func importArtifactRead(idptr unsafe.Pointer, idlen int32) int64

//go:wasmimport fuscia http_request
func importHTTPRequest(ptr unsafe.Pointer, n int32) int64

func str(s string) (unsafe.Pointer, int32) {
	return unsafe.Pointer(unsafe.StringData(s)), int32(len(s))
}

func buf(b []byte) (unsafe.Pointer, int32) { return unsafe.Pointer(unsafe.SliceData(b)), int32(len(b)) }

func hostLog(level Level, msg string) {
	p, n := str(msg)
	importLog(int32(level), p, n)
}

func hostConfigGet(key string) ([]byte, bool) {
	p, n := str(key)
	return answer(importConfigGet(p, n))
}

func hostKVGet(key string) ([]byte, bool) {
	p, n := str(key)
	return answer(importKVGet(p, n))
}

func hostKVSet(key, value string) {
	kp, kn := str(key)
	vp, vn := str(value)
	importKVSet(kp, kn, vp, vn)
}

func hostKVDelete(key string) {
	p, n := str(key)
	importKVDelete(p, n)
}

func hostArtifactWrite(contentType string, data []byte) ([]byte, bool) {
	cp, cn := str(contentType)
	dp, dn := buf(data)
	return answer(importArtifactWrite(cp, cn, dp, dn))
}

func hostArtifactRead(id string) ([]byte, bool) {
	p, n := str(id)
	return answer(importArtifactRead(p, n))
}

func hostHTTPRequest(req []byte) ([]byte, bool) {
	p, n := buf(req)
	return answer(importHTTPRequest(p, n))
}
