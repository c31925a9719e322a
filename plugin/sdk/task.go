package sdk

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// TaskDef is a task of a plugin, made by Task or TaskWithResult and listed in Plugin.Tasks.
type TaskDef struct {
	name         string
	description  string
	inputSchema  []byte // nil: none
	outputSchema []byte // nil: none
	// run decodes the input and calls the handler.
	run func(ctx context.Context, call *Call, input []byte) (Result, error)
	// check decodes a plan-time input and runs the Validate option, if any.
	check func(ctx context.Context, input []byte, unknown Unknowns) []Diagnostic
	// err is what is wrong with the definition; Serve reports it.
	err error
}

// Name returns the task's name.
func (t TaskDef) Name() string { return t.name }

// Task defines the task name, served by fn. The input is decoded into In with encoding/json,
// strictly: a field that In does not have, or a value of the wrong type, fails the attempt with
// a validation error before fn runs; an absent or null input leaves In at its zero value. fn's
// Out is encoded with encoding/json as the success output (a nil pointer as the zero value it
// points to, a nil slice as [], a nil map or interface as {}); an Out of type Result is sent as
// that result.
//
// The input and output JSON Schemas are derived from In and Out (see the package README):
// a field tagged `json:",omitempty"` is optional, any other is required, and fields not in the
// type are refused; an output field that can be nil (slice, map, pointer, interface) and is
// not omitempty also accepts null, as encoding/json writes it. InputSchema and OutputSchema
// declare them instead.
func Task[In, Out any](name string, fn func(ctx context.Context, call *Call, in In) (Out, error), opts ...Option) TaskDef {
	if fn == nil {
		return TaskDef{name: name, err: fmt.Errorf("task %s has a nil handler", strconv.Quote(name))}
	}
	return newTask[In, Out](name, opts, func(ctx context.Context, call *Call, in In) (Result, error) {
		out, err := fn(ctx, call, in)
		if err != nil {
			return Result{}, err
		}
		if r, ok := any(out).(Result); ok {
			return r, nil
		}
		return Success(sendable(out)), nil
	})
}

// sendable is a task's output as Task sends it: a nil pointer (to anything but an interface)
// as the zero value it points to, and a nil slice as an empty one, so that what is sent
// matches the schema derived from Out, which describes that value and not null (marshalOutput
// would send {}). A nil map, interface or json.RawMessage stays as it is and is sent as {}.
func sendable(out any) any {
	v := reflect.ValueOf(out)
	switch {
	case !v.IsValid() || !canBeNil(v.Type()) || !v.IsNil():
		return out
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() != reflect.Interface:
		return reflect.New(v.Type().Elem()).Interface()
	case v.Kind() == reflect.Slice && !v.Type().Implements(jsonMarshalerType):
		return reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	return out
}

// TaskWithResult defines the task name, served by fn, which may answer Skip, Branch and
// Continue as well as Success. Input as for Task; the task has no output schema unless
// OutputSchema declares one.
func TaskWithResult[In any](name string, fn func(ctx context.Context, call *Call, in In) (Result, error), opts ...Option) TaskDef {
	if fn == nil {
		return TaskDef{name: name, err: fmt.Errorf("task %s has a nil handler", strconv.Quote(name))}
	}
	return newTask[In, Result](name, opts, fn)
}

// newTask builds the definition of a task whose handler takes In and whose output is Out.
func newTask[In, Out any](name string, opts []Option, fn func(ctx context.Context, call *Call, in In) (Result, error)) TaskDef {
	o := collect(opts)
	o.notFor("task", "PayloadSchema")
	t := TaskDef{name: name, description: o.description, inputSchema: o.inputSchema, outputSchema: o.outputSchema}

	var validate func(context.Context, In, Unknowns) []Diagnostic
	if o.validate != nil {
		var ok bool
		if validate, ok = o.validate.(func(context.Context, In, Unknowns) []Diagnostic); !ok {
			o.errs = append(o.errs, fmt.Errorf("Validate takes %s, but the task's input is %s", o.validateIn, reflect.TypeFor[In]()))
		}
	}
	if t.inputSchema == nil {
		s, err := inputSchemaFor(reflect.TypeFor[In]())
		if err != nil {
			o.errs = append(o.errs, fmt.Errorf("input schema: %w", err))
		}
		t.inputSchema = s
	}
	if t.outputSchema == nil {
		s, err := outputSchemaFor(reflect.TypeFor[Out]())
		if err != nil {
			o.errs = append(o.errs, fmt.Errorf("output schema: %w", err))
		}
		t.outputSchema = s
	}
	if name == "" {
		o.errs = append(o.errs, errors.New("a task needs a name"))
	}
	if len(o.errs) > 0 {
		t.err = fmt.Errorf("task %s: %w", strconv.Quote(name), errors.Join(o.errs...))
		return t
	}

	t.run = func(ctx context.Context, call *Call, input []byte) (Result, error) {
		var in In
		if err := decodeStrict(input, &in, "the input"); err != nil {
			return Result{}, &Error{Kind: KindValidation, Message: "invalid input: " + err.Error()}
		}
		return fn(ctx, call, in)
	}
	t.check = func(ctx context.Context, input []byte, unknown Unknowns) []Diagnostic {
		var in In
		if err := decodeStrict(input, &in, "the input"); err != nil {
			d := Diagnostic{Summary: "Invalid input", Detail: err.Error()}
			if de := (*decodeError)(nil); errors.As(err, &de) {
				d.Path = de.Path
			}
			return []Diagnostic{d}
		}
		if validate == nil {
			return nil
		}
		return validate(ctx, in, unknown)
	}
	return t
}
