// C side of wasmtime_ext.go: the parts of wasmtime's C API that wasmtime-go v39.0.1 does not
// wrap. The prototypes are copied from wasmtime 39's headers (wasi.h, wasmtime/store.h,
// wasmtime/error.h, wasmtime/config.h); the symbols come from the libwasmtime.a that
// wasmtime-go links, which is built with the pooling allocator (WASMTIME_FEATURE_POOLING_ALLOCATOR
// in wasmtime/conf.h).
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include "_cgo_export.h"

typedef struct wasi_config_t wasi_config_t;
typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;
typedef struct wasm_config_t wasm_config_t;
typedef struct wasmtime_pooling_allocation_config_t wasmtime_pooling_allocation_config_t;

extern void wasi_config_set_stdout_custom(wasi_config_t *config,
    ptrdiff_t (*callback)(void *, const unsigned char *, size_t), void *data,
    void (*finalizer)(void *));
extern void wasi_config_set_stderr_custom(wasi_config_t *config,
    ptrdiff_t (*callback)(void *, const unsigned char *, size_t), void *data,
    void (*finalizer)(void *));
extern void wasmtime_store_epoch_deadline_callback(wasmtime_store_t *store,
    wasmtime_error_t *(*func)(wasmtime_context_t *context, void *data,
                              uint64_t *epoch_deadline_delta, uint8_t *update_kind),
    void *data, void (*finalizer)(void *));
extern wasmtime_error_t *wasmtime_error_new(const char *);
extern wasmtime_pooling_allocation_config_t *wasmtime_pooling_allocation_config_new(void);
extern void wasmtime_pooling_allocation_config_delete(wasmtime_pooling_allocation_config_t *);
extern void wasmtime_pooling_allocation_config_total_core_instances_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_total_memories_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_total_tables_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_total_component_instances_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_total_gc_heaps_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_max_memory_size_set(wasmtime_pooling_allocation_config_t *, size_t);
extern void wasmtime_pooling_allocation_config_linear_memory_keep_resident_set(wasmtime_pooling_allocation_config_t *, size_t);
extern void wasmtime_pooling_allocation_config_table_keep_resident_set(wasmtime_pooling_allocation_config_t *, size_t);
extern void wasmtime_pooling_allocation_strategy_set(wasm_config_t *, const wasmtime_pooling_allocation_config_t *);

static ptrdiff_t fuscia_write(void *data, const unsigned char *buf, size_t n) {
  return fusciaWasiWrite((uintptr_t)data, (unsigned char *)buf, n);
}

// fuscia_release runs when wasmtime drops the last copy of a stream, possibly on a thread of
// its own after the store is gone: only then is the stream's sink freed.
static void fuscia_release(void *data) { fusciaWasiRelease((uintptr_t)data); }

void fuscia_wasi_capture(void *config, uintptr_t out, uintptr_t err) {
  wasi_config_set_stdout_custom((wasi_config_t *)config, fuscia_write, (void *)out, fuscia_release);
  wasi_config_set_stderr_custom((wasi_config_t *)config, fuscia_write, (void *)err, fuscia_release);
}

// fuscia_epoch runs at every epoch tick the guest sees. It reads the attempt's stop flag, set
// from Go when the attempt's context ends, without calling into Go: ticks are frequent.
static wasmtime_error_t *fuscia_epoch(wasmtime_context_t *context, void *data,
                                      uint64_t *delta, uint8_t *kind) {
  (void)context;
  if (__atomic_load_n((int32_t *)data, __ATOMIC_ACQUIRE)) {
    return wasmtime_error_new("fuscia: attempt interrupted");
  }
  *delta = 1;
  *kind = 0; /* WASMTIME_UPDATE_DEADLINE_CONTINUE */
  return NULL;
}

void fuscia_store_interrupt_on(void *store, int32_t *flag) {
  wasmtime_store_epoch_deadline_callback((wasmtime_store_t *)store, fuscia_epoch, flag, NULL);
}

