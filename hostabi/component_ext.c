// C side of component_ext.go: the trampoline every host import of a component goes through, one
// call for instantiate + call + post-return, and value constructors.
//
// Values handed to wasmtime must be allocated by wasmtime's own allocator: a host function's
// results are dropped by wasmtime after it copies them, and an argument of ours is freed with
// wasmtime_component_val_delete. So every string, list and box below is made with wasmtime's
// constructors (wasm_byte_vec_new, wasmtime_component_*_new_uninit, wasmtime_component_val_new),
// never with malloc.
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "component_ext.h"
#include "_cgo_export.h"

// fuscia_import is the data of one host import: which Host (a cgo.Handle) and which function.
typedef struct {
  uintptr_t host;
  uint32_t fn;
} fuscia_import;

static wasmtime_error_t *fuscia_trampoline(void *data, wasmtime_context_t *ctx,
                                           const wasmtime_component_func_type_t *ty,
                                           wasmtime_component_val_t *args, size_t nargs,
                                           wasmtime_component_val_t *results, size_t nresults) {
  (void)ty;
  fuscia_import *imp = (fuscia_import *)data;
  return fusciaComponentImport(imp->host, imp->fn, ctx, args, nargs, results, nresults);
}

// fuscia_component_define defines the interface iface in the linker's root with one function per
// name, the i-th calling fusciaComponentImport with fn = i.
wasmtime_error_t *fuscia_component_define(wasmtime_component_linker_t *linker, uintptr_t host,
                                          const char *iface, size_t iface_len,
                                          const char *const *names, size_t n) {
  wasmtime_component_linker_instance_t *root = wasmtime_component_linker_root(linker);
  wasmtime_component_linker_instance_t *inst = NULL;
  wasmtime_error_t *err = wasmtime_component_linker_instance_add_instance(root, iface, iface_len, &inst);
  if (err == NULL) {
    for (size_t i = 0; i < n && err == NULL; i++) {
      fuscia_import *imp = malloc(sizeof *imp);
      if (imp == NULL) {
        err = wasmtime_error_new("fuscia: out of memory defining the host interface");
        break;
      }
      imp->host = host;
      imp->fn = (uint32_t)i;
      err = wasmtime_component_linker_instance_add_func(inst, names[i], strlen(names[i]),
                                                        fuscia_trampoline, imp, free);
    }
    wasmtime_component_linker_instance_delete(inst);
  }
  wasmtime_component_linker_instance_delete(root);
  return err;
}

// fuscia_component_define_empty defines iface as an instance without functions: the world's
// `types` interface, which components import for its type definitions only.
wasmtime_error_t *fuscia_component_define_empty(wasmtime_component_linker_t *linker,
                                                const char *iface, size_t iface_len) {
  wasmtime_component_linker_instance_t *root = wasmtime_component_linker_root(linker);
  wasmtime_component_linker_instance_t *inst = NULL;
  wasmtime_error_t *err = wasmtime_component_linker_instance_add_instance(root, iface, iface_len, &inst);
  if (err == NULL) {
    wasmtime_component_linker_instance_delete(inst);
  }
  wasmtime_component_linker_instance_delete(root);
  return err;
}

// fuscia_component_call instantiates component in store, calls the exported function at
// export_index with one argument and one result, and runs its post-return. On failure *stage
// says where: 0 instantiate, 1 the export is not a function, 2 the call, 3 post-return.
// *instantiate_ns is how long instantiation took (serve's instantiation metric), set once it
// succeeded.
wasmtime_error_t *fuscia_component_call(const wasmtime_component_linker_t *linker,
                                        wasmtime_store_t *store,
                                        const wasmtime_component_t *component,
                                        const wasmtime_component_export_index_t *export_index,
                                        const wasmtime_component_val_t *arg,
                                        wasmtime_component_val_t *result, int *stage,
                                        uint64_t *instantiate_ns) {
  wasmtime_context_t *ctx = wasmtime_store_context(store);
  wasmtime_component_instance_t inst;
  struct timespec began, done;
  *stage = 0;
  clock_gettime(CLOCK_MONOTONIC, &began);
  wasmtime_error_t *err = wasmtime_component_linker_instantiate(linker, ctx, component, &inst);
  if (err != NULL) {
    return err;
  }
  clock_gettime(CLOCK_MONOTONIC, &done);
  *instantiate_ns = (uint64_t)(done.tv_sec - began.tv_sec) * 1000000000u +
                    (uint64_t)done.tv_nsec - (uint64_t)began.tv_nsec;
  wasmtime_component_func_t fn;
  *stage = 1;
  if (!wasmtime_component_instance_get_func(&inst, ctx, export_index, &fn)) {
    return wasmtime_error_new("the component's export is not a function");
  }
  *stage = 2;
  err = wasmtime_component_func_call(&fn, ctx, arg, 1, result, 1);
  if (err != NULL) {
    return err;
  }
  *stage = 3;
  return wasmtime_component_func_post_return(&fn, ctx);
}

