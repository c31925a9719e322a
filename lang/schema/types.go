package schema

import (
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/zclconf/go-cty/cty"
)

// types is a set of JSON Schema type names; the zero value means "any type".
type types uint8

const (
	tNull types = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

// typeName is a type with its name in schemas and its noun in messages.
type typeName struct {
	t    types
	name string
	noun string
}

// typeOrder lists the types in the order messages name them.
func typeOrder() [7]typeName {
	return [...]typeName{
		{tNull, "null", "null"},
		{tBoolean, "boolean", "a boolean"},
		{tNumber, "number", "a number"},
		{tInteger, "integer", "an integer"},
		{tString, "string", "a string"},
		{tArray, "array", "an array"},
		{tObject, "object", "an object"},
	}
}

func typesFromNames(names []string) types {
	var t types
	for _, n := range names {
		for _, o := range typeOrder() {
			if o.name == n {
				t |= o.t
			}
		}
	}
	return t
}

func (t types) has(u types) bool { return t&u != 0 }

// String lists the types as a phrase: "an integer", "a string or an object".
// "integer" is left out when "number" is present, because every integer is a number.
func (t types) String() string {
	if t.has(tNumber) {
		t &^= tInteger
	}
	var nouns []string
	for _, o := range typeOrder() {
		if t.has(o.t) {
			nouns = append(nouns, o.noun)
		}
	}
	switch len(nouns) {
	case 0:
		return "any value"
	case 1:
		return nouns[0]
	default:
		return strings.Join(nouns[:len(nouns)-1], ", ") + " or " + nouns[len(nouns)-1]
	}
}

// typeOfJSON is the JSON Schema type of a value in the form encoding/json and the validator use.
func typeOfJSON(x any) types {
	switch x.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case json.Number:
		return tNumber
	case float64, int, int64:
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	default:
		return 0
	}
}

// typeOfCty is the JSON type a known, unmarked, non-null cty value encodes to; integral numbers
// are reported as both "number" and "integer" so either in a schema accepts them.
func typeOfCty(v cty.Value) types {
	ty := v.Type()
	switch {
	case ty == cty.String:
		return tString
	case ty == cty.Bool:
		return tBoolean
	case ty == cty.Number:
		if v.AsBigFloat().IsInt() {
			return tNumber | tInteger
		}
		return tNumber
	case ty.IsObjectType() || ty.IsMapType():
		return tObject
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		return tArray
	default:
		return 0
	}
}

// accepts reports whether a value of JSON type got needs no conversion to satisfy want.
func (want types) accepts(got types) bool {
	return want == 0 || want.has(got)
}

// typesOfValues is the set of types of enum or const values, so that coercion knows an enum of
// strings wants a string even when the schema omits "type".
func typesOfValues(vals []any) types {
	var t types
	for _, v := range vals {
		t |= typeOfJSON(v)
	}
	if t.has(tNumber) {
		// An enum of numbers may hold integers; numbers accept both.
		t |= tInteger
	}
	return t
}

func schemaTypes(s *jsonschema.Schema) types {
	if s.Types != nil && !s.Types.IsEmpty() {
		return typesFromNames(s.Types.ToStrings())
	}
	return 0
}

// eachAttr calls f with each attribute of a known, unmarked object or map, marks of the
// attributes kept. Objects are read through their type, which saves the key values an
// ElementIterator would allocate; the order is unspecified.
func eachAttr(v cty.Value, f func(name string, ev cty.Value)) {
	if ty := v.Type(); ty.IsObjectType() {
		for name := range ty.AttributeTypes() {
			f(name, v.GetAttr(name))
		}
		return
	}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		f(k.AsString(), ev)
	}
}