// fuscia_config_pooling sets the pooling allocation strategy on config (see poolConfig in
// wasmtime_ext.go). A component instance holds several core instances and tables (its own
// modules, WASI adapters, wit-component's shims) but usually one memory, so those pools are
// bigger than the memory pool, whose slots cost address space. GC heaps are not used.
void fuscia_config_pooling(void *config, uint32_t slots, size_t max_memory,
                           size_t memory_keep_resident, size_t table_keep_resident) {
  wasmtime_pooling_allocation_config_t *pool = wasmtime_pooling_allocation_config_new();
  wasmtime_pooling_allocation_config_total_core_instances_set(pool, slots * 4);
  wasmtime_pooling_allocation_config_total_memories_set(pool, slots);
  wasmtime_pooling_allocation_config_total_tables_set(pool, slots * 4);
  wasmtime_pooling_allocation_config_total_component_instances_set(pool, slots);
  wasmtime_pooling_allocation_config_total_gc_heaps_set(pool, 0);
  wasmtime_pooling_allocation_config_max_memory_size_set(pool, max_memory);
  wasmtime_pooling_allocation_config_linear_memory_keep_resident_set(pool, memory_keep_resident);
  wasmtime_pooling_allocation_config_table_keep_resident_set(pool, table_keep_resident);
  wasmtime_pooling_allocation_strategy_set((wasm_config_t *)config, pool);
  wasmtime_pooling_allocation_config_delete(pool);
}

// fuscia_can_reserve reports whether bytes of address space can be reserved (not committed)
// right now, as wasmtime's pool will reserve them when the engine is built.
int fuscia_can_reserve(uint64_t bytes) {
  void *p = mmap(NULL, (size_t)bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return 0;
  }
  munmap(p, (size_t)bytes);
  return 1;
}

// fuscia_call_export calls inst's function export `name` with nargs i32 arguments and
// nresults (0 or 1) results, an i32 result zero-extended into *result, an i64 one as it is.
// *missing is set when there is no such function; a trap comes back in *trap, any other
// failure (WASI's exit included) as the error.
wasmtime_error_t *fuscia_call_export(wasmtime_context_t *cx, const wasmtime_instance_t *inst,
                                     const char *name, size_t name_len, const int32_t *args,
                                     size_t nargs, size_t nresults, int64_t *result,
                                     wasm_trap_t **trap, int *missing) {
  wasmtime_extern_t item;
  if (nargs > 2 || nresults > 1 || !wasmtime_instance_export_get(cx, inst, name, name_len, &item) ||
      item.kind != WASMTIME_EXTERN_FUNC) {
    *missing = 1;
    return NULL;
  }
  wasmtime_val_t in[2], out;
  for (size_t i = 0; i < nargs; i++) {
    in[i].kind = WASMTIME_I32;
    in[i].of.i32 = args[i];
  }
  wasmtime_error_t *err = wasmtime_func_call(cx, &item.of.func, in, nargs, &out, nresults, trap);
  if (err == NULL && *trap == NULL && nresults == 1) {
    *result = out.kind == WASMTIME_I64 ? out.of.i64 : (int64_t)(uint32_t)out.of.i32;
  }
  return err;
}

// fuscia_global_i64 reads inst's i64 global export `name`; false when there is none.
bool fuscia_global_i64(wasmtime_context_t *cx, const wasmtime_instance_t *inst,
                       const char *name, size_t name_len, int64_t *out) {
  wasmtime_extern_t item;
  if (!wasmtime_instance_export_get(cx, inst, name, name_len, &item) ||
      item.kind != WASMTIME_EXTERN_GLOBAL) {
    return false;
  }
  wasmtime_val_t v;
  wasmtime_global_get(cx, &item.of.global, &v);
  if (v.kind != WASMTIME_I64) {
    return false;
  }
  *out = v.of.i64;
  return true;
}
