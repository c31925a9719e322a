package hostabi

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// nameVal is a component value of kind (a string or an enum) that claims size bytes at data,
// as wasmtime hands a lifted string to the host; aligned as wasmtime's are (Go aligns a cval
// as the bytes cgo makes of its union).
func nameVal(kind uint8, data *byte, size uint64) *cval {
	a := new(struct {
		_ [0]uint64
		v cval
	})
	*(*uint8)(unsafe.Pointer(&a.v.kind)) = kind
	name := [2]uintptr{uintptr(size), uintptr(unsafe.Pointer(data))}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&a.v.of)), unsafe.Sizeof(name)), unsafe.Slice((*byte)(unsafe.Pointer(&name)), unsafe.Sizeof(name)))
	return &a.v
}

// TestLongStringsRefusedBeforeCopy: a key or a log message over its limit is refused from its
// length alone, before anything is copied. The strings here claim 2 GiB at a buffer of 16
// bytes, so a copy would fault: a guest with more than 2 GiB of memory can make such strings,
// and the host used to copy them whole (dying outright at 2 GiB, an int overflow in the copy)
// only to refuse them after.
func TestLongStringsRefusedBeforeCopy(t *testing.T) {
	var buf [16]byte
	info := []byte("info")
	huge := nameVal(kindString, &buf[0], 1<<31)
	c := &call{env: &Env{Log: func(Level, string) { t.Error("a refused message was logged") }}}

	err := c.componentLog([]cval{*nameVal(kindEnum, &info[0], 4), *huge}, nil)
	if err == nil || !strings.Contains(err.Error(), "log: the message is 2147483648 bytes; the limit is") {
		t.Errorf("log of a 2 GiB message: %v; want the limit's error", err)
	}
	for name, run := range map[string]func(*call, []cval, []cval) error{
		"kv-get": (*call).componentKVGet, "kv-delete": (*call).componentKVDelete,
	} {
		results := make([]cval, 1)
		if name == "kv-delete" {
			results = nil
		}
		err := run(c, []cval{*huge}, results)
		if err == nil || !strings.Contains(err.Error(), name+": the key is 2147483648 bytes; the limit is") {
			t.Errorf("%s with a 2 GiB key: %v; want the limit's error", name, err)
		}
	}
	runtime.KeepAlive(&buf)
	runtime.KeepAlive(info)
}

// TestNameOfCopies: nameOf copies what a string value holds, the empty string included.
func TestNameOfCopies(t *testing.T) {
	b := []byte("héllo")
	v := nameVal(kindString, &b[0], uint64(len(b)))
	s, err := getString(v, "s")
	if err != nil || s != "héllo" {
		t.Fatalf("getString = %q, %v", s, err)
	}
	b[0] = 'j'
	if s != "héllo" {
		t.Error("the string shares the value's bytes")
	}
	empty := nameVal(kindString, nil, 0)
	if s, err := getString(empty, "s"); err != nil || s != "" {
		t.Errorf("getString of an empty string = %q, %v", s, err)
	}
}
