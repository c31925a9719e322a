package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// decodeError is a document that does not decode into a Go value, with the JSON Pointer of the
// value at fault when it can be told ("" otherwise).
type decodeError struct {
	Path string
	// Msg says what is wrong with the value at Path; when it starts with "must", it needs a
	// subject: the pointer, or Doc for the whole document.
	Msg string
	Doc string // "the input", "the config"
}

func (e *decodeError) Error() string {
	if !strings.HasPrefix(e.Msg, "must") && !strings.HasPrefix(e.Msg, "is ") {
		return e.Msg
	}
	if e.Path == "" {
		return e.Doc + " " + e.Msg
	}
	return strconv.Quote(e.Path) + " " + e.Msg
}

// decodeStrict decodes raw into v, as encoding/json does but strictly: a field v does not have
// is an error, and so is anything after the value. An absent or null document leaves v alone.
// Errors are *decodeError, worded in JSON terms rather than Go's; doc names the document in
// them ("the input").
func decodeStrict(raw []byte, v any, doc string) error {
	if isNull(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			return &decodeError{Msg: "unexpected data after the JSON value", Doc: doc}
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &decodeError{Path: pointerAt(raw, te.Offset), Doc: doc,
			Msg: "must be " + jsonKind(te.Type) + ", not " + article(te.Value)}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	// encoding/json names an unknown field but not where it is; when the document has only one
	// member of that name, that is the one.
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if name, uerr := strconv.Unquote(name); uerr == nil {
			if paths := memberPointers(raw, name); len(paths) == 1 {
				return &decodeError{Path: paths[0], Msg: "is not a known field", Doc: doc}
			}
			return &decodeError{Msg: "unknown field " + strconv.Quote(name), Doc: doc}
		}
	}
	return &decodeError{Msg: msg, Doc: doc}
}

// pointerAt returns the JSON Pointer of the value of raw that ends at byte offset (or that
// starts there, for an array or object, which encoding/json reports after its opening
// delimiter); "" when raw cannot be read that far.
func pointerAt(raw []byte, offset int64) string {
	path := ""
	walkJSON(raw, func(p string, end int64, isKey bool) bool {
		if !isKey && end >= offset {
			path = p
			return false
		}
		return true
	})
	return path
}

// memberPointers returns the pointers of every object member called name in raw, in order.
func memberPointers(raw []byte, name string) []string {
	var out []string
	suffix := "/" + escapePointer(name)
	walkJSON(raw, func(p string, _ int64, isKey bool) bool {
		if isKey && strings.HasSuffix(p, suffix) {
			out = append(out, p)
		}
		return true
	})
	return out
}

// walkJSON calls visit for every key and value of raw, in document order, with its pointer and
// the offset just after its token (after the opening delimiter of an array or object). A key's
// pointer is that of its value. visit returns false to stop; so does malformed JSON.
func walkJSON(raw []byte, visit func(pointer string, end int64, isKey bool) bool) {
	type frame struct {
		object  bool
		wantKey bool   // object: the next string token is a key
		key     string // object: the current member's key
		index   int    // array: the index of the next element
	}
	var stack []frame
	pointer := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.object {
				b.WriteString(escapePointer(f.key))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	// next moves the innermost container past the value just read.
	next := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		end := dec.InputOffset()
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			next()
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			stack[n-1].key, _ = tok.(string)
			stack[n-1].wantKey = false
			if !visit(pointer(), end, true) {
				return
			}
			continue
		}
		if !visit(pointer(), end, false) {
			return
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			continue
		}
		next()
	}
}

// escapePointer escapes a key as a JSON Pointer segment (RFC 6901).
func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// jsonKind names the JSON type that decodes into t, with an article.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// article turns json.UnmarshalTypeError's Value ("string", "number 1.5", "object") into
// "a string", "the number 1.5", "an object", "a boolean".
func article(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "" || strings.IndexByte("aeiou", v[0]) < 0:
		return "a " + v
	}
	return "an " + v
}

func isNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}
