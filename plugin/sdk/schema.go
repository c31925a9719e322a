package sdk

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// Types whose schema is not derived by reflection.
var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	resultType      = reflect.TypeFor[Result]()
	artifactRefType = reflect.TypeFor[ArtifactRef]()
	// jsonMarshalerType says which types encode themselves (json.RawMessage among them).
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
)

// inputSchemaFor returns the JSON Schema of a task input of type t. An input that takes any
// JSON (json.RawMessage, an interface) is only said to be an object, which every task input is.
func inputSchemaFor(t reflect.Type) ([]byte, error) {
	if takesAnything(t) {
		return []byte(`{"type":"object"}`), nil
	}
	return deriveSchema(t, nil)
}

// outputSchemaFor returns the JSON Schema of a task output of type t; nil when t says nothing
// about it (a Result, json.RawMessage, an interface). Unlike an input's, it accepts null
// wherever encoding/json may write one (admitNull).
func outputSchemaFor(t reflect.Type) ([]byte, error) {
	if takesAnything(t) || t == resultType {
		return nil, nil
	}
	return deriveSchema(t, admitNull)
}

func takesAnything(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Interface || t == rawMessageType
}

// deriveSchema reflects t into a draft 2020-12 JSON Schema with github.com/invopop/jsonschema:
// one self-contained document, every type inline, no $id (Fuscia compiles it as it is and
// never fetches anything). A field is required unless tagged omitempty or omitzero, and an
// object refuses fields its struct does not have, as the strict decoding of inputs does.
// adjust, if not nil, amends the reflected schema before it is encoded.
func deriveSchema(t reflect.Type, adjust func(reflect.Type, *jsonschema.Schema)) (doc []byte, err error) {
	// invopop panics on types JSON cannot hold (channels, functions, complex numbers).
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("cannot derive a JSON Schema from %s: %v", t, p)
		}
	}()
	r := &jsonschema.Reflector{
		Anonymous:      true,
		DoNotReference: true,
		ExpandedStruct: true,
		Mapper:         mapType,
	}
	// Inlining a recursive type never ends; those get $defs and $refs inside the document,
	// which Fuscia's schema compiler resolves.
	if recursive(t, map[reflect.Type]bool{}) {
		r.DoNotReference, r.ExpandedStruct = false, false
	}
	s := r.ReflectFromType(t)
	if adjust != nil {
		adjust(t, s)
	}
	doc, err = json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode the JSON Schema of %s: %w", t, err)
	}
	return doc, nil
}

// mapType gives the schemas that reflection would get wrong.
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == artifactRefType {
		// The host's ref may carry more fields than ArtifactRef has; they are kept.
		props := jsonschema.NewProperties()
		props.Set("artifact_id", &jsonschema.Schema{Type: "string"})
		props.Set("content_type", &jsonschema.Schema{Type: "string"})
		props.Set("size", &jsonschema.Schema{Type: "integer"})
		return &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"artifact_id"}}
	}
	return nil
}

// recursive reports whether t contains itself (a tree node with children of its own type).
// onPath holds the named types being walked.
func recursive(t reflect.Type, onPath map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return recursive(t.Elem(), onPath)
	case reflect.Struct:
		if t == artifactRefType {
			return false
		}
		if onPath[t] {
			return true
		}
		onPath[t] = true
		defer delete(onPath, t)
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && recursive(f.Type, onPath) {
				return true
			}
		}
	}
	return false
}