// fuscia_set_string makes v a string or an enum case (kind) with the n bytes at p.
void fuscia_set_string(wasmtime_component_val_t *v, uint8_t kind, const char *p, size_t n) {
  v->kind = kind;
  wasm_byte_vec_new(&v->of.string, n, p);
}

// fuscia_set_bytes makes v a list<u8> of the n bytes at p.
void fuscia_set_bytes(wasmtime_component_val_t *v, const char *p, size_t n) {
  v->kind = WASMTIME_COMPONENT_LIST;
  wasmtime_component_vallist_new_uninit(&v->of.list, n);
  for (size_t i = 0; i < n; i++) {
    v->of.list.data[i].kind = WASMTIME_COMPONENT_U8;
    v->of.list.data[i].of.u8 = (uint8_t)p[i];
  }
}

// fuscia_set_record makes v a record of n fields and returns them zeroed for the caller to fill
// (a zeroed entry, an empty name and a bool false, is a valid value for wasmtime to drop).
wasmtime_component_valrecord_entry_t *fuscia_set_record(wasmtime_component_val_t *v, size_t n) {
  v->kind = WASMTIME_COMPONENT_RECORD;
  wasmtime_component_valrecord_new_uninit(&v->of.record, n);
  memset(v->of.record.data, 0, n * sizeof(wasmtime_component_valrecord_entry_t));
  return v->of.record.data;
}

// fuscia_set_list makes v a list (kind LIST) or tuple (kind TUPLE) of n zeroed values and
// returns them.
wasmtime_component_val_t *fuscia_set_list(wasmtime_component_val_t *v, uint8_t kind, size_t n) {
  v->kind = kind;
  if (kind == WASMTIME_COMPONENT_TUPLE) {
    wasmtime_component_valtuple_new_uninit(&v->of.tuple, n);
    memset(v->of.tuple.data, 0, n * sizeof(wasmtime_component_val_t));
    return v->of.tuple.data;
  }
  wasmtime_component_vallist_new_uninit(&v->of.list, n);
  memset(v->of.list.data, 0, n * sizeof(wasmtime_component_val_t));
  return v->of.list.data;
}

// fuscia_box makes v a value with an optional boxed payload, which it takes (payload may be
// NULL): a variant case named name, an option (some when payload is set), or a result (ok when
// name is "ok").
void fuscia_box(wasmtime_component_val_t *v, uint8_t kind, const char *name, size_t name_len,
                wasmtime_component_val_t *payload) {
  wasmtime_component_val_t *boxed = payload != NULL ? wasmtime_component_val_new(payload) : NULL;
  v->kind = kind;
  switch (kind) {
  case WASMTIME_COMPONENT_VARIANT:
    wasm_byte_vec_new(&v->of.variant.discriminant, name_len, name);
    v->of.variant.val = boxed;
    break;
  case WASMTIME_COMPONENT_OPTION:
    v->of.option = boxed;
    break;
  case WASMTIME_COMPONENT_RESULT:
    v->of.result.is_ok = name_len == 2 && memcmp(name, "ok", 2) == 0;
    v->of.result.val = boxed;
    break;
  }
}

// fuscia_get_bytes copies a list<u8> into out (at most cap bytes) and returns its length, or
// (size_t)-1 when an element is not a u8.
size_t fuscia_get_bytes(const wasmtime_component_val_t *v, char *out, size_t cap) {
  size_t n = v->of.list.size;
  for (size_t i = 0; i < n; i++) {
    const wasmtime_component_val_t *e = &v->of.list.data[i];
    if (e->kind != WASMTIME_COMPONENT_U8) {
      return (size_t)-1;
    }
    if (i < cap) {
      out[i] = (char)e->of.u8;
    }
  }
  return n;
}

