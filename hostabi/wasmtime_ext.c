// C side of wasmtime_ext.go: the parts of wasmtime's C API that wasmtime-go v39.0.1 does not
// wrap. The prototypes are copied from wasmtime 39's headers (wasi.h, wasmtime/store.h,
// wasmtime/error.h); the symbols come from the libwasmtime.a that wasmtime-go links.
#include <stddef.h>
#include <stdint.h>
#include "_cgo_export.h"

typedef struct wasi_config_t wasi_config_t;
typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;

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

static ptrdiff_t fuscia_write(void *data, const unsigned char *buf, size_t n) {
  return fusciaWasiWrite((uintptr_t)data, (unsigned char *)buf, n);
}

void fuscia_wasi_capture(void *config, uintptr_t out, uintptr_t err) {
  wasi_config_set_stdout_custom((wasi_config_t *)config, fuscia_write, (void *)out, NULL);
  wasi_config_set_stderr_custom((wasi_config_t *)config, fuscia_write, (void *)err, NULL);
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
