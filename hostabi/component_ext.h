// The part of wasmtime's component-model C API (wasmtime/component/*.h, wasm.h and
// wasmtime/error.h of wasmtime 39) that component_ext.go uses, copied because wasmtime-go does not
// export its include directory to other packages. Only declarations: the symbols come from the
// libwasmtime.a that wasmtime-go links (built with WASMTIME_FEATURE_COMPONENT_MODEL and
// WASMTIME_FEATURE_WASI). TestComponentLayout compiles a program against the real headers and
// fails if a size or offset here differs from theirs.
#ifndef FUSCIA_COMPONENT_EXT_H
#define FUSCIA_COMPONENT_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wasm_engine_t wasm_engine_t;
typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;
typedef struct wasmtime_component_t wasmtime_component_t;
typedef struct wasmtime_component_linker_t wasmtime_component_linker_t;
typedef struct wasmtime_component_linker_instance_t wasmtime_component_linker_instance_t;
typedef struct wasmtime_component_export_index_t wasmtime_component_export_index_t;
typedef struct wasmtime_component_func_type_t wasmtime_component_func_type_t;

// wasm.h
typedef struct wasm_byte_vec_t {
  size_t size;
  char *data;
} wasm_byte_vec_t;
typedef wasm_byte_vec_t wasm_name_t;

// wasmtime/component/val.h
typedef uint8_t wasmtime_component_valkind_t;
#define WASMTIME_COMPONENT_BOOL 0
#define WASMTIME_COMPONENT_S8 1
#define WASMTIME_COMPONENT_U8 2
#define WASMTIME_COMPONENT_S16 3
#define WASMTIME_COMPONENT_U16 4
#define WASMTIME_COMPONENT_S32 5
#define WASMTIME_COMPONENT_U32 6
#define WASMTIME_COMPONENT_S64 7
#define WASMTIME_COMPONENT_U64 8
#define WASMTIME_COMPONENT_F32 9
#define WASMTIME_COMPONENT_F64 10
#define WASMTIME_COMPONENT_CHAR 11
#define WASMTIME_COMPONENT_STRING 12
#define WASMTIME_COMPONENT_LIST 13
#define WASMTIME_COMPONENT_RECORD 14
#define WASMTIME_COMPONENT_TUPLE 15
#define WASMTIME_COMPONENT_VARIANT 16
#define WASMTIME_COMPONENT_ENUM 17
#define WASMTIME_COMPONENT_OPTION 18
#define WASMTIME_COMPONENT_RESULT 19
#define WASMTIME_COMPONENT_FLAGS 20
#define WASMTIME_COMPONENT_RESOURCE 21

struct wasmtime_component_val;
struct wasmtime_component_valrecord_entry;

typedef struct wasmtime_component_vallist {
  size_t size;
  struct wasmtime_component_val *data;
} wasmtime_component_vallist_t;

typedef struct wasmtime_component_valrecord {
  size_t size;
  struct wasmtime_component_valrecord_entry *data;
} wasmtime_component_valrecord_t;

typedef struct wasmtime_component_valtuple {
  size_t size;
  struct wasmtime_component_val *data;
} wasmtime_component_valtuple_t;

typedef struct wasmtime_component_valflags {
  size_t size;
  wasm_name_t *data;
} wasmtime_component_valflags_t;

typedef struct {
  wasm_name_t discriminant;
  struct wasmtime_component_val *val;
} wasmtime_component_valvariant_t;

typedef struct {
  bool is_ok;
  struct wasmtime_component_val *val;
} wasmtime_component_valresult_t;

typedef union {
  bool boolean;
  int8_t s8;
  uint8_t u8;
  int16_t s16;
  uint16_t u16;
  int32_t s32;
  uint32_t u32;
  int64_t s64;
  uint64_t u64;
  float f32;
  double f64;
  uint32_t character;
  wasm_name_t string;
  wasmtime_component_vallist_t list;
  wasmtime_component_valrecord_t record;
  wasmtime_component_valtuple_t tuple;
  wasmtime_component_valvariant_t variant;
  wasm_name_t enumeration;
  struct wasmtime_component_val *option;
  wasmtime_component_valresult_t result;
  wasmtime_component_valflags_t flags;
  void *resource;
} wasmtime_component_valunion_t;

