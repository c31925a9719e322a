package schema

import (
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

const validateDoc = `{
	"type": "object",
	"properties": {
		"name":   {"type": "string", "minLength": 2, "maxLength": 5},
		"mode":   {"enum": ["fast", "slow"]},
		"port":   {"type": "integer", "minimum": 1, "maximum": 65535},
		"ratio":  {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"code":   {"type": "string", "pattern": "^[A-Z]+$"},
		"args":   {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": true},
		"inner":  {"$ref": "#/$defs/inner"},
		"body":   {"anyOf": [{"type": "string"}, {"type": "object", "required": ["a"]}]},
		"shape":  {"oneOf": [
			{"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
			{"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"]}
		]},
		"pair":   {"const": {"a": 1, "b": 2}}
	},
	"required": ["name"],
	"additionalProperties": false,
	"$defs": {
		"inner": {
			"type": "object",
			"properties": {"url": {"type": "string"}, "level": {"type": "integer"}},
			"required": ["url", "level"],
			"additionalProperties": false
		}
	}
}`

func TestValidate(t *testing.T) {
	s := mustCompile(t, validateDoc)
	name := cty.StringVal("ok")
	tests := []struct {
		name     string
		in       cty.Value
		problems []string
	}{
		{
			name: "valid",
			in: obj(map[string]cty.Value{
				"name": name, "mode": cty.StringVal("fast"), "port": cty.NumberIntVal(80),
				"args":  cty.ListVal([]cty.Value{cty.StringVal("a")}),
				"inner": obj(map[string]cty.Value{"url": cty.StringVal("u"), "level": cty.NumberIntVal(1)}),
				"body":  obj(map[string]cty.Value{"a": cty.True}),
				"shape": obj(map[string]cty.Value{"kind": cty.StringVal("circle"), "r": cty.NumberIntVal(1)}),
			}),
		},
		{
			name:     "required and unknown attributes",
			in:       obj(map[string]cty.Value{"nmae": name, "zzz": cty.True}),
			problems: []string{`attribute "name" is required`, `unknown attribute "nmae"; did you mean "name"?`, `unknown attribute "zzz"`},
		},
		{
			name: "nested through $ref",
			in:   obj(map[string]cty.Value{"name": name, "inner": obj(map[string]cty.Value{"URL": cty.StringVal("u")})}),
			problems: []string{
				`inner: attribute "level" is required`,
				`inner: attribute "url" is required`,
				`inner: unknown attribute "URL"; did you mean "url"?`,
			},
		},
		{
			name:     "enum",
			in:       obj(map[string]cty.Value{"name": name, "mode": cty.StringVal("medium")}),
			problems: []string{`mode: must be one of "fast", "slow", got string "medium"`},
		},
		{
			name: "bounds",
			in: obj(map[string]cty.Value{
				"name": cty.StringVal("x"), "port": cty.NumberIntVal(0), "ratio": cty.NumberIntVal(1),
				"code": cty.StringVal("abc"), "args": cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b"), cty.StringVal("c"), cty.StringVal("d")}),
			}),
			problems: []string{
				`args: must have at most 3 elements, got 4`,
				`code: must match the pattern "^[A-Z]+$", got string "abc"`,
				`name: must be at least 2 characters long, got 1`,
				`port: must be at least 1, got number 0`,
				`ratio: must be less than 1, got number 1`,
			},
		},
		{
			name:     "type inside array",
			in:       obj(map[string]cty.Value{"name": name, "args": cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.True})}),
			problems: []string{`args[1]: must be a string, got boolean true`},
		},
		{
			name:     "uniqueItems",
			in:       obj(map[string]cty.Value{"name": name, "args": cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("a")})}),
			problems: []string{`args: elements [0] and [1] are equal; elements must be unique`},
		},
		{
			name:     "anyOf where no branch takes the type",
			in:       obj(map[string]cty.Value{"name": name, "body": cty.NumberIntVal(3)}),
			problems: []string{`body: must be a string or an object, got number 3`},
		},
		{
			name:     "anyOf where a branch takes the type",
			in:       obj(map[string]cty.Value{"name": name, "body": cty.EmptyObjectVal}),
			problems: []string{`body: attribute "a" is required`},
		},
		{
			name:     "oneOf reports the closest branch",
			in:       obj(map[string]cty.Value{"name": name, "shape": obj(map[string]cty.Value{"kind": cty.StringVal("square")})}),
			problems: []string{`shape: attribute "side" is required`},
		},
		{
			name:     "const",
			in:       obj(map[string]cty.Value{"name": name, "pair": obj(map[string]cty.Value{"a": cty.NumberIntVal(1)})}),
			problems: []string{`pair: must be {"a":1,"b":2}, got object`},
		},
		{
			name:     "root",
			in:       cty.ListValEmpty(cty.String),
			problems: []string{`must be an object, got array`},
		},
		{
			name:     "null",
			in:       cty.NullVal(cty.DynamicPseudoType),
			problems: []string{`must be an object, got null`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ps := strs(s.Validate(tt.in)); !slices.Equal(ps, tt.problems) {
				t.Errorf("problems:\n got  %q\n want %q", ps, tt.problems)
			}
		})
	}
}

