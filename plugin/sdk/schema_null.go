package sdk

import (
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
)

// admitNull makes s, the schema reflected from the output type t, accept what encoding/json
// writes for t's zero values, so that a derived output schema says what the SDK sends:
//
//   - a slice (and []byte), map, pointer or interface that is nil and not left out by
//     omitempty or omitzero is written as null: its schema gains "null" ("type":
//     ["array", "null"]) — in struct fields, array items and map values alike;
//   - the fields promoted from an embedded struct pointer are left out entirely when the
//     pointer is nil: they are not required.
//
// Reflection by invopop/jsonschema declares only the non-null type, which is right for inputs
// (a task asks for a list, not null) and wrong for outputs. The root itself is never null:
// Task sends a nil output as the zero value it stands for (see sendable).
func admitNull(t reflect.Type, s *jsonschema.Schema) {
	w := nullWalker{defs: s.Definitions, seen: map[*jsonschema.Schema]bool{}}
	w.walk(t, s)
}

// nullWalker walks a Go type and the schema reflected from it side by side.
type nullWalker struct {
	defs jsonschema.Definitions      // the root's $defs, which $refs name (recursive types)
	seen map[*jsonschema.Schema]bool // definitions walked already: a recursive type ends here
}

func (w *nullWalker) walk(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Ref != "" {
		def := w.defs[strings.TrimPrefix(s.Ref, "#/$defs/")]
		if def == nil || w.seen[def] {
			return
		}
		w.seen[def] = true
		s = def
	}
	// A field tagged `jsonschema:"nullable"` is a oneOf of its schema and null.
	for _, alt := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
		w.walk(t, alt)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if s.Properties != nil {
			w.fields(t, s, false)
		}
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			w.walk(t.Elem(), s.Items)
			if canBeNil(t.Elem()) {
				s.Items = orNull(s.Items)
			}
		}
	case reflect.Map:
		// A map with integer keys has its values under patternProperties, others under
		// additionalProperties (which is the false schema for no other value).
		if ap := s.AdditionalProperties; ap != nil && ap != jsonschema.FalseSchema && ap != jsonschema.TrueSchema {
			w.walk(t.Elem(), ap)
			if canBeNil(t.Elem()) {
				s.AdditionalProperties = orNull(ap)
			}
		}
		for k, v := range s.PatternProperties {
			w.walk(t.Elem(), v)
			if canBeNil(t.Elem()) {
				s.PatternProperties[k] = orNull(v)
			}
		}
	}
}

// fields walks the fields of struct t into the properties of s, following invopop's rules for
// names and embedding (which are encoding/json's for ordinary types). optional is true for the
// fields promoted through an embedded pointer.
func (w *nullWalker) fields(t reflect.Type, s *jsonschema.Schema, optional bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tags := strings.Split(f.Tag.Get("json"), ",")
		if tags[0] == "-" || strings.Split(f.Tag.Get("jsonschema"), ",")[0] == "-" {
			continue
		}
		if f.Anonymous && tags[0] == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				w.fields(ft, s, optional || f.Type.Kind() == reflect.Pointer)
				continue
			}
		}
		if !f.Anonymous && !f.IsExported() {
			continue
		}
		name := f.Name
		if tags[0] != "" {
			name = tags[0]
		}
		prop, ok := s.Properties.Get(name)
		if !ok {
			continue
		}
		if optional {
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
		}
		w.walk(f.Type, prop)
		omitted := slices.Contains(tags[1:], "omitempty") || slices.Contains(tags[1:], "omitzero")
		if !omitted && canBeNil(f.Type) {
			s.Properties.Set(name, orNull(prop))
		}
	}
}

// canBeNil reports whether encoding/json may write a value of type t as null.
func canBeNil(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
		return true
	}
	return false
}

// orNull returns s widened to accept null: "null" joins a plain "type", so that the
// properties and items stay where plan-time reference checks look for them; a schema that
// other keywords also decide ($ref, enum, const, a combinator) is wrapped in anyOf instead.
func orNull(s *jsonschema.Schema) *jsonschema.Schema {
	switch {
	case admitsNull(s):
		return s
	case s.Type != "" && s.Type != "null" && s.Enum == nil && s.Const == nil:
		if s.Extras == nil {
			s.Extras = map[string]any{}
		}
		// jsonschema.Schema.Type holds one name; Extras are written over the struct's fields.
		s.Extras["type"] = []string{s.Type, "null"}
		s.Type = ""
		return s
	default:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
	}
}

// admitsNull reports whether s accepts null already: it constrains no type (an interface
// field), or orNull or a `jsonschema:"nullable"` tag widened it.
func admitsNull(s *jsonschema.Schema) bool {
	if s == jsonschema.TrueSchema || s.Type == "null" {
		return true
	}
	if _, ok := s.Extras["type"]; ok {
		return true
	}
	for _, alt := range slices.Concat(s.AnyOf, s.OneOf) {
		if alt.Type == "null" {
			return true
		}
	}
	return s.Type == "" && s.Ref == "" && s.Enum == nil && s.Const == nil && s.Not == nil &&
		s.If == nil && len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) == 0
}