typedef struct wasmtime_component_val {
  wasmtime_component_valkind_t kind;
  wasmtime_component_valunion_t of;
} wasmtime_component_val_t;

typedef struct wasmtime_component_valrecord_entry {
  wasm_name_t name;
  wasmtime_component_val_t val;
} wasmtime_component_valrecord_entry_t;

// wasmtime/component/instance.h and func.h
typedef struct wasmtime_component_instance {
  uint64_t store_id;
  uint32_t __private;
} wasmtime_component_instance_t;

typedef struct wasmtime_component_func {
  struct {
    uint64_t store_id;
    uint32_t __private1;
  };
  uint32_t __private2;
} wasmtime_component_func_t;

typedef wasmtime_error_t *(*wasmtime_component_func_callback_t)(
    void *, wasmtime_context_t *, const wasmtime_component_func_type_t *,
    wasmtime_component_val_t *, size_t, wasmtime_component_val_t *, size_t);

// wasm.h
extern void wasm_byte_vec_new(wasm_byte_vec_t *out, size_t size, const char *data);
extern void wasm_byte_vec_new_uninitialized(wasm_byte_vec_t *out, size_t size);
extern void wasm_byte_vec_delete(wasm_byte_vec_t *v);

// wasmtime/error.h and store.h
extern wasmtime_error_t *wasmtime_error_new(const char *msg);
extern void wasmtime_error_message(const wasmtime_error_t *error, wasm_name_t *message);
extern bool wasmtime_error_exit_status(const wasmtime_error_t *error, int *status);
extern void wasmtime_error_delete(wasmtime_error_t *error);
extern wasmtime_context_t *wasmtime_store_context(wasmtime_store_t *store);
extern void *wasmtime_context_get_data(const wasmtime_context_t *context);

// wasmtime/component/component.h
extern wasmtime_error_t *wasmtime_component_new(const wasm_engine_t *engine, const uint8_t *buf,
                                                size_t len, wasmtime_component_t **component_out);
extern wasmtime_error_t *wasmtime_component_serialize(const wasmtime_component_t *component,
                                                      wasm_byte_vec_t *ret);
extern wasmtime_error_t *wasmtime_component_deserialize(const wasm_engine_t *engine,
                                                        const uint8_t *buf, size_t len,
                                                        wasmtime_component_t **component_out);
extern wasmtime_error_t *wasmtime_component_deserialize_file(const wasm_engine_t *engine,
                                                             const char *path,
                                                             wasmtime_component_t **component_out);
extern void wasmtime_component_delete(wasmtime_component_t *component);
extern wasmtime_component_export_index_t *wasmtime_component_get_export_index(
    const wasmtime_component_t *component,
    const wasmtime_component_export_index_t *instance_export_index, const char *name,
    size_t name_len);
extern void wasmtime_component_export_index_delete(wasmtime_component_export_index_t *index);

// wasmtime/component/linker.h
extern wasmtime_component_linker_t *wasmtime_component_linker_new(const wasm_engine_t *engine);
extern void wasmtime_component_linker_delete(wasmtime_component_linker_t *linker);
extern wasmtime_component_linker_instance_t *wasmtime_component_linker_root(
    wasmtime_component_linker_t *linker);
extern wasmtime_error_t *wasmtime_component_linker_instance_add_instance(
    wasmtime_component_linker_instance_t *linker_instance, const char *name, size_t name_len,
    wasmtime_component_linker_instance_t **linker_instance_out);
extern wasmtime_error_t *wasmtime_component_linker_instance_add_func(
    wasmtime_component_linker_instance_t *linker_instance, const char *name, size_t name_len,
    wasmtime_component_func_callback_t callback, void *data, void (*finalizer)(void *));