func TestValidateUnknownAndMarked(t *testing.T) {
	s := mustCompile(t, validateDoc)
	name := cty.StringVal("ok")
	secret := func(v cty.Value) cty.Value { return v.Mark("sensitive") }
	tests := []struct {
		name     string
		in       cty.Value
		problems []string
	}{
		{name: "wholly unknown", in: cty.DynamicVal},
		{name: "unknown of object type", in: cty.UnknownVal(cty.EmptyObject)},
		{name: "marked unknown", in: secret(cty.DynamicVal)},
		{
			name: "unknown required attribute counts as present",
			in:   obj(map[string]cty.Value{"name": cty.UnknownVal(cty.String)}),
		},
		{
			name: "unknown nested object with required attributes",
			in:   obj(map[string]cty.Value{"name": name, "inner": cty.DynamicVal}),
		},
		{
			name: "unknown inside a nested object, known failures still reported",
			in: obj(map[string]cty.Value{
				"name":  name,
				"inner": obj(map[string]cty.Value{"url": cty.UnknownVal(cty.String), "level": cty.StringVal("high")}),
			}),
			problems: []string{`inner.level: must be an integer, got string "high"`},
		},
		{
			name: "unknown attribute beside a known failure at the root",
			in:   obj(map[string]cty.Value{"name": cty.UnknownVal(cty.String), "typo": cty.UnknownVal(cty.String)}),
			problems: []string{
				`unknown attribute "typo"`,
			},
		},
		{
			name: "unknown enum value and array elements",
			in: obj(map[string]cty.Value{
				"name": name, "mode": cty.UnknownVal(cty.String),
				"args": cty.TupleVal([]cty.Value{cty.DynamicVal, cty.DynamicVal, cty.StringVal("a")}),
			}),
		},
		{
			name: "anyOf with an unknown part that could match",
			in:   obj(map[string]cty.Value{"name": name, "body": obj(map[string]cty.Value{"a": cty.DynamicVal})}),
		},
		{
			name: "anyOf that is itself unknown",
			in:   obj(map[string]cty.Value{"name": name, "body": cty.DynamicVal}),
		},
		{
			name: "oneOf deciding on an unknown value",
			in:   obj(map[string]cty.Value{"name": name, "shape": obj(map[string]cty.Value{"kind": cty.UnknownVal(cty.String), "side": cty.NumberIntVal(1)})}),
		},
		{
			name: "const over an object with an unknown part",
			in:   obj(map[string]cty.Value{"name": name, "pair": obj(map[string]cty.Value{"a": cty.NumberIntVal(1), "b": cty.DynamicVal})}),
		},
		{
			name:     "marked values are validated but not quoted",
			in:       obj(map[string]cty.Value{"name": name, "mode": secret(cty.StringVal("hunter2")), "code": secret(cty.StringVal("abc"))}),
			problems: []string{`code: must match the pattern "^[A-Z]+$"`, `mode: must be one of "fast", "slow"`},
		},
		{
			name:     "values inside a marked object are not quoted",
			in:       secret(obj(map[string]cty.Value{"name": secret(cty.True), "port": cty.StringVal("p")})),
			problems: []string{`name: must be a string, got boolean (sensitive)`, `port: must be an integer, got string (sensitive)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ps := strs(s.Validate(tt.in)); !slices.Equal(ps, tt.problems) {
				t.Errorf("problems:\n got  %q\n want %q", ps, tt.problems)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	s := mustCompile(t, validateDoc)
	in := obj(map[string]cty.Value{
		"name": cty.StringVal("ok"),
		"port": cty.StringVal("eighty"), // fails coercion: no second problem for its type
		"inner": obj(map[string]cty.Value{
			"url": cty.NumberIntVal(1), "level": cty.StringVal("3"),
		}),
	})
	want := obj(map[string]cty.Value{
		"name": cty.StringVal("ok"),
		"port": cty.StringVal("eighty"),
		"inner": obj(map[string]cty.Value{
			"url": cty.StringVal("1"), "level": cty.NumberIntVal(3),
		}),
	})
	got, problems := s.Check(in)
	if !got.RawEquals(want) {
		t.Errorf("Check:\n got  %#v\n want %#v", got, want)
	}
	wantProblems := []Problem{{Path: "port", Message: `must be an integer, got string "eighty"`, Pointer: "/port"}}
	if !slices.Equal(problems, wantProblems) {
		t.Errorf("problems:\n got  %q\n want %q", problems, wantProblems)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Message: "must be an object, got array"}, "must be an object, got array"},
		{Problem{Path: "headers.Accept", Message: "must be a string, got object"}, "headers.Accept: must be a string, got object"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestPathString(t *testing.T) {
	tests := []struct {
		p    path
		want string
	}{
		{nil, ""},
		{path{keyStep("headers"), keyStep("Accept")}, "headers.Accept"},
		{path{keyStep("args"), indexStep(2)}, "args[2]"},
		{path{keyStep("headers"), keyStep("Content Type")}, `headers["Content Type"]`},
		{path{indexStep(0), keyStep("x-y")}, "[0].x-y"},
		{path{keyStep("1st")}, `["1st"]`},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("path %v: got %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{"not JSON", `{`},
		{"trailing data", `{} {}`},
		{"bad keyword value", `{"type": 3}`},
		{"external reference", `{"$ref": "file:///etc/passwd"}`},
		{"unknown local reference", `{"$ref": "#/$defs/missing"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile("bad", []byte(tt.doc))
			if err == nil {
				t.Fatal("Compile succeeded")
			}
			t.Log(err)
		})
	}
}

func TestRaw(t *testing.T) {
	doc := `{"type": "object"}`
	s := mustCompile(t, doc)
	raw := s.Raw()
	if string(raw) != doc {
		t.Errorf("Raw() = %s, want %s", raw, doc)
	}
	raw[0] = 'x'
	if string(s.Raw()) != doc {
		t.Error("Raw() shares its bytes with the schema")
	}
}

func TestValidateMoreKeywords(t *testing.T) {
	s := mustCompile(t, `{
		"type": "object",
		"properties": {
			"obj":   {"type": "object", "minProperties": 1, "dependentRequired": {"user": ["password"]}},
			"never": false,
			"notx":  {"not": {"const": "x"}},
			"half":  {"type": "number", "multipleOf": 0.5},
			"has1":  {"type": "array", "contains": {"const": 1}},
			"names": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
			"long":  {"type": "string", "maxLength": 3}
		}
	}`)
	in := obj(map[string]cty.Value{
		"obj":   obj(map[string]cty.Value{"user": cty.StringVal("u")}),
		"never": cty.True,
		"notx":  cty.StringVal("x"),
		"half":  cty.NumberFloatVal(0.3),
		"has1":  cty.TupleVal([]cty.Value{cty.NumberIntVal(2)}),
		"names": obj(map[string]cty.Value{"Bad": cty.True}),
		"long":  cty.StringVal(strings.Repeat("é", 70)),
	})
	want := []string{
		`half: must be a multiple of 0.5, got number 0.3`,
		`has1: must contain an element that matches the schema's "contains"`,
		`long: must be at most 3 characters long, got 70`,
		`names: attribute name "Bad" is not allowed`,
		`never: is not allowed`,
		`notx: is not allowed: it matches the schema's "not"`,
		`obj: attribute "password" is required when "user" is set`,
	}
	if ps := strs(s.Validate(in)); !slices.Equal(ps, want) {
		t.Errorf("problems:\n got  %q\n want %q", ps, want)
	}
}

// Schemas written for older drafts still coerce and validate, positional "items" included.
func TestDraft07(t *testing.T) {
	s := mustCompile(t, `{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "array",
		"items": [{"type": "integer"}, {"type": "boolean"}],
		"additionalItems": {"type": "string"}
	}`)
	in := cty.TupleVal([]cty.Value{cty.StringVal("1"), cty.StringVal("true"), cty.NumberIntVal(3), cty.EmptyObjectVal})
	want := cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.True, cty.StringVal("3"), cty.EmptyObjectVal})
	got, ps := s.Check(in)
	if !got.RawEquals(want) {
		t.Errorf("Check:\n got  %#v\n want %#v", got, want)
	}
	if want := []string{"[3]: must be a string, got object"}; !slices.Equal(strs(ps), want) {
		t.Errorf("problems = %q, want %q", strs(ps), want)
	}
}

