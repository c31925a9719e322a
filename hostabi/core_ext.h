// The part of wasmtime's core C API (wasmtime/instance.h, extern.h, val.h, func.h, global.h,
// trap.h and wasm.h of wasmtime 39) that invoke.go calls without wasmtime-go, copied because
// wasmtime-go does not export its include directory. Only declarations: the symbols come from
// the libwasmtime.a that wasmtime-go links. TestComponentLayout compiles a program against the
// real headers and fails if a size or offset here differs from theirs.
#ifndef FUSCIA_CORE_EXT_H
#define FUSCIA_CORE_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component_ext.h" // wasm_byte_vec_t, wasmtime_context_t, wasmtime_error_t and the like

typedef struct wasm_trap_t wasm_trap_t;

typedef struct wasmtime_instance {
  uint64_t store_id;
  size_t __private;
} wasmtime_instance_t;

typedef struct wasmtime_func {
  uint64_t store_id;
  void *__private;
} wasmtime_func_t;

typedef uint8_t wasmtime_extern_kind_t;
#define WASMTIME_EXTERN_FUNC 0
#define WASMTIME_EXTERN_GLOBAL 1
typedef union wasmtime_extern_union {
  wasmtime_func_t func;
  uint64_t global[3]; // a wasmtime_global_t, handed back to wasmtime as it is
} wasmtime_extern_union_t;
typedef struct wasmtime_extern {
  wasmtime_extern_kind_t kind;
  wasmtime_extern_union_t of;
} wasmtime_extern_t;

typedef uint8_t wasmtime_valkind_t;
#define WASMTIME_I32 0
#define WASMTIME_I64 1
typedef union wasmtime_valunion {
  int32_t i32;
  int64_t i64;
  uint64_t other[3]; // the other kinds' members, which the host never passes
} wasmtime_valunion_t;
typedef struct wasmtime_val {
  wasmtime_valkind_t kind;
  wasmtime_valunion_t of;
} wasmtime_val_t;

extern bool wasmtime_instance_export_get(wasmtime_context_t *store,
                                         const wasmtime_instance_t *instance, const char *name,
                                         size_t name_len, wasmtime_extern_t *item);
extern wasmtime_error_t *wasmtime_func_call(wasmtime_context_t *store,
                                            const wasmtime_func_t *func,
                                            const wasmtime_val_t *args, size_t nargs,
                                            wasmtime_val_t *results, size_t nresults,
                                            wasm_trap_t **trap);
extern void wasmtime_global_get(wasmtime_context_t *store, const void *global,
                                wasmtime_val_t *out);
extern void wasm_trap_message(const wasm_trap_t *trap, wasm_byte_vec_t *out);
extern void wasm_trap_delete(wasm_trap_t *trap);

// Ours (wasmtime_ext.c).
wasmtime_error_t *fuscia_call_export(wasmtime_context_t *cx, const wasmtime_instance_t *inst,
                                     const char *name, size_t name_len, const int32_t *args,
                                     size_t nargs, size_t nresults, int64_t *result,
                                     wasm_trap_t **trap, int *missing);
bool fuscia_global_i64(wasmtime_context_t *cx, const wasmtime_instance_t *inst,
                       const char *name, size_t name_len, int64_t *out);

#endif