// fuscia_func_type is the type of a function of component: the function `name` of the
// imported instance `iface`, or the export `name` when iface is NULL. NULL when the component
// has no such function; otherwise the caller deletes it (wasmtime_component_func_type_delete).
wasmtime_component_func_type_t *fuscia_func_type(const wasmtime_component_t *component,
                                                 const wasm_engine_t *engine, const char *iface,
                                                 size_t iface_len, const char *name,
                                                 size_t name_len) {
  wasmtime_component_type_t *ty = wasmtime_component_type(component);
  wasmtime_component_func_type_t *out = NULL;
  wasmtime_component_item_t item;
  if (iface == NULL) {
    if (wasmtime_component_type_export_get(ty, engine, name, name_len, &item)) {
      if (item.kind == WASMTIME_COMPONENT_ITEM_COMPONENT_FUNC) {
        out = item.of.component_func; // taken: item is not deleted
      } else {
        wasmtime_component_item_delete(&item);
      }
    }
  } else if (wasmtime_component_type_import_get(ty, engine, iface, iface_len, &item)) {
    if (item.kind == WASMTIME_COMPONENT_ITEM_COMPONENT_INSTANCE) {
      wasmtime_component_item_t fn;
      if (wasmtime_component_instance_type_export_get(item.of.component_instance, engine, name,
                                                      name_len, &fn)) {
        if (fn.kind == WASMTIME_COMPONENT_ITEM_COMPONENT_FUNC) {
          out = fn.of.component_func;
        } else {
          wasmtime_component_item_delete(&fn);
        }
      }
    }
    wasmtime_component_item_delete(&item);
  }
  wasmtime_component_type_delete(ty);
  return out;
}

// fuscia_func_types_equal says whether a and b take the same parameters and give the same
// result. wasmtime compares the value types by structure (names of fields, cases and flags
// included), so types of two components compare.
bool fuscia_func_types_equal(const wasmtime_component_func_type_t *a,
                             const wasmtime_component_func_type_t *b) {
  size_t n = wasmtime_component_func_type_param_count(a);
  if (n != wasmtime_component_func_type_param_count(b)) {
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    const char *name;
    size_t len;
    wasmtime_component_valtype_t ta, tb;
    if (!wasmtime_component_func_type_param_nth(a, i, &name, &len, &ta)) {
      return false;
    }
    if (!wasmtime_component_func_type_param_nth(b, i, &name, &len, &tb)) {
      wasmtime_component_valtype_delete(&ta);
      return false;
    }
    bool same = wasmtime_component_valtype_equal(&ta, &tb);
    wasmtime_component_valtype_delete(&ta);
    wasmtime_component_valtype_delete(&tb);
    if (!same) {
      return false;
    }
  }
  wasmtime_component_valtype_t ra, rb;
  bool has_a = wasmtime_component_func_type_result(a, &ra);
  bool has_b = wasmtime_component_func_type_result(b, &rb);
  bool same = has_a == has_b && (!has_a || wasmtime_component_valtype_equal(&ra, &rb));
  if (has_a) {
    wasmtime_component_valtype_delete(&ra);
  }
  if (has_b) {
    wasmtime_component_valtype_delete(&rb);
  }
  return same;
}

// copy_name copies name into out (up to cap bytes) and returns its length.
static size_t copy_name(const char *name, size_t len, char *out, size_t cap) {
  memcpy(out, name, len < cap ? len : cap);
  return len;
}

// fuscia_import_name copies the name of component's import nth into out (up to cap bytes),
// sets kind to its item kind, and returns the name's length; SIZE_MAX when there is no such
// import.
size_t fuscia_import_name(const wasmtime_component_t *component, const wasm_engine_t *engine,
                          size_t nth, char *out, size_t cap, int *kind) {
  wasmtime_component_type_t *ty = wasmtime_component_type(component);
  size_t n = SIZE_MAX;
  const char *name;
  size_t len;
  wasmtime_component_item_t item;
  if (wasmtime_component_type_import_nth(ty, engine, nth, &name, &len, &item)) {
    n = copy_name(name, len, out, cap);
    *kind = item.kind;
    wasmtime_component_item_delete(&item);
  }
  wasmtime_component_type_delete(ty);
  return n;
}

// fuscia_instance_export_name is fuscia_import_name for export nth of the instance component
// imports as iface; SIZE_MAX when there is no such import, it is not an instance, or it has no
// export nth.
size_t fuscia_instance_export_name(const wasmtime_component_t *component,
                                   const wasm_engine_t *engine, const char *iface,
                                   size_t iface_len, size_t nth, char *out, size_t cap, int *kind) {
  wasmtime_component_type_t *ty = wasmtime_component_type(component);
  size_t n = SIZE_MAX;
  wasmtime_component_item_t item;
  if (wasmtime_component_type_import_get(ty, engine, iface, iface_len, &item)) {
    if (item.kind == WASMTIME_COMPONENT_ITEM_COMPONENT_INSTANCE) {
      const char *name;
      size_t len;
      wasmtime_component_item_t fn;
      if (wasmtime_component_instance_type_export_nth(item.of.component_instance, engine, nth,
                                                      &name, &len, &fn)) {
        n = copy_name(name, len, out, cap);
        *kind = fn.kind;
        wasmtime_component_item_delete(&fn);
      }
    }
    wasmtime_component_item_delete(&item);
  }
  wasmtime_component_type_delete(ty);
  return n;
}