func TestLongValuesAreShortened(t *testing.T) {
	s := mustCompile(t, `{"type": "integer"}`)
	_, ps := s.Check(cty.StringVal(strings.Repeat("a", 100)))
	want := `must be an integer, got string "` + strings.Repeat("a", 60) + `"…`
	if len(ps) != 1 || ps[0].Message != want {
		t.Errorf("problems = %q, want %q", ps, want)
	}
}

// TestCompileTrusted checks that a schema compiled without the metaschema check (builtins')
// validates exactly as one compiled with it.
func TestCompileTrusted(t *testing.T) {
	checked := mustCompile(t, validateDoc)
	trusted, err := CompileTrusted("test", []byte(validateDoc))
	if err != nil {
		t.Fatal(err)
	}
	name := cty.StringVal("ok")
	for _, in := range []cty.Value{
		obj(map[string]cty.Value{"name": name, "mode": cty.StringVal("fast"), "port": cty.NumberIntVal(80)}),
		obj(map[string]cty.Value{"nmae": name, "zzz": cty.True}),
		obj(map[string]cty.Value{"name": name, "inner": obj(map[string]cty.Value{"URL": cty.StringVal("u")})}),
		obj(map[string]cty.Value{"name": cty.StringVal("x"), "port": cty.NumberIntVal(0), "code": cty.StringVal("abc")}),
		obj(map[string]cty.Value{"name": name, "shape": obj(map[string]cty.Value{"kind": cty.StringVal("square")})}),
		cty.ListValEmpty(cty.String),
	} {
		want, got := strs(checked.Validate(in)), strs(trusted.Validate(in))
		if !slices.Equal(got, want) {
			t.Errorf("%#v: trusted schema's problems %q, checked one's %q", in, got, want)
		}
	}
	if got := strs(trusted.Validate(obj(map[string]cty.Value{"nmae": name}))); len(got) == 0 {
		t.Error("the trusted schema accepted an object without the required name")
	}
}

