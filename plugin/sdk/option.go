package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Option configures a task or trigger. Options that do not apply (OutputSchema on a trigger,
// PayloadSchema on a task) are reported by Serve.
type Option func(*options)

// options collects what the Options of one task or trigger said.
type options struct {
	description   string
	inputSchema   json.RawMessage
	outputSchema  json.RawMessage
	payloadSchema json.RawMessage
	// validate is a func(context.Context, In, Unknowns) []Diagnostic; its In is only known to
	// the Task call, which checks it against its own (validateIn).
	validate   any
	validateIn reflect.Type
	errs       []error
}

func collect(opts []Option) *options {
	o := &options{}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

// Description describes the task or trigger to workflow authors (fuscia plan, docs).
func Description(s string) Option { return func(o *options) { o.description = s } }

// InputSchema declares the JSON Schema of a task's input, instead of the one derived from the
// handler's input type. Use it for what a Go type cannot say (patterns, enums, one-of), and keep
// it in line with the input type: the input is still decoded into it.
func InputSchema(schema json.RawMessage) Option {
	return func(o *options) { o.inputSchema = checkSchema(o, "InputSchema", schema) }
}

// OutputSchema declares the JSON Schema of a task's output, instead of the derived one.
func OutputSchema(schema json.RawMessage) Option {
	return func(o *options) { o.outputSchema = checkSchema(o, "OutputSchema", schema) }
}

// PayloadSchema declares the JSON Schema of a trigger's payload (trigger.payload in the
// workflow). Triggers have no derived payload schema.
func PayloadSchema(schema json.RawMessage) Option {
	return func(o *options) { o.payloadSchema = checkSchema(o, "PayloadSchema", schema) }
}

// Validate adds a plan-time check of a task's input (fuscia plan, and before a run starts). In
// must be the task's input type. The input is decoded into in as at run time, except that values
// not known yet are null (so zero in in): unknown.Has(pointer) tells them apart, e.g.
// unknown.Has("/name"). Return nothing when the input is fine.
func Validate[In any](fn func(ctx context.Context, in In, unknown Unknowns) []Diagnostic) Option {
	return func(o *options) {
		if fn == nil {
			o.errs = append(o.errs, errors.New("Validate with a nil function"))
			return
		}
		o.validate, o.validateIn = fn, reflect.TypeFor[In]()
	}
}

func checkSchema(o *options, option string, schema json.RawMessage) json.RawMessage {
	if !json.Valid(schema) {
		o.errs = append(o.errs, fmt.Errorf("%s is not valid JSON", option))
		return nil
	}
	return schema
}

// notFor reports the options that do not apply to kind ("trigger").
func (o *options) notFor(kind string, names ...string) {
	set := map[string]bool{
		"InputSchema":   o.inputSchema != nil,
		"OutputSchema":  o.outputSchema != nil,
		"PayloadSchema": o.payloadSchema != nil,
		"Validate":      o.validate != nil,
	}
	for _, n := range names {
		if set[n] {
			o.errs = append(o.errs, fmt.Errorf("%s does not apply to a %s", n, kind))
		}
	}
}
