package schema

import (
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// mustCompile compiles a schema for a test.
func mustCompile(t testing.TB, doc string) *Schema {
	t.Helper()
	s, err := Compile("test", []byte(doc))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

// obj shortens object literals in tables.
func obj(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }

const coerceDoc = `{
	"type": "object",
	"properties": {
		"count":   {"type": "integer"},
		"ratio":   {"type": "number"},
		"enabled": {"type": "boolean"},
		"name":    {"type": "string"},
		"kind":    {"enum": ["a", "b"]},
		"config":  {"type": "object", "properties": {"port": {"type": "integer"}}},
		"list":    {"type": "array", "items": {"type": "integer"}},
		"pair":    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
		"tags":    {"type": "array", "items": {"type": "string"}},
		"labels":  {"type": "object", "additionalProperties": {"type": "string"}},
		"either":  {"anyOf": [{"type": "integer"}, {"type": "object"}]},
		"ref":     {"$ref": "#/$defs/port"},
		"any":     {}
	},
	"patternProperties": {"^x_": {"type": "boolean"}},
	"$defs": {"port": {"type": "integer", "minimum": 1}}
}`

func TestCoerce(t *testing.T) {
	s := mustCompile(t, coerceDoc)
	tests := []struct {
		name     string
		in, want cty.Value
		problems []string
	}{
		{
			name: "string to integer",
			in:   obj(map[string]cty.Value{"count": cty.StringVal("42")}),
			want: obj(map[string]cty.Value{"count": cty.NumberIntVal(42)}),
		},
		{
			name: "string to number",
			in:   obj(map[string]cty.Value{"ratio": cty.StringVal("1.5")}),
			want: obj(map[string]cty.Value{"ratio": cty.NumberFloatVal(1.5)}),
		},
		{
			name: "string to boolean",
			in:   obj(map[string]cty.Value{"enabled": cty.StringVal("true")}),
			want: obj(map[string]cty.Value{"enabled": cty.True}),
		},
		{
			name: "number and boolean to string",
			in:   obj(map[string]cty.Value{"name": cty.NumberFloatVal(2.5), "labels": obj(map[string]cty.Value{"on": cty.False})}),
			want: obj(map[string]cty.Value{"name": cty.StringVal("2.5"), "labels": obj(map[string]cty.Value{"on": cty.StringVal("false")})}),
		},
		{
			name: "enum without type wants strings",
			in:   obj(map[string]cty.Value{"kind": cty.NumberIntVal(1)}),
			want: obj(map[string]cty.Value{"kind": cty.StringVal("1")}),
		},
		{
			name: "JSON string to object, coerced inside",
			in:   obj(map[string]cty.Value{"config": cty.StringVal(` {"port": "8080", "extra": [1]} `)}),
			want: obj(map[string]cty.Value{"config": obj(map[string]cty.Value{
				"port": cty.NumberIntVal(8080), "extra": cty.TupleVal([]cty.Value{cty.NumberIntVal(1)}),
			})}),
		},
		{
			name: "JSON string to array, then to list",
			in:   obj(map[string]cty.Value{"list": cty.StringVal(`[1, "2"]`)}),
			want: obj(map[string]cty.Value{"list": cty.ListVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)})}),
		},
		{
			name: "nested object",
			in:   obj(map[string]cty.Value{"config": obj(map[string]cty.Value{"port": cty.StringVal("80")})}),
			want: obj(map[string]cty.Value{"config": obj(map[string]cty.Value{"port": cty.NumberIntVal(80)})}),
		},
		{
			name: "tuple to list",
			in:   obj(map[string]cty.Value{"tags": cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.NumberIntVal(2)})}),
			want: obj(map[string]cty.Value{"tags": cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("2")})}),
		},
		{
			name: "set to list",
			in:   obj(map[string]cty.Value{"tags": cty.SetVal([]cty.Value{cty.StringVal("a")})}),
			want: obj(map[string]cty.Value{"tags": cty.ListVal([]cty.Value{cty.StringVal("a")})}),
		},
		{
			name: "empty tuple to empty list",
			in:   obj(map[string]cty.Value{"tags": cty.EmptyTupleVal}),
			want: obj(map[string]cty.Value{"tags": cty.ListValEmpty(cty.DynamicPseudoType)}),
		},
		{
			name: "prefixItems keep a tuple",
			in:   obj(map[string]cty.Value{"pair": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("2")})}),
			want: obj(map[string]cty.Value{"pair": cty.TupleVal([]cty.Value{cty.StringVal("1"), cty.NumberIntVal(2)})}),
		},
		{
			name: "map to object",
			in:   obj(map[string]cty.Value{"config": cty.MapVal(map[string]cty.Value{"port": cty.StringVal("1")})}),
			want: obj(map[string]cty.Value{"config": obj(map[string]cty.Value{"port": cty.NumberIntVal(1)})}),
		},
		{
			name: "patternProperties",
			in:   obj(map[string]cty.Value{"x_debug": cty.StringVal("false")}),
			want: obj(map[string]cty.Value{"x_debug": cty.False}),
		},
		{
			name: "$ref",
			in:   obj(map[string]cty.Value{"ref": cty.StringVal("443")}),
			want: obj(map[string]cty.Value{"ref": cty.NumberIntVal(443)}),
		},
		{
			name: "anyOf: a string is converted to the first branch that takes it",
			in:   obj(map[string]cty.Value{"either": cty.StringVal("7")}),
			want: obj(map[string]cty.Value{"either": cty.NumberIntVal(7)}),
		},
		{
			name: "anyOf: a value of a branch's type is kept",
			in:   obj(map[string]cty.Value{"either": cty.EmptyObjectVal}),
			want: obj(map[string]cty.Value{"either": cty.EmptyObjectVal}),
		},
		{
			name: "untyped values are left alone",
			in:   obj(map[string]cty.Value{"any": cty.TupleVal([]cty.Value{cty.StringVal("1")}), "other": cty.StringVal("1")}),
			want: obj(map[string]cty.Value{"any": cty.TupleVal([]cty.Value{cty.StringVal("1")}), "other": cty.StringVal("1")}),
		},
		{
			name: "null is left alone",
			in:   obj(map[string]cty.Value{"count": cty.NullVal(cty.String)}),
			want: obj(map[string]cty.Value{"count": cty.NullVal(cty.String)}),
		},
		{
			name:     "not an integer",
			in:       obj(map[string]cty.Value{"count": cty.StringVal("abc")}),
			want:     obj(map[string]cty.Value{"count": cty.StringVal("abc")}),
			problems: []string{`count: must be an integer, got string "abc"`},
		},
		{
			name:     "a fraction is not an integer",
			in:       obj(map[string]cty.Value{"count": cty.StringVal("1.5"), "ref": cty.NumberFloatVal(0.5)}),
			want:     obj(map[string]cty.Value{"count": cty.StringVal("1.5"), "ref": cty.NumberFloatVal(0.5)}),
			problems: []string{`count: must be an integer, got string "1.5"`, `ref: must be an integer, got number 0.5`},
		},
		{
			name:     "not a boolean",
			in:       obj(map[string]cty.Value{"enabled": cty.StringVal("yes")}),
			want:     obj(map[string]cty.Value{"enabled": cty.StringVal("yes")}),
			problems: []string{`enabled: must be a boolean, got string "yes"`},
		},
		{
			name:     "object is not a string",
			in:       obj(map[string]cty.Value{"name": cty.EmptyObjectVal}),
			want:     obj(map[string]cty.Value{"name": cty.EmptyObjectVal}),
			problems: []string{`name: must be a string, got object`},
		},
		{
			name:     "invalid JSON is not an object",
			in:       obj(map[string]cty.Value{"config": cty.StringVal(`{"port":`)}),
			want:     obj(map[string]cty.Value{"config": cty.StringVal(`{"port":`)}),
			problems: []string{`config: must be an object, got string "{\"port\":"`},
		},
		{
			name:     "JSON array is not an object",
			in:       obj(map[string]cty.Value{"config": cty.StringVal(`[]`)}),
			want:     obj(map[string]cty.Value{"config": cty.StringVal(`[]`)}),
			problems: []string{`config: must be an object, got string "[]"`},
		},
		{
			name: "failures inside arrays, sorted by index",
			in: obj(map[string]cty.Value{"list": cty.TupleVal([]cty.Value{
				cty.NumberIntVal(0), cty.NumberIntVal(1), cty.StringVal("two"), cty.NumberIntVal(3), cty.NumberIntVal(4),
				cty.NumberIntVal(5), cty.NumberIntVal(6), cty.NumberIntVal(7), cty.NumberIntVal(8), cty.NumberIntVal(9),
				cty.True,
			})}),
			want: obj(map[string]cty.Value{"list": cty.TupleVal([]cty.Value{
				cty.NumberIntVal(0), cty.NumberIntVal(1), cty.StringVal("two"), cty.NumberIntVal(3), cty.NumberIntVal(4),
				cty.NumberIntVal(5), cty.NumberIntVal(6), cty.NumberIntVal(7), cty.NumberIntVal(8), cty.NumberIntVal(9),
				cty.True,
			})}),
			problems: []string{`list[2]: must be an integer, got string "two"`, `list[10]: must be an integer, got boolean true`},
		},
		{
			name:     "anyOf with no branch to convert to",
			in:       obj(map[string]cty.Value{"either": cty.StringVal("x")}),
			want:     obj(map[string]cty.Value{"either": cty.StringVal("x")}),
			problems: []string{`either: must be an integer or an object, got string "x"`},
		},
		{
			name:     "root of the wrong type",
			in:       cty.StringVal("x"),
			want:     cty.StringVal("x"),
			problems: []string{`must be an object, got string "x"`},
		},
		{
			name: "attribute names that are not identifiers are quoted",
			in:   obj(map[string]cty.Value{"labels": obj(map[string]cty.Value{"a b": cty.EmptyObjectVal})}),
			want: obj(map[string]cty.Value{"labels": obj(map[string]cty.Value{"a b": cty.EmptyObjectVal})}),
			problems: []string{
				`labels["a b"]: must be a string, got object`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := s.Coerce(tt.in)
			if !got.RawEquals(tt.want) {
				t.Errorf("Coerce:\n got  %#v\n want %#v", got, tt.want)
			}
			if ps := strs(problems); !slices.Equal(ps, tt.problems) {
				t.Errorf("problems:\n got  %q\n want %q", ps, tt.problems)
			}
		})
	}
}

