/*
 * cguest: a test component of the world fuscia:host/component@1.0.0 (hostabi/wit/fuscia.wit),
 * written in C by hand against the component model's canonical ABI: no wit-bindgen, no SDK.
 *
 * The core module exports "call" (the world's export), "cabi_realloc" (the allocator the host
 * uses to lower the request and the results of its imports into this memory) and
 * "cabi_post_call" (frees a response once the host has lifted it), and imports the functions of
 * "fuscia:host/host@1.0.0" with their canonical lowered signatures. build.sh wraps it into a
 * component with `jco embed` and `jco new --wasi-reactor`; README.md lists the tasks.
 *
 * Canonical ABI rules used below (component-model CanonicalABI.md):
 *   - string and list<T>: (ptr u32, len u32), size 8, align 4; a string's len counts UTF-8 bytes.
 *   - option<T>, result<T, E>, variant, enum: a u8 discriminant (fewer than 256 cases), then the
 *     payload at the next multiple of the largest case alignment; the size is rounded up to the
 *     largest alignment of the whole.
 *   - record and tuple: fields in order, each at its alignment; size rounded up to the alignment.
 *   - u64, f64: size 8, align 8.
 *   - A function whose parameters flatten to more than 16 core values takes one i32 pointer to
 *     them in memory (call's request flattens to 28); a result that flattens to more than one
 *     value is returned as an i32 pointer by an export, and written by an import to a return
 *     pointer passed as its last parameter.
 * The structs mirror these layouts with C's own natural alignment, which on wasm32 is the same;
 * the _Static_asserts pin every offset, so a change of layout fails the build.
 *
 * Memory ownership (as wit-bindgen does it): everything the host hands in (the request, import
 * results) came from cabi_realloc and is ours to free; a zero-size allocation is a dummy
 * pointer that must not be freed, hence "free only when len > 0". Every string of a response
 * is a malloc'd buffer of its own, freed by cabi_post_call.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== The world's types, as laid out in linear memory ===================================== */

/* string: (ptr, len), size 8, align 4. */
typedef struct {
  char *ptr;
  size_t len;
} str_t;

/* list<u8>: (ptr, len), size 8, align 4. */
typedef struct {
  uint8_t *ptr;
  size_t len;
} bytes_t;

/* tuple<string, string>: 0 first, 8 second; size 16, align 4. */
typedef struct {
  str_t first;
  str_t second;
} pair_t;

/* list<tuple<string, string>>: (ptr, len), size 8, align 4. */
typedef struct {
  pair_t *ptr;
  size_t len;
} pairs_t;

/* option<u32>: 0 disc u8, 4 u32; size 8, align 4. */
typedef struct {
  uint8_t is_some;
  uint32_t val;
} option_u32_t;

/* option<u64>: 0 disc u8, 8 u64; size 16, align 8. */
typedef struct {
  uint8_t is_some;
  uint64_t val;
} option_u64_t;

/* option<string> (also option<json>): 0 disc u8, 4 string; size 12, align 4. */
typedef struct {
  uint8_t is_some;
  str_t val;
} option_str_t;

/* option<list<u8>>: 0 disc u8, 4 list; size 12, align 4. */
typedef struct {
  uint8_t is_some;
  bytes_t val;
} option_bytes_t;

/* types.call-context: 0 execution-id, 8 workflow, 16 node, 24 task-id, 32 attempt u32,
 * 36 iteration option<u32>; size 44, align 4. */
typedef struct {
  str_t execution_id;
  str_t workflow;
  str_t node;
  str_t task_id;
  uint32_t attempt;
  option_u32_t iteration;
} call_context_t;

/* types.webhook-request: 0 method, 8 path, 16 query, 24 headers, 32 body; size 40, align 4. */
typedef struct {
  str_t method;
  str_t path;
  pairs_t query;
  pairs_t headers;
  bytes_t body;
} webhook_request_t;

/* types.event: variant { poll, webhook(webhook-request) }: 0 disc u8, 4 payload; size 44,
 * align 4. */
enum { EVENT_POLL = 0, EVENT_WEBHOOK = 1 };
typedef struct {
  uint8_t tag;
  union {
    webhook_request_t webhook;
  } val;
} event_t;

/* types.target: variant { task(json), trigger(event) }: 0 disc u8, 4 payload (json 8 or event
 * 44); size 48, align 4. */
enum { TARGET_TASK = 0, TARGET_TRIGGER = 1 };
typedef struct {
  uint8_t tag;
  union {
    str_t task;
    event_t trigger;
  } val;
} target_t;

/* types.request: 0 name, 8 target, 56 context, 100 state option<json>; size 112, align 4. */
typedef struct {
  str_t name;
  target_t target;
  call_context_t context;
  option_str_t state;
} request_t;

/* types.error-kind: enum, u8. */
enum { ERROR_RETRYABLE = 0, ERROR_FATAL = 1, ERROR_VALIDATION = 2 };

/* types.call-error: 0 kind u8, 4 message, 16 backoff-hint-ms option<u64> (disc 16, value 24),
 * 32 partial-output option<json> (disc 32, string 36); size 48, align 8. */
typedef struct {
  uint8_t kind;
  str_t message;
  option_u64_t backoff_hint_ms;
  option_str_t partial_output;
} call_error_t;

/* types.branch-result: 0 selected, 8 output; size 16, align 4. */
typedef struct {
  str_t selected;
  str_t output;
} branch_result_t;

/* types.continue-result: 0 state, 8 output, 16 progress f64, 24 delay-ms u64; size 32,
 * align 8. */
