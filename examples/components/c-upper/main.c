/*
 * fuscia/c-upper: a Fuscia component written in C against the host ABI v1
 * (docs/reference/abi-v1.md) and nothing else; no SDK.
 *
 * Task "upper": input {"text": "..."}; output {"text": PREFIX + TEXT in upper case, "calls": N},
 * where PREFIX is the component block's config value "prefix" (none: "") and N counts the calls
 * of this task in the execution, kept in the execution's key-value store under "calls". It logs
 * one line per call. An empty text is a validation error.
 *
 * Build: make (clang --target=wasm32-wasi -mexec-model=reactor -nodefaultlibs -lc).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- The ABI: imports, exports, packed buffers ---------------------------------------- */

#define FUSCIA_IMPORT(name) __attribute__((import_module("fuscia"), import_name(name)))
#define FUSCIA_EXPORT(name) __attribute__((export_name(name)))

FUSCIA_IMPORT("log") void fuscia_log(int32_t level, const char *msg, int32_t len);
FUSCIA_IMPORT("config_get") int64_t fuscia_config_get(const char *key, int32_t klen);
FUSCIA_IMPORT("kv_get") int64_t fuscia_kv_get(const char *key, int32_t klen);
FUSCIA_IMPORT("kv_set") void fuscia_kv_set(const char *key, int32_t klen, const char *val, int32_t vlen);

enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

/* The marker: never called. */
FUSCIA_EXPORT("fuscia_abi_v1") void fuscia_abi_v1(void) {}

/* Every buffer the host writes (the request, import answers) comes from here, and is ours to
 * free with free(). Out of memory traps: 0 would be taken as an address. */
FUSCIA_EXPORT("fuscia_alloc") void *fuscia_alloc(int32_t n) {
  void *p = malloc(n > 0 ? (size_t)n : 1);
  if (p == NULL) __builtin_trap();
  return p;
}

static int64_t pack(const char *p, size_t n) {
  return (int64_t)(((uint64_t)(uintptr_t)p << 32) | (uint32_t)n);
}

/* answer is an import's answer: none (present = 0), empty (len = 0, no buffer), or a buffer
 * from fuscia_alloc that release() frees. */
typedef struct {
  int present;
  char *ptr;
  uint32_t len;
} answer;

static answer take(int64_t packed) {
  answer a = {0, NULL, 0};
  if (packed == 0) return a;
  a.present = 1;
  a.len = (uint32_t)packed;
  if (a.len > 0) a.ptr = (char *)(uintptr_t)(uint32_t)((uint64_t)packed >> 32);
  return a;
}

static void release(answer a) {
  if (a.len > 0) free(a.ptr); /* an empty answer's pointer is not an allocation */
}

/* ---- A growing byte buffer, for the response and log lines ------------------------------ */

typedef struct {
  char *data;
  size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + n + 1 > cap) cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) __builtin_trap();
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static void put_uint(buf *b, uint64_t v) {
  char tmp[20];
  size_t i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  put(b, tmp + i, sizeof tmp - i);
}

/* put_json_string writes raw bytes as the inside of a JSON string. */
static void put_json_string(buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(b, e, 2);
    } else if (c < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      put(b, e, 6);
    } else {
      put(b, (const char *)&c, 1);
    }
  }
}

/* ---- Just enough JSON: find a key of an object, skip a value ---------------------------- */

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* skip_string: p is at '"'; returns the byte after the closing '"', or NULL. */
static const char *skip_string(const char *p, const char *end) {
  for (p++; p < end; p++) {
    if (*p == '\\') p++;
    else if (*p == '"') return p + 1;
  }
  return NULL;
}

/* skip_value returns the byte after the JSON value at p, or NULL when it is malformed. */
static const char *skip_value(const char *p, const char *end) {
  p = skip_ws(p, end);
  if (p >= end) return NULL;
  if (*p == '"') return skip_string(p, end);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < end) {
      if (*p == '"') {
        p = skip_string(p, end);
        if (p == NULL) return NULL;
        continue;
      }
      if (*p == '{' || *p == '[') depth++;
      if (*p == '}' || *p == ']') {
        if (--depth == 0) return p + 1;
      }
      p++;
    }
    return NULL;
  }
  /* a number, true, false or null */
  const char *start = p;
  while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') p++;
  return p > start ? p : NULL;
}

/* member finds key in the object at p and returns its value's first byte (*vend: after it),
 * or NULL. Keys are compared as raw bytes: fine for the ASCII keys of the ABI. */