func TestCoerceUnknownAndMarked(t *testing.T) {
	s := mustCompile(t, coerceDoc)
	secret := func(v cty.Value) cty.Value { return v.Mark("sensitive") }
	tests := []struct {
		name     string
		in, want cty.Value
		problems []string
	}{
		{
			name: "wholly unknown",
			in:   cty.DynamicVal,
			want: cty.DynamicVal,
		},
		{
			name: "unknown object",
			in:   cty.UnknownVal(cty.Object(map[string]cty.Type{"count": cty.String})),
			want: cty.UnknownVal(cty.Object(map[string]cty.Type{"count": cty.String})),
		},
		{
			name: "unknown attribute next to known ones",
			in:   obj(map[string]cty.Value{"count": cty.UnknownVal(cty.String), "ratio": cty.StringVal("2")}),
			want: obj(map[string]cty.Value{"count": cty.UnknownVal(cty.String), "ratio": cty.NumberIntVal(2)}),
		},
		{
			name: "unknown element keeps a tuple",
			in:   obj(map[string]cty.Value{"list": cty.TupleVal([]cty.Value{cty.DynamicVal, cty.StringVal("2")})}),
			want: obj(map[string]cty.Value{"list": cty.TupleVal([]cty.Value{cty.DynamicVal, cty.NumberIntVal(2)})}),
		},
		{
			name: "unknown nested deep",
			in:   obj(map[string]cty.Value{"config": obj(map[string]cty.Value{"port": cty.UnknownVal(cty.Number)})}),
			want: obj(map[string]cty.Value{"config": obj(map[string]cty.Value{"port": cty.UnknownVal(cty.Number)})}),
		},
		{
			name: "marked scalar keeps its mark",
			in:   obj(map[string]cty.Value{"count": secret(cty.StringVal("42"))}),
			want: obj(map[string]cty.Value{"count": secret(cty.NumberIntVal(42))}),
		},
		{
			name: "marked object keeps its mark, and so do its parts",
			in: secret(obj(map[string]cty.Value{
				"count":  cty.StringVal("1"),
				"config": obj(map[string]cty.Value{"port": secret(cty.StringVal("2"))}),
			})),
			want: secret(obj(map[string]cty.Value{
				"count":  cty.NumberIntVal(1),
				"config": obj(map[string]cty.Value{"port": secret(cty.NumberIntVal(2))}),
			})),
		},
		{
			name: "marked JSON string becomes a marked object",
			in:   obj(map[string]cty.Value{"config": secret(cty.StringVal(`{"port": 1}`))}),
			want: obj(map[string]cty.Value{"config": secret(obj(map[string]cty.Value{"port": cty.NumberIntVal(1)}))}),
		},
		{
			name: "marked list element",
			in:   obj(map[string]cty.Value{"tags": cty.TupleVal([]cty.Value{secret(cty.NumberIntVal(1)), cty.StringVal("b")})}),
			want: obj(map[string]cty.Value{"tags": cty.ListVal([]cty.Value{secret(cty.StringVal("1")), cty.StringVal("b")})}),
		},
		{
			name:     "a sensitive value is never quoted",
			in:       obj(map[string]cty.Value{"count": secret(cty.StringVal("hunter2"))}),
			want:     obj(map[string]cty.Value{"count": secret(cty.StringVal("hunter2"))}),
			problems: []string{`count: must be an integer, got string (sensitive)`},
		},
		{
			name:     "nor is a value inside a sensitive object",
			in:       secret(obj(map[string]cty.Value{"count": cty.StringVal("hunter2")})),
			want:     secret(obj(map[string]cty.Value{"count": cty.StringVal("hunter2")})),
			problems: []string{`count: must be an integer, got string (sensitive)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := s.Coerce(tt.in)
			if !got.RawEquals(tt.want) {
				t.Errorf("Coerce:\n got  %#v\n want %#v", got, tt.want)
			}
			if ps := strs(problems); !slices.Equal(ps, tt.problems) {
				t.Errorf("problems:\n got  %q\n want %q", ps, tt.problems)
			}
		})
	}
}

// strs renders problems as their String forms, nil for none.
func strs(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