typedef struct {
  str_t state;
  str_t output;
  double progress;
  uint64_t delay_ms;
} continue_result_t;

/* types.task-response: variant { success(json), skip(string), branch(branch-result),
 * continue(continue-result), error(call-error) }: 0 disc u8, 8 payload (largest: call-error,
 * 48); size 56, align 8. */
enum { TASK_SUCCESS = 0, TASK_SKIP = 1, TASK_BRANCH = 2, TASK_CONTINUE = 3, TASK_ERROR = 4 };
typedef struct {
  uint8_t tag;
  union {
    str_t success;
    str_t skip;
    branch_result_t branch;
    continue_result_t cont;
    call_error_t error;
  } val;
} task_response_t;

/* types.trigger-response: variant { completed(json), pending, error(call-error) }: 0 disc u8,
 * 8 payload; size 56, align 8. */
enum { TRIGGER_COMPLETED = 0, TRIGGER_PENDING = 1, TRIGGER_ERROR = 2 };
typedef struct {
  uint8_t tag;
  union {
    str_t completed;
    call_error_t error;
  } val;
} trigger_response_t;

/* types.response: variant { task(task-response), trigger(trigger-response) }: 0 disc u8,
 * 8 payload (56); size 64, align 8. */
enum { RESPONSE_TASK = 0, RESPONSE_TRIGGER = 1 };
typedef struct {
  uint8_t tag;
  union {
    task_response_t task;
    trigger_response_t trigger;
  } val;
} response_t;

/* host.log-level: enum, u8 (passed flat as an i32). */
enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

/* host.artifact-ref: 0 artifact-id, 8 content-type, 16 size u64; size 24, align 8. */
typedef struct {
  str_t artifact_id;
  str_t content_type;
  uint64_t size;
} artifact_ref_t;

/* result<artifact-ref, string>: 0 disc u8 (0 ok, 1 err), 8 payload; size 32, align 8. */
typedef struct {
  uint8_t is_err;
  union {
    artifact_ref_t ok;
    str_t err;
  } val;
} result_artifact_t;

/* host.incoming-response: 0 status u16, 4 headers, 12 body; size 20, align 4. */
typedef struct {
  uint16_t status;
  pairs_t headers;
  bytes_t body;
} incoming_response_t;

/* host.http-error-kind: enum, u8. */
enum { HTTP_SANDBOX_VIOLATION = 0, HTTP_NETWORK = 1 };

/* host.http-error: 0 kind u8, 4 message; size 12, align 4. */
typedef struct {
  uint8_t kind;
  str_t message;
} http_error_t;

/* result<incoming-response, http-error>: 0 disc u8 (0 ok, 1 err), 4 payload; size 24,
 * align 4. */
typedef struct {
  uint8_t is_err;
  union {
    incoming_response_t ok;
    http_error_t err;
  } val;
} result_http_t;