// TestAnyObjectSchema: a schema that asks for an object and nothing else answers without the
// library (Schema.anyObject) exactly what the library answers for the same constraint.
func TestAnyObjectSchema(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"type": "object"}`: true,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t", "description": "d", "type": "object"}`: true,
		`{"type": "object", "required": ["a"]}`:             false,
		`{"type": "object", "properties": {}}`:              false,
		`{"type": ["object"]}`:                              false,
		`{"type": "string"}`:                                false,
		`{"type": "object", "additionalProperties": false}`: false,
	} {
		if got := mustCompile(t, doc).anyObject; got != want {
			t.Errorf("%s: anyObject %v; want %v", doc, got, want)
		}
	}
	fast := mustCompile(t, `{"type": "object"}`)
	// The same constraint, which the library checks: minProperties 0 holds for every object.
	slow := mustCompile(t, `{"type": "object", "minProperties": 0}`)
	if slow.anyObject {
		t.Fatal("the library's schema took the fast path")
	}
	for _, v := range []cty.Value{
		cty.EmptyObjectVal,
		obj(map[string]cty.Value{"n": cty.NumberIntVal(1), "s": cty.StringVal("<x>")}),
		cty.MapVal(map[string]cty.Value{"a": cty.StringVal("b")}),
		cty.MapValEmpty(cty.String),
		obj(map[string]cty.Value{"later": cty.UnknownVal(cty.String)}),
		obj(map[string]cty.Value{"secret": cty.StringVal("s").Mark("sensitive")}),
		cty.NullVal(cty.EmptyObject),
		cty.NullVal(cty.DynamicPseudoType),
		cty.StringVal("object"),
		cty.NumberIntVal(3),
		cty.TupleVal([]cty.Value{cty.EmptyObjectVal}),
		cty.ListValEmpty(cty.String),
	} {
		_, got := fast.Check(v)
		_, want := slow.Check(v)
		if len(got) != len(want) {
			t.Errorf("%#v: %d problems %v; the library found %d: %v", v, len(got), got, len(want), want)
			continue
		}
		for i := range got {
			if got[i].String() != want[i].String() {
				t.Errorf("%#v: problem %q; the library's %q", v, got[i], want[i])
			}
		}
	}
}