extern void wasmtime_component_linker_instance_delete(
    wasmtime_component_linker_instance_t *linker_instance);
extern wasmtime_error_t *wasmtime_component_linker_add_wasip2(wasmtime_component_linker_t *linker);
extern wasmtime_error_t *wasmtime_component_linker_instantiate(
    const wasmtime_component_linker_t *linker, wasmtime_context_t *context,
    const wasmtime_component_t *component, wasmtime_component_instance_t *instance_out);

// wasmtime/component/instance.h and func.h
extern bool wasmtime_component_instance_get_func(const wasmtime_component_instance_t *instance,
                                                 wasmtime_context_t *context,
                                                 const wasmtime_component_export_index_t *export_index,
                                                 wasmtime_component_func_t *func_out);
extern wasmtime_error_t *wasmtime_component_func_call(const wasmtime_component_func_t *func,
                                                      wasmtime_context_t *context,
                                                      const wasmtime_component_val_t *args,
                                                      size_t args_size,
                                                      wasmtime_component_val_t *results,
                                                      size_t results_size);
extern wasmtime_error_t *wasmtime_component_func_post_return(const wasmtime_component_func_t *func,
                                                             wasmtime_context_t *context);

// wasmtime/component/val.h
extern void wasmtime_component_vallist_new_uninit(wasmtime_component_vallist_t *out, size_t size);
extern void wasmtime_component_valrecord_new_uninit(wasmtime_component_valrecord_t *out, size_t size);
extern void wasmtime_component_valtuple_new_uninit(wasmtime_component_valtuple_t *out, size_t size);
extern wasmtime_component_val_t *wasmtime_component_val_new(wasmtime_component_val_t *val);
extern void wasmtime_component_val_clone(const wasmtime_component_val_t *src,
                                         wasmtime_component_val_t *dst);
extern void wasmtime_component_val_delete(wasmtime_component_val_t *value);

// wasmtime/component/types/*.h: a component's types, to check them against the world's.
typedef struct wasmtime_component_type_t wasmtime_component_type_t;
typedef struct wasmtime_component_instance_type_t wasmtime_component_instance_type_t;
typedef uint8_t wasmtime_component_valtype_kind_t;
typedef struct wasmtime_component_valtype_t {
  wasmtime_component_valtype_kind_t kind;
  void *of; // a pointer to the type's details, by kind; only wasmtime reads it
} wasmtime_component_valtype_t;
typedef uint8_t wasmtime_component_item_kind_t;
#define WASMTIME_COMPONENT_ITEM_COMPONENT_INSTANCE 1
#define WASMTIME_COMPONENT_ITEM_COMPONENT_FUNC 3
typedef union wasmtime_component_item_union {
  wasmtime_component_instance_type_t *component_instance;
  wasmtime_component_func_type_t *component_func;
  wasmtime_component_valtype_t type; // the largest member
} wasmtime_component_item_union_t;
typedef struct wasmtime_component_item_t {
  wasmtime_component_item_kind_t kind;
  wasmtime_component_item_union_t of;
} wasmtime_component_item_t;
extern wasmtime_component_type_t *wasmtime_component_type(const wasmtime_component_t *component);
extern void wasmtime_component_type_delete(wasmtime_component_type_t *ty);
extern bool wasmtime_component_type_import_get(const wasmtime_component_type_t *ty,
                                               const wasm_engine_t *engine, const char *name,
                                               size_t name_len, wasmtime_component_item_t *ret);
extern bool wasmtime_component_type_export_get(const wasmtime_component_type_t *ty,
                                               const wasm_engine_t *engine, const char *name,
                                               size_t name_len, wasmtime_component_item_t *ret);
extern bool wasmtime_component_instance_type_export_get(const wasmtime_component_instance_type_t *ty,
                                                        const wasm_engine_t *engine,
                                                        const char *name, size_t name_len,
                                                        wasmtime_component_item_t *ret);