#define LAYOUT(type, size, align)                                   \
  _Static_assert(sizeof(type) == (size), #type " size");            \
  _Static_assert(_Alignof(type) == (align), #type " alignment")
#define AT(type, field, offset) \
  _Static_assert(offsetof(type, field) == (offset), #type "." #field " offset")

LAYOUT(str_t, 8, 4);
LAYOUT(pair_t, 16, 4);
LAYOUT(option_u32_t, 8, 4);
AT(option_u32_t, val, 4);
LAYOUT(option_u64_t, 16, 8);
AT(option_u64_t, val, 8);
LAYOUT(option_str_t, 12, 4);
AT(option_str_t, val, 4);
LAYOUT(option_bytes_t, 12, 4);
LAYOUT(call_context_t, 44, 4);
AT(call_context_t, attempt, 32);
AT(call_context_t, iteration, 36);
LAYOUT(webhook_request_t, 40, 4);
AT(webhook_request_t, body, 32);
LAYOUT(event_t, 44, 4);
AT(event_t, val, 4);
LAYOUT(target_t, 48, 4);
AT(target_t, val, 4);
LAYOUT(request_t, 112, 4);
AT(request_t, target, 8);
AT(request_t, context, 56);
AT(request_t, state, 100);
LAYOUT(call_error_t, 48, 8);
AT(call_error_t, message, 4);
AT(call_error_t, backoff_hint_ms, 16);
AT(call_error_t, partial_output, 32);
LAYOUT(branch_result_t, 16, 4);
LAYOUT(continue_result_t, 32, 8);
AT(continue_result_t, progress, 16);
AT(continue_result_t, delay_ms, 24);
LAYOUT(task_response_t, 56, 8);
AT(task_response_t, val, 8);
LAYOUT(trigger_response_t, 56, 8);
AT(trigger_response_t, val, 8);
LAYOUT(response_t, 64, 8);
AT(response_t, val, 8);
LAYOUT(artifact_ref_t, 24, 8);
AT(artifact_ref_t, size, 16);
LAYOUT(result_artifact_t, 32, 8);
AT(result_artifact_t, val, 8);
LAYOUT(incoming_response_t, 20, 4);
AT(incoming_response_t, headers, 4);
AT(incoming_response_t, body, 12);
LAYOUT(http_error_t, 12, 4);
AT(http_error_t, message, 4);
LAYOUT(result_http_t, 24, 4);
AT(result_http_t, val, 4);

/* ==== Imports: interface fuscia:host/host@1.0.0, lowered ================================== */

#define HOST_IMPORT(name) __attribute__((import_module("fuscia:host/host@1.0.0"), import_name(name)))
#define EXPORT(name) __attribute__((export_name(name)))

/* log: func(level: log-level, message: string): (i32, i32, i32) -> () */
HOST_IMPORT("log") void host_log(int32_t level, const char *msg, size_t len);
/* config-get: func(key: string) -> option<string>: (i32, i32, retptr i32) -> () */
HOST_IMPORT("config-get") void host_config_get(const char *key, size_t len, option_str_t *ret);
/* kv-get: func(key: string) -> option<list<u8>>: (i32, i32, retptr i32) -> () */
HOST_IMPORT("kv-get") void host_kv_get(const char *key, size_t len, option_bytes_t *ret);
/* kv-set: func(key: string, value: list<u8>): (i32, i32, i32, i32) -> () */
HOST_IMPORT("kv-set") void host_kv_set(const char *key, size_t len, const void *val, size_t vlen);
/* kv-delete: func(key: string): (i32, i32) -> () */
HOST_IMPORT("kv-delete") void host_kv_delete(const char *key, size_t len);
/* artifact-write: func(content-type: string, data: list<u8>) -> result<artifact-ref, string>:
 * (i32, i32, i32, i32, retptr i32) -> () */
HOST_IMPORT("artifact-write")
void host_artifact_write(const char *ct, size_t ct_len, const void *data, size_t data_len,
                         result_artifact_t *ret);
/* artifact-read: func(artifact-id: string) -> option<list<u8>>: (i32, i32, retptr i32) -> () */
HOST_IMPORT("artifact-read") void host_artifact_read(const char *id, size_t len, option_bytes_t *ret);
/* http-request: func(request: outgoing-request) -> result<incoming-response, http-error>.
 * outgoing-request flattens to 10 values (method 2, url 2, headers 2, body 2, timeout-ms
 * option<u64> as (i32 disc, i64)), which fits in 16, so it is passed flat:
 * (i32 x 9, i64, retptr i32) -> () */
HOST_IMPORT("http-request")
void host_http_request(const char *method, size_t method_len, const char *url, size_t url_len,
                       const pair_t *headers, size_t headers_len, const void *body,
                       size_t body_len, int32_t timeout_is_some, int64_t timeout_ms,
                       result_http_t *ret);

/* ==== Memory ============================================================================== */

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) __builtin_trap(); /* nothing sensible to answer with: the attempt fails */
  return p;
}

/* cabi_realloc is the canonical ABI's allocator: realloc(old, old_size, align, new_size).
 * malloc's 16-byte alignment covers every type of this world (at most 8). */
EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size) {
  (void)old_size;
  if (align > 16) __builtin_trap();
  if (new_size == 0) {
    free(old_size ? old : NULL);
    return (void *)(uintptr_t)align; /* a dummy, never freed (len 0) */
  }
  void *p = old_size ? realloc(old, new_size) : malloc(new_size);
  if (p == NULL) __builtin_trap();
  return p;
}

static void free_str(str_t s) {
  if (s.len > 0) free(s.ptr);
}

static void free_bytes(bytes_t b) {
  if (b.len > 0) free(b.ptr);
}

static void free_pairs(pairs_t l) {
  for (size_t i = 0; i < l.len; i++) {
    free_str(l.ptr[i].first);
    free_str(l.ptr[i].second);
  }
  if (l.len > 0) free(l.ptr);
}

/* free_request frees what the host lowered for call: the strings and lists, then the record. */
static void free_request(request_t *r) {
  free_str(r->name);
  if (r->target.tag == TARGET_TASK) {
    free_str(r->target.val.task);
  } else if (r->target.val.trigger.tag == EVENT_WEBHOOK) {
    webhook_request_t *w = &r->target.val.trigger.val.webhook;
    free_str(w->method);
    free_str(w->path);
    free_pairs(w->query);
    free_pairs(w->headers);
    free_bytes(w->body);
  }
  free_str(r->context.execution_id);
  free_str(r->context.workflow);
  free_str(r->context.node);
  free_str(r->context.task_id);
  if (r->state.is_some) free_str(r->state.val);
  free(r);
}

/* ==== A growing text buffer =============================================================== */

typedef struct {
  char *data;
  size_t len, cap;
} sb_t;

static void sb_put(sb_t *b, const void *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (b->len + n + 1 > cap) cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) __builtin_trap();
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static void sb_puts(sb_t *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_uint(sb_t *b, uint64_t v) {
  char tmp[24];
  size_t i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  sb_put(b, tmp + i, sizeof tmp - i);
}

/* sb_take hands the buffer over as a string of a response (always a malloc'd buffer). */
static str_t sb_take(sb_t *b) {
  if (b->data == NULL) sb_put(b, "", 0);
  str_t s = {b->data, b->len};
  b->data = NULL;
  b->len = b->cap = 0;
  return s;
}

static str_t str_dup(const char *s, size_t n) {
  sb_t b = {0};
  sb_put(&b, s, n);
  return sb_take(&b);
}

static str_t str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char *p = xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return (str_t){p, (size_t)n};
}

/* utf8_len returns the length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  if (s[0] < 0x80) return 1;
  size_t len;
  uint32_t min, cp;
  if ((s[0] & 0xE0) == 0xC0) len = 2, min = 0x80, cp = s[0] & 0x1F;
  else if ((s[0] & 0xF0) == 0xE0) len = 3, min = 0x800, cp = s[0] & 0x0F;
  else if ((s[0] & 0xF8) == 0xF0) len = 4, min = 0x10000, cp = s[0] & 0x07;
  else return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/* sb_json_string writes bytes as a JSON string, quotes included. Bytes that are not UTF-8
 * (a webhook body, a file) become U+FFFD: a response's strings must be valid UTF-8, or the
 * host's lifting traps. */
