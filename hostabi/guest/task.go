package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// Context is what the host says about the call: which execution, workflow, node and attempt.
type Context struct {
	ExecutionID string
	Workflow    string
	// Node is the node's address, e.g. "loop.notify/task.send".
	Node   string
	TaskID string
	// Attempt is 1-based.
	Attempt int
	// Iteration is the 0-based iteration of the enclosing loop or for_each; nil outside them.
	Iteration *int
	// State is the state of the task's last Continue result in this attempt, as JSON; nil on
	// the first call.
	State json.RawMessage
}

// DecodeState decodes ctx.State into v, as json.Unmarshal does. It reports false, and leaves v
// alone, when there is no state (the first call of an attempt).
func (ctx Context) DecodeState(v any) (bool, error) {
	if isNull(ctx.State) {
		return false, nil
	}
	if err := json.Unmarshal(ctx.State, v); err != nil {
		return false, err
	}
	return true, nil
}

// Task registers fn as the handler of the component's task name. Call it from an init
// function. The request's input is decoded into In with encoding/json, strictly: a field that In
// does not have, or a value of the wrong type, fails the attempt with a validation error before
// fn runs. An absent or null input leaves In at its zero value. Use json.RawMessage or
// map[string]any as In to take any input.
//
// Task panics if name is empty or already registered.
func Task[In any](name string, fn func(ctx Context, in In) (Result, error)) {
	if fn == nil {
		panic("guest: Task " + strconv.Quote(name) + " with a nil handler")
	}
	handlers.addTask(name, typedTask(fn))
	handlers.warmers = append(handlers.warmers, warmInput[In])
}

// typedTask wraps fn into a taskFunc that decodes the input first.
func typedTask[In any](fn func(ctx Context, in In) (Result, error)) taskFunc {
	return func(ctx Context, raw json.RawMessage) (Result, error) {
		var in In
		if err := decodeInput(raw, &in); err != nil {
			return Result{}, &Error{Kind: KindValidation, Message: "invalid input: " + err.Error()}
		}
		return fn(ctx, in)
	}
}

// decodeInput decodes raw into v strictly and explains what is wrong in JSON terms.
func decodeInput(raw json.RawMessage, v any) error {
	if isNull(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		what := "the input"
		if te.Field != "" {
			what = strconv.Quote(te.Field)
		}
		return errors.New(what + " must be " + jsonKind(te.Type) + ", not " + article(te.Value))
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
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
// "a string", "the number 1.5", "an object".
func article(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "" || strings.IndexByte("aeiou", v[0]) < 0:
		return "a " + v
	}
	return "an " + v
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}