static const char *member(const char *p, const char *end, const char *key, const char **vend) {
  size_t klen = strlen(key);
  p = skip_ws(p, end);
  if (p >= end || *p != '{') return NULL;
  p++;
  for (;;) {
    p = skip_ws(p, end);
    if (p >= end || *p != '"') return NULL;
    const char *k = p + 1, *kend = skip_string(p, end);
    if (kend == NULL) return NULL;
    p = skip_ws(kend, end);
    if (p >= end || *p != ':') return NULL;
    const char *v = skip_ws(p + 1, end), *after = skip_value(v, end);
    if (after == NULL) return NULL;
    if ((size_t)(kend - 1 - k) == klen && memcmp(k, key, klen) == 0) {
      *vend = after;
      return v;
    }
    p = skip_ws(after, end);
    if (p >= end || *p != ',') return NULL;
    p++;
  }
}

/* ---- The task ------------------------------------------------------------------------- */

/* error writes an error response of kind with a message made of two parts. */
static void error(buf *out, const char *kind, const char *msg, const char *detail, size_t dlen) {
  puts_(out, "{\"type\":\"error\",\"kind\":\"");
  puts_(out, kind);
  puts_(out, "\",\"message\":\"");
  put_json_string(out, msg, strlen(msg));
  put_json_string(out, detail, dlen);
  puts_(out, "\"}");
}

/* calls adds one to the "calls" counter of the execution's KV store and returns it. */
static uint64_t count_call(void) {
  answer a = take(fuscia_kv_get("calls", 5));
  uint64_t n = 0;
  for (uint32_t i = 0; i < a.len; i++) {
    if (a.ptr[i] >= '0' && a.ptr[i] <= '9') n = n * 10 + (uint64_t)(a.ptr[i] - '0');
  }
  release(a);
  n++;
  buf v = {0};
  put_uint(&v, n);
  fuscia_kv_set("calls", 5, v.data, (int32_t)v.len);
  free(v.data);
  return n;
}

static void upper(buf *out, const char *req, const char *end) {
  const char *iend, *tend, *cend, *nend = NULL;
  const char *input = member(req, end, "input", &iend);
  const char *text = input ? member(input, iend, "text", &tend) : NULL;
  if (text == NULL || *text != '"') {
    error(out, "validation", "c-upper: the input needs \"text\", a string", "", 0);
    return;
  }
  /* The raw inside of the JSON string, escapes and all. */
  const char *s = text + 1, *send = tend - 1;
  if (s == send) {
    error(out, "validation", "c-upper: text must not be empty", "", 0);
    return;
  }
  const char *ctx = member(req, end, "context", &cend);
  const char *node = ctx ? member(ctx, cend, "node", &nend) : NULL;

  answer prefix = take(fuscia_config_get("prefix", 6)); /* none and empty: no prefix */
  uint64_t calls = count_call();

  puts_(out, "{\"type\":\"success\",\"output\":{\"text\":\"");
  put_json_string(out, prefix.ptr, prefix.len);
  release(prefix);
  for (const char *p = s; p < send; p++) {
    if (*p == '\\') {
      /* An escape stays as it is: \n must not become \N. \uXXXX's hex digits may change case. */
      put(out, p, 2);
      p++;
      continue;
    }
    char c = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
    put(out, &c, 1);
  }
  puts_(out, "\",\"calls\":");
  put_uint(out, calls);
  puts_(out, "}}");

  buf line = {0};
  puts_(&line, "c-upper: ");
  if (node != NULL && *node == '"') put(&line, node + 1, (size_t)(nend - node - 2));
  puts_(&line, " is call ");
  put_uint(&line, calls);
  puts_(&line, " of this execution");
  fuscia_log(LOG_INFO, line.data, (int32_t)line.len);
  free(line.data);
}

/* The response lives until the instance ends: the host reads it after fuscia_call returns. */
static buf response;

FUSCIA_EXPORT("fuscia_call") int64_t fuscia_call(char *req, int32_t len) {
  const char *end = req + (len > 0 ? len : 0);
  const char *kend, *nend;
  const char *kind = member(req, end, "kind", &kend);
  const char *name = member(req, end, "name", &nend);
  response.len = 0;
  if (kind == NULL || name == NULL) {
    error(&response, "fatal", "c-upper: the request is not the JSON object of ABI v1", "", 0);
  } else if (kend - kind == 6 && memcmp(kind, "\"task\"", 6) == 0 && nend - name == 7 &&
             memcmp(name, "\"upper\"", 7) == 0) {
    upper(&response, req, end);
  } else {
    error(&response, "fatal", "c-upper: no such task or trigger: ", name, (size_t)(nend - name));
  }
  free(req); /* the request came from fuscia_alloc */
  return pack(response.data, response.len);
}