static void sb_json_string(sb_t *b, const void *data, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = data;
  sb_put(b, "\"", 1);
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      sb_put(b, e, 2);
      i++;
    } else if (c < 0x20) {
      const char *short_esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
      if (short_esc != NULL) {
        sb_puts(b, short_esc);
      } else {
        char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        sb_put(b, e, 6);
      }
      i++;
    } else {
      size_t l = utf8_len(s + i, n - i);
      if (l == 0) {
        sb_puts(b, "\xEF\xBF\xBD");
        i++;
      } else {
        sb_put(b, s + i, l);
        i += l;
      }
    }
  }
  sb_put(b, "\"", 1);
}

/* ==== Just enough JSON ====================================================================
 * A validating recursive-descent reader (RFC 8259) that finds the members of a top-level
 * object. Malformed input is reported, never trusted; nesting is capped so that a deep
 * document cannot exhaust the stack. */

typedef struct {
  const char *s;
  size_t n;
} span_t;

typedef struct {
  const char *p, *end;
  int depth;
} jp_t;

#define JSON_MAX_DEPTH 64

static bool jp_value(jp_t *j);

static void jp_ws(jp_t *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static bool jp_lit(jp_t *j, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return false;
  j->p += n;
  return true;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool jp_string(jp_t *j) {
  if (j->p >= j->end || *j->p != '"') return false;
  j->p++;
  while (j->p < j->end) {
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') return true;
    if (c < 0x20) return false;
    if (c != '\\') continue;
    if (j->p >= j->end) return false;
    switch (*j->p++) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        break;
      case 'u':
        if (j->end - j->p < 4) return false;
        for (int i = 0; i < 4; i++)
          if (hexval(*j->p++) < 0) return false;
        break;
      default:
        return false;
    }
  }
  return false;
}

static bool is_digit(const jp_t *j) { return j->p < j->end && *j->p >= '0' && *j->p <= '9'; }

static bool jp_number(jp_t *j) {
  if (j->p < j->end && *j->p == '-') j->p++;
  if (!is_digit(j)) return false;
  if (*j->p == '0') j->p++;
  else while (is_digit(j)) j->p++;
  if (j->p < j->end && *j->p == '.') {
    j->p++;
    if (!is_digit(j)) return false;
    while (is_digit(j)) j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (!is_digit(j)) return false;
    while (is_digit(j)) j->p++;
  }
  return true;
}

/* jp_container reads an object (close '}') or an array (close ']'). */
static bool jp_container(jp_t *j, char close) {
  if (++j->depth > JSON_MAX_DEPTH) return false;
  j->p++;
  jp_ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    j->depth--;
    return true;
  }
  for (;;) {
    if (close == '}') {
      jp_ws(j);
      if (!jp_string(j)) return false;
      jp_ws(j);
      if (j->p >= j->end || *j->p != ':') return false;
      j->p++;
    }
    if (!jp_value(j)) return false;
    jp_ws(j);
    if (j->p >= j->end) return false;
    if (*j->p == close) {
      j->p++;
      j->depth--;
      return true;
    }
    if (*j->p != ',') return false;
    j->p++;
  }
}

static bool jp_value(jp_t *j) {
  jp_ws(j);
  if (j->p >= j->end) return false;
  switch (*j->p) {
    case '{': return jp_container(j, '}');
    case '[': return jp_container(j, ']');
    case '"': return jp_string(j);
    case 't': return jp_lit(j, "true");
    case 'f': return jp_lit(j, "false");
    case 'n': return jp_lit(j, "null");
    default: return jp_number(j);
  }
}

/* json_valid reports whether s is one JSON document. */
static bool json_valid(span_t s) {
  jp_t j = {s.s, s.s + s.n, 0};
  if (!jp_value(&j)) return false;
  jp_ws(&j);
  return j.p == j.end;
}

static void put_utf8(sb_t *b, uint32_t cp) {
  unsigned char u[4];
  size_t n;
  if (cp < 0x80) u[0] = (unsigned char)cp, n = 1;
  else if (cp < 0x800) u[0] = (unsigned char)(0xC0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 0x3F)), n = 2;
  else if (cp < 0x10000) u[0] = (unsigned char)(0xE0 | cp >> 12), u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)), u[2] = (unsigned char)(0x80 | (cp & 0x3F)), n = 3;
  else u[0] = (unsigned char)(0xF0 | cp >> 18), u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F)), u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (unsigned char)(0x80 | (cp & 0x3F)), n = 4;
  sb_put(b, u, n);
}

