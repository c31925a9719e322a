package hostabi

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/engine/version"
)

// TestWasmtimeLayout pins what wasmtime_ext.go assumes about wasmtime-go's internals: the C
// pointer is the first field of WasiConfig and Store. If this fails after a wasmtime-go
// upgrade, fix wasmtime_ext.go before anything else: it would otherwise pass garbage to C.
func TestWasmtimeLayout(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[wasmtime.WasiConfig](), reflect.TypeFor[wasmtime.Store]()} {
		f := typ.Field(0)
		if f.Name != "_ptr" || f.Type.Kind() != reflect.Pointer || f.Offset != 0 {
			t.Fatalf("wasmtime-go %s's first field is %s %s at %d; wasmtime_ext.go expects the C pointer _ptr at offset 0 (it was written for wasmtime-go v39.0.1)",
				typ, f.Name, f.Type, f.Offset)
		}
	}
}

// TestWasmtimeVersion pins the wasmtime-go release wasmtime_ext.go was checked against.
func TestWasmtimeVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "github.com/bytecodealliance/wasmtime-go/v39 v" + WasmtimeVersion
	if !strings.Contains(string(mod), want) {
		t.Fatalf("go.mod does not require %s: wasmtime_ext.go and WasmtimeVersion were written for it; re-check the C prototypes and TestWasmtimeLayout, then update WasmtimeVersion", want)
	}
	if version.Wasmtime != WasmtimeVersion {
		t.Fatalf("version.Wasmtime is %s, hostabi.WasmtimeVersion %s", version.Wasmtime, WasmtimeVersion)
	}
}