extern size_t wasmtime_component_type_import_count(const wasmtime_component_type_t *ty,
                                                   const wasm_engine_t *engine);
extern bool wasmtime_component_type_import_nth(const wasmtime_component_type_t *ty,
                                               const wasm_engine_t *engine, size_t nth,
                                               const char **name_ret, size_t *name_len_ret,
                                               wasmtime_component_item_t *type_ret);
extern size_t wasmtime_component_instance_type_export_count(
    const wasmtime_component_instance_type_t *ty, const wasm_engine_t *engine);
extern bool wasmtime_component_instance_type_export_nth(
    const wasmtime_component_instance_type_t *ty, const wasm_engine_t *engine, size_t nth,
    const char **name_ret, size_t *name_len_ret, wasmtime_component_item_t *type_ret);
extern void wasmtime_component_item_delete(wasmtime_component_item_t *ptr);
extern void wasmtime_component_func_type_delete(wasmtime_component_func_type_t *ty);
extern size_t wasmtime_component_func_type_param_count(const wasmtime_component_func_type_t *ty);
extern bool wasmtime_component_func_type_param_nth(const wasmtime_component_func_type_t *ty,
                                                   size_t nth, const char **name_ret,
                                                   size_t *name_len_ret,
                                                   wasmtime_component_valtype_t *type_ret);
extern bool wasmtime_component_func_type_result(const wasmtime_component_func_type_t *ty,
                                                wasmtime_component_valtype_t *type_ret);
extern bool wasmtime_component_valtype_equal(const wasmtime_component_valtype_t *a,
                                             const wasmtime_component_valtype_t *b);
extern void wasmtime_component_valtype_delete(wasmtime_component_valtype_t *ptr);

// component_ext.c
wasmtime_error_t *fuscia_component_define(wasmtime_component_linker_t *linker, uintptr_t host,
                                          const char *iface, size_t iface_len,
                                          const char *const *names, size_t n);
wasmtime_error_t *fuscia_component_define_empty(wasmtime_component_linker_t *linker,
                                                const char *iface, size_t iface_len);
wasmtime_error_t *fuscia_component_call(const wasmtime_component_linker_t *linker,
                                        wasmtime_store_t *store,
                                        const wasmtime_component_t *component,
                                        const wasmtime_component_export_index_t *export_index,
                                        const wasmtime_component_val_t *arg,
                                        wasmtime_component_val_t *result, int *stage,
                                        uint64_t *instantiate_ns);
void fuscia_set_string(wasmtime_component_val_t *v, uint8_t kind, const char *p, size_t n);
void fuscia_set_bytes(wasmtime_component_val_t *v, const char *p, size_t n);
wasmtime_component_valrecord_entry_t *fuscia_set_record(wasmtime_component_val_t *v, size_t n);
wasmtime_component_val_t *fuscia_set_list(wasmtime_component_val_t *v, uint8_t kind, size_t n);
void fuscia_box(wasmtime_component_val_t *v, uint8_t kind, const char *name, size_t name_len,
                wasmtime_component_val_t *payload);
size_t fuscia_get_bytes(const wasmtime_component_val_t *v, char *out, size_t cap);
wasmtime_component_func_type_t *fuscia_func_type(const wasmtime_component_t *component,
                                                 const wasm_engine_t *engine, const char *iface,
                                                 size_t iface_len, const char *name,
                                                 size_t name_len);
bool fuscia_func_types_equal(const wasmtime_component_func_type_t *a,
                             const wasmtime_component_func_type_t *b);
size_t fuscia_import_name(const wasmtime_component_t *component, const wasm_engine_t *engine,
                          size_t nth, char *out, size_t cap, int *kind);
size_t fuscia_instance_export_name(const wasmtime_component_t *component,
                                   const wasm_engine_t *engine, const char *iface,
                                   size_t iface_len, size_t nth, char *out, size_t cap, int *kind);

#endif