static uint32_t hex4(const char *p) {
  return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

/* json_unquote decodes a JSON string that jp_string accepted (quotes included) into b. A lone
 * surrogate becomes U+FFFD. */
static void json_unquote(span_t s, sb_t *b) {
  const char *p = s.s + 1, *end = s.s + s.n - 1;
  while (p < end) {
    if (*p != '\\') {
      sb_put(b, p++, 1);
      continue;
    }
    p++;
    char e = *p++;
    switch (e) {
      case 'b': sb_put(b, "\b", 1); break;
      case 'f': sb_put(b, "\f", 1); break;
      case 'n': sb_put(b, "\n", 1); break;
      case 'r': sb_put(b, "\r", 1); break;
      case 't': sb_put(b, "\t", 1); break;
      case 'u': {
        uint32_t cp = hex4(p);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
          uint32_t lo = hex4(p + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        put_utf8(b, cp);
        break;
      }
      default: sb_put(b, &e, 1); break; /* " \ / */
    }
  }
  if (b->data == NULL) sb_put(b, "", 0);
}

/* json_member finds key in the JSON object doc and sets *val to its value's text.
 * 1: found; 0: doc is an object without key; -1: doc is not valid JSON or not an object. */
static int json_member(span_t doc, const char *key, span_t *val) {
  if (!json_valid(doc)) return -1;
  jp_t j = {doc.s, doc.s + doc.n, 0};
  jp_ws(&j);
  if (j.p >= j.end || *j.p != '{') return -1;
  j.p++;
  for (;;) {
    jp_ws(&j);
    if (*j.p == '}') return 0;
    if (*j.p == ',') {
      j.p++;
      jp_ws(&j);
    }
    const char *ks = j.p;
    jp_string(&j);
    sb_t k = {0};
    json_unquote((span_t){ks, (size_t)(j.p - ks)}, &k);
    bool match = strlen(key) == k.len && memcmp(k.data, key, k.len) == 0;
    free(k.data);
    jp_ws(&j);
    j.p++; /* ':' */
    jp_ws(&j);
    const char *vs = j.p;
    jp_value(&j);
    if (match) {
      *val = (span_t){vs, (size_t)(j.p - vs)};
      return 1;
    }
  }
}

typedef enum { FIELD_OK, FIELD_MISSING, FIELD_WRONG_TYPE, FIELD_BAD_DOC } field_status;

/* json_string_field decodes the string member key of doc into out (NUL-terminated). */
static field_status json_string_field(span_t doc, const char *key, sb_t *out) {
  span_t v;
  int r = json_member(doc, key, &v);
  if (r < 0) return FIELD_BAD_DOC;
  if (r == 0) return FIELD_MISSING;
  if (v.s[0] != '"') return FIELD_WRONG_TYPE;
  json_unquote(v, out);
  return FIELD_OK;
}

/* json_uint_field reads the member key of doc as an integer in [0, 2^53]. */
static field_status json_uint_field(span_t doc, const char *key, uint64_t *out) {
  span_t v;
  int r = json_member(doc, key, &v);
  if (r < 0) return FIELD_BAD_DOC;
  if (r == 0) return FIELD_MISSING;
  uint64_t n = 0;
  for (size_t i = 0; i < v.n; i++) {
    if (v.s[i] < '0' || v.s[i] > '9' || n > (UINT64_C(1) << 53) / 10) return FIELD_WRONG_TYPE;
    n = n * 10 + (uint64_t)(v.s[i] - '0');
  }
  if (n > (UINT64_C(1) << 53)) return FIELD_WRONG_TYPE;
  *out = n;
  return FIELD_OK;
}

/* ==== Responses =========================================================================== */

static response_t *new_response(uint8_t tag, uint8_t case_tag) {
  response_t *r = calloc(1, sizeof *r);
  if (r == NULL) __builtin_trap();
  r->tag = tag;
  if (tag == RESPONSE_TASK) r->val.task.tag = case_tag;
  else r->val.trigger.tag = case_tag;
  return r;
}

static response_t *success(sb_t *output) {
  response_t *r = new_response(RESPONSE_TASK, TASK_SUCCESS);
  r->val.task.val.success = sb_take(output);
  return r;
}

static response_t *task_error_msg(uint8_t kind, str_t message) {
  response_t *r = new_response(RESPONSE_TASK, TASK_ERROR);
  r->val.task.val.error.kind = kind;
  r->val.task.val.error.message = message;
  return r;
}

/* field_error answers a validation error for input member key that fs says is unusable. */
static response_t *field_error(field_status fs, const char *key, const char *want) {
  if (fs == FIELD_BAD_DOC)
    return task_error_msg(ERROR_VALIDATION, str_printf("input is not a JSON object"));
  return task_error_msg(ERROR_VALIDATION, str_printf("input.%s: %s is required", key, want));
}

static void free_call_error(call_error_t *e) {
  free(e->message.ptr);
  if (e->partial_output.is_some) free(e->partial_output.val.ptr);
}

/* cabi_post_call frees a response once the host has lifted it. */
EXPORT("cabi_post_call") void cabi_post_call(response_t *r) {
  if (r->tag == RESPONSE_TASK) {
    task_response_t *t = &r->val.task;
    switch (t->tag) {
      case TASK_SUCCESS: free(t->val.success.ptr); break;
      case TASK_SKIP: free(t->val.skip.ptr); break;
      case TASK_BRANCH:
        free(t->val.branch.selected.ptr);
        free(t->val.branch.output.ptr);
        break;
      case TASK_CONTINUE:
        free(t->val.cont.state.ptr);
        free(t->val.cont.output.ptr);
        break;
      case TASK_ERROR: free_call_error(&t->val.error); break;
    }
  } else {
    trigger_response_t *t = &r->val.trigger;
    if (t->tag == TRIGGER_COMPLETED) free(t->val.completed.ptr);
    else if (t->tag == TRIGGER_ERROR) free_call_error(&t->val.error);
  }
  free(r);
}

/* ==== Tasks =============================================================================== */

static void log_line(int32_t level, const char *s) { host_log(level, s, strlen(s)); }

/* upper: {"text": s} -> {"text": S}, ASCII letters in upper case. Logs a line at info and
 * prints one to stdout. */
static response_t *task_upper(span_t input) {
  sb_t text = {0};
  field_status fs = json_string_field(input, "text", &text);
  if (fs != FIELD_OK) return field_error(fs, "text", "a string");
  for (size_t i = 0; i < text.len; i++)
    if (text.data[i] >= 'a' && text.data[i] <= 'z') text.data[i] = (char)(text.data[i] - 'a' + 'A');
  sb_t line = {0};
  sb_puts(&line, "cguest: upper of ");
  sb_uint(&line, text.len);
  sb_puts(&line, " bytes");
  log_line(LOG_INFO, line.data);
  free(line.data);
  printf("cguest: upper says %s\n", text.data);
  fflush(stdout); /* not a terminal: fully buffered, and a reactor never exits */
  sb_t out = {0};
  sb_puts(&out, "{\"text\":");
  sb_json_string(&out, text.data, text.len);
  sb_puts(&out, "}");
  free(text.data);
  return success(&out);
}

/* echo: the input, unchanged. */
static response_t *task_echo(span_t input) {
  if (!json_valid(input))
    return task_error_msg(ERROR_VALIDATION, str_printf("input is not valid JSON"));
  response_t *r = new_response(RESPONSE_TASK, TASK_SUCCESS);
  r->val.task.val.success = str_dup(input.s, input.n);
  return r;
}

/* value_json writes {"value": V} with V the bytes as a JSON string, or null. */
static response_t *value_response(bool some, const void *data, size_t n) {
  sb_t out = {0};
  sb_puts(&out, "{\"value\":");
  if (some) sb_json_string(&out, data, n);
  else sb_puts(&out, "null");
  sb_puts(&out, "}");
  return success(&out);
}

/* config: {"key": k} -> {"value": config-get(k) or null}. */
static response_t *task_config(span_t input) {
  sb_t key = {0};
  field_status fs = json_string_field(input, "key", &key);
  if (fs != FIELD_OK) return field_error(fs, "key", "a string");
  option_str_t v = {0};
  host_config_get(key.data, key.len, &v);
  free(key.data);
  response_t *r = value_response(v.is_some, v.val.ptr, v.val.len);
  if (v.is_some) free_str(v.val);
  return r;
}

/* kv: {"key": k, "value": v} -> kv-set(k, v), then {"value": kv-get(k) or null}. */
static response_t *task_kv(span_t input) {
  sb_t key = {0}, val = {0};
  field_status fs = json_string_field(input, "key", &key);
  if (fs != FIELD_OK) return field_error(fs, "key", "a string");
  fs = json_string_field(input, "value", &val);
  if (fs != FIELD_OK) {
    free(key.data);
    return field_error(fs, "value", "a string");
  }
  host_kv_set(key.data, key.len, val.data, val.len);
  option_bytes_t got = {0};
  host_kv_get(key.data, key.len, &got);
  free(key.data);
  free(val.data);
  response_t *r = value_response(got.is_some, got.val.ptr, got.val.len);
  if (got.is_some) free_bytes(got.val);
  return r;
}

/* kv-delete: {"key": k} -> kv-delete(k), then {"value": kv-get(k) or null}. */
static response_t *task_kv_delete(span_t input) {
  sb_t key = {0};
  field_status fs = json_string_field(input, "key", &key);
  if (fs != FIELD_OK) return field_error(fs, "key", "a string");
  host_kv_delete(key.data, key.len);
  option_bytes_t got = {0};
  host_kv_get(key.data, key.len, &got);
  free(key.data);
  response_t *r = value_response(got.is_some, got.val.ptr, got.val.len);
  if (got.is_some) free_bytes(got.val);
  return r;
}

/* artifact: {"data": d, "content_type"?: t} -> artifact-write(t or "text/plain", d), then
 * artifact-read of its id: {"artifact_id", "content_type", "size", "content"}. */
static response_t *task_artifact(span_t input) {
  sb_t data = {0}, ct = {0};
  field_status fs = json_string_field(input, "data", &data);
  if (fs != FIELD_OK) return field_error(fs, "data", "a string");
  fs = json_string_field(input, "content_type", &ct);
  if (fs == FIELD_MISSING) sb_puts(&ct, "text/plain");
  else if (fs != FIELD_OK) {
    free(data.data);
    return field_error(fs, "content_type", "a string");
  }
  result_artifact_t w = {0};
  host_artifact_write(ct.data, ct.len, data.data, data.len, &w);
  free(ct.data);
  free(data.data);
  if (w.is_err) {
    response_t *r = task_error_msg(ERROR_FATAL, str_printf("artifact-write: %.*s", (int)w.val.err.len, w.val.err.ptr));
    free_str(w.val.err);
    return r;
  }
  artifact_ref_t *ref = &w.val.ok;
  option_bytes_t got = {0};
  host_artifact_read(ref->artifact_id.ptr, ref->artifact_id.len, &got);
  sb_t out = {0};
  sb_puts(&out, "{\"artifact_id\":");
  sb_json_string(&out, ref->artifact_id.ptr, ref->artifact_id.len);
  sb_puts(&out, ",\"content_type\":");
  sb_json_string(&out, ref->content_type.ptr, ref->content_type.len);
  sb_puts(&out, ",\"size\":");
  sb_uint(&out, ref->size);
  sb_puts(&out, ",\"content\":");
  if (got.is_some) sb_json_string(&out, got.val.ptr, got.val.len);
  else sb_puts(&out, "null");
  sb_puts(&out, "}");
  free_str(ref->artifact_id);
  free_str(ref->content_type);
  if (got.is_some) free_bytes(got.val);
  return success(&out);
}

/* grow: takes 1 MiB blocks, each written to, until malloc fails; then gives them back (the
 * answer needs memory too) and answers fatal "out of memory after N MiB". The host's memory
 * cap is meant to fail the attempt whatever this answers. */
static response_t *task_grow(void) {
  void *last = NULL;
  uint32_t mib = 0;
  for (;;) {
    void **block = malloc(1 << 20);
    if (block == NULL) break;
    memset(block, 0xA5, 1 << 20);
    *block = last; /* a list threaded through the blocks themselves */
    last = block;
    mib++;
  }
  while (last != NULL) {
    void *prev = *(void **)last;
    free(last);
    last = prev;
  }
  return task_error_msg(ERROR_FATAL, str_printf("out of memory after %u MiB", mib));
}

/* http: {"url": u} -> GET u through the host; {"status": N}, or an error with the host's
 * message (fatal for sandbox-violation, retryable for network). */
static response_t *task_http(span_t input) {
  sb_t url = {0};
  field_status fs = json_string_field(input, "url", &url);
  if (fs != FIELD_OK) return field_error(fs, "url", "a string");
  result_http_t res = {0};
  host_http_request("GET", 3, url.data, url.len, NULL, 0, NULL, 0, 0, 0, &res);
  free(url.data);
  if (res.is_err) {
    uint8_t kind = res.val.err.kind == HTTP_NETWORK ? ERROR_RETRYABLE : ERROR_FATAL;
    response_t *r = task_error_msg(kind, str_dup(res.val.err.message.ptr, res.val.err.message.len));
    free_str(res.val.err.message);
    return r;
  }
  sb_t out = {0};
  sb_puts(&out, "{\"status\":");
  sb_uint(&out, res.val.ok.status);
  sb_puts(&out, "}");
  free_pairs(res.val.ok.headers);
  free_bytes(res.val.ok.body);
  return success(&out);
}

#define READ_MAX (4u << 20)

/* read: {"path": p} -> {"content": the file's text}, or fatal "open P: strerror". */
static response_t *task_read(span_t input) {
  sb_t path = {0};
  field_status fs = json_string_field(input, "path", &path);
  if (fs != FIELD_OK) return field_error(fs, "path", "a string");
  FILE *f = fopen(path.data, "rb");
  if (f == NULL) {
    response_t *r = task_error_msg(ERROR_FATAL, str_printf("open %s: %s", path.data, strerror(errno)));
    free(path.data);
    return r;
  }
  sb_t content = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && content.len <= READ_MAX) sb_put(&content, chunk, n);
  bool failed = ferror(f);
  int err = errno;
  fclose(f);
  response_t *r;
  if (failed) {
    r = task_error_msg(ERROR_FATAL, str_printf("read %s: %s", path.data, strerror(err)));
  } else if (content.len > READ_MAX) {
    r = task_error_msg(ERROR_FATAL, str_printf("read %s: larger than %u bytes", path.data, READ_MAX));
  } else {
    sb_t out = {0};
    sb_puts(&out, "{\"content\":");
    sb_json_string(&out, content.data, content.len);
    sb_puts(&out, "}");
    r = success(&out);
  }
  free(path.data);
  free(content.data);
  return r;
}

/* bigkv: kv-set("big", 2 MiB of 'x'); the host refuses values over 1 MiB by trapping. If it
 * does not: {"stored": 2097152}. */
static response_t *task_bigkv(void) {
  size_t n = 2u << 20;
  char *v = xmalloc(n);
  memset(v, 'x', n);
  host_kv_set("big", 3, v, n);
  free(v);
  sb_t out = {0};
  sb_puts(&out, "{\"stored\":");
  sb_uint(&out, n);
  sb_puts(&out, "}");
  return success(&out);
}

/* skip: skip("cguest: asked to skip"). */
static response_t *task_skip(void) {
  response_t *r = new_response(RESPONSE_TASK, TASK_SKIP);
  r->val.task.val.skip = str_printf("cguest: asked to skip");
  return r;
}

/* branch: {"selected"?: s} -> branch(selected: s or "left", output: {"selected": s}). */
static response_t *task_branch(span_t input) {
  sb_t sel = {0};
  field_status fs = json_string_field(input, "selected", &sel);
  if (fs == FIELD_MISSING) sb_puts(&sel, "left");
  else if (fs != FIELD_OK) return field_error(fs, "selected", "a string");
  sb_t out = {0};
  sb_puts(&out, "{\"selected\":");
  sb_json_string(&out, sel.data, sel.len);
  sb_puts(&out, "}");
  response_t *r = new_response(RESPONSE_TASK, TASK_BRANCH);
  r->val.task.val.branch.selected = sb_take(&sel);
  r->val.task.val.branch.output = sb_take(&out);
  return r;
}

/* continue: {"steps"?: n (default 2), "delay_ms"?: d (default 0)}. With step = the state's
 * "step" (0 on the first call): step < n -> continue(state {"step": step+1}, output
 * {"step": step+1}, progress (step+1)/n, delay-ms d); else success {"step": step, "done": true}. */
static response_t *task_continue(span_t input, option_str_t state) {
  uint64_t steps = 2, delay = 0, step = 0;
  field_status fs = json_uint_field(input, "steps", &steps);
  if (fs != FIELD_OK && fs != FIELD_MISSING) return field_error(fs, "steps", "a whole number");
  fs = json_uint_field(input, "delay_ms", &delay);
  if (fs != FIELD_OK && fs != FIELD_MISSING) return field_error(fs, "delay_ms", "a whole number");
  if (steps == 0) steps = 1;
  if (state.is_some) {
    fs = json_uint_field((span_t){state.val.ptr, state.val.len}, "step", &step);
    if (fs != FIELD_OK)
      return task_error_msg(ERROR_VALIDATION, str_printf("state: {\"step\": a whole number} is required"));
  }
  if (step >= steps) {
    sb_t out = {0};
    sb_puts(&out, "{\"step\":");
    sb_uint(&out, step);
    sb_puts(&out, ",\"done\":true}");
    return success(&out);
  }
  sb_t st = {0};
  sb_puts(&st, "{\"step\":");
  sb_uint(&st, step + 1);
  sb_puts(&st, "}");
  response_t *r = new_response(RESPONSE_TASK, TASK_CONTINUE);
  continue_result_t *c = &r->val.task.val.cont;
  c->output = str_dup(st.data, st.len);
  c->state = sb_take(&st);
  c->progress = (double)(step + 1) / (double)steps;
  c->delay_ms = delay;
  return r;
}

/* error-retryable: error(retryable, "cguest: try again", backoff-hint-ms 1500,
 * partial-output {"done": 1}). */
static response_t *task_error_retryable(void) {
  response_t *r = task_error_msg(ERROR_RETRYABLE, str_printf("cguest: try again"));
  call_error_t *e = &r->val.task.val.error;
  e->backoff_hint_ms.is_some = 1;
  e->backoff_hint_ms.val = 1500;
  e->partial_output.is_some = 1;
  e->partial_output.val = str_printf("{\"done\":1}");
  return r;
}

/* bad-level, bad-pointer, bad-utf8: call log with arguments the canonical ABI cannot lift (an
 * enum case that does not exist, a string outside memory, a string that is not UTF-8);
 * wasmtime traps, so these never answer. */
static response_t *task_bad(const char *which) {
  if (strcmp(which, "bad-level") == 0) host_log(9, "level nine", 10);
  else if (strcmp(which, "bad-pointer") == 0) host_log(LOG_INFO, (const char *)(uintptr_t)0xFFFFFF00u, 4096);
  else host_log(LOG_INFO, "\xC3\x28 not UTF-8", 12);
  return task_error_msg(ERROR_FATAL, str_printf("%s: the host accepted a bad argument", which));
}

static bool is(str_t s, const char *name) { return s.len == strlen(name) && memcmp(s.ptr, name, s.len) == 0; }

static response_t *run_task(str_t name, span_t input, option_str_t state) {
  if (is(name, "upper")) return task_upper(input);
  if (is(name, "echo")) return task_echo(input);
  if (is(name, "config")) return task_config(input);
  if (is(name, "kv")) return task_kv(input);
  if (is(name, "kv-delete")) return task_kv_delete(input);
  if (is(name, "artifact")) return task_artifact(input);
  if (is(name, "trap")) __builtin_trap();
  if (is(name, "loop")) {
    volatile uint64_t counter = 0;
    for (;;) counter++;
  }
  if (is(name, "grow")) return task_grow();
  if (is(name, "http")) return task_http(input);
  if (is(name, "read")) return task_read(input);
  if (is(name, "bigkv")) return task_bigkv();
  if (is(name, "skip")) return task_skip();
  if (is(name, "branch")) return task_branch(input);
  if (is(name, "continue")) return task_continue(input, state);
  if (is(name, "error-retryable")) return task_error_retryable();
  if (is(name, "bad-level")) return task_bad("bad-level");
  if (is(name, "bad-pointer")) return task_bad("bad-pointer");
  if (is(name, "bad-utf8")) return task_bad("bad-utf8");
  return task_error_msg(ERROR_VALIDATION, str_printf("unknown task %.*s", (int)name.len, name.ptr));
}

/* ==== Triggers ============================================================================ */

/* poll: completed {"polled": true} the first time (kv "seen" unset, then set), pending after. */
static response_t *trigger_poll(void) {
  option_bytes_t seen = {0};
  host_kv_get("seen", 4, &seen);
  if (seen.is_some) {
    free_bytes(seen.val);
    return new_response(RESPONSE_TRIGGER, TRIGGER_PENDING);
  }
  host_kv_set("seen", 4, "1", 1);
  response_t *r = new_response(RESPONSE_TRIGGER, TRIGGER_COMPLETED);
  r->val.trigger.val.completed = str_printf("{\"polled\":true}");
  return r;
}

/* webhook: completed {"method", "path", "body": the body as text}. */
static response_t *trigger_webhook(const webhook_request_t *w) {
  sb_t out = {0};
  sb_puts(&out, "{\"method\":");
  sb_json_string(&out, w->method.ptr, w->method.len);
  sb_puts(&out, ",\"path\":");
  sb_json_string(&out, w->path.ptr, w->path.len);
  sb_puts(&out, ",\"body\":");
  sb_json_string(&out, w->body.ptr, w->body.len);
  sb_puts(&out, "}");
  response_t *r = new_response(RESPONSE_TRIGGER, TRIGGER_COMPLETED);
  r->val.trigger.val.completed = sb_take(&out);
  return r;
}

/* ==== The export ========================================================================== */

/* call: func(request: request) -> response. The request flattens to 28 core values (> 16), so
 * the host lowers it into memory from cabi_realloc and passes its address; the response
 * flattens to more than one value, so its address is returned, and cabi_post_call frees it. */
EXPORT("call") response_t *fuscia_call(request_t *req) {
  response_t *r;
  if (req->target.tag == TARGET_TASK) {
    span_t input = {req->target.val.task.ptr, req->target.val.task.len};
    r = run_task(req->name, input, req->state);
  } else if (req->target.val.trigger.tag == EVENT_POLL) {
    r = trigger_poll();
  } else {
    r = trigger_webhook(&req->target.val.trigger.val.webhook);
  }
  free_request(req);
  return r;
}
