package query

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang/builtin"
)

// shape is what is known before a run of a value's type: enough to complete its attributes
// and to say its type in a hover. A nil *shape is a value nothing is known of.
type shape struct {
	typ    string  // "string", "number", "bool", "object", "list", "map", "any", "none"
	doc    string  // Markdown, from a schema's description or the language reference
	fields []field // object attributes, sorted by name; open objects have none
	elem   *shape  // list, set and map: the element
}

type field struct {
	name  string
	shape *shape
}

// step is one step of a reference after its root: an attribute or an index.
type step struct {
	name  string // attribute name, or a string key
	index bool   // [N] or [*] or ["key"]
}

var anyShape = &shape{typ: "any"}

// typeString is the shape's type as the reference writes types ("object", "list(string)").
func (s *shape) typeString() string {
	if s == nil {
		return "any"
	}
	switch s.typ {
	case "list", "set", "map":
		return s.typ + "(" + s.elem.typeString() + ")"
	case "list or map":
		return "list or map of " + s.elem.typeString()
	}
	return s.typ
}

// field returns the shape of an attribute, or nil.
func (s *shape) field(name string) *shape {
	if s == nil {
		return nil
	}
	if s.typ == "map" {
		return s.elem
	}
	i := sort.Search(len(s.fields), func(i int) bool { return s.fields[i].name >= name })
	if i < len(s.fields) && s.fields[i].name == name {
		return s.fields[i].shape
	}
	return nil
}

// at follows steps from s; nil when they lead where nothing is known.
func (s *shape) at(steps []step) *shape {
	for _, st := range steps {
		if s == nil {
			return nil
		}
		switch {
		case st.index && s.elem != nil:
			s = s.elem
		case st.index && st.name != "":
			s = s.field(st.name)
		case st.index:
			return nil
		case s.typ == "list or map" && s.elem != nil:
			s = s.elem // a for_each over a map: output.KEY
		default:
			s = s.field(st.name)
		}
	}
	return s
}

func object(doc string, fields ...field) *shape {
	sort.Slice(fields, func(i, j int) bool { return fields[i].name < fields[j].name })
	return &shape{typ: "object", doc: doc, fields: fields}
}

func prim(typ, doc string) *shape { return &shape{typ: typ, doc: doc} }

// builtinOutput is the output of a builtin task (docs/reference/language.md, "Builtin tasks").
// inputs is the task's `inputs` expression, which builtin.transform outputs as it is.
func builtinOutput(name string, inputs hclsyntax.Expression) *shape {
	switch name {
	case "http":
		return object("The response: `{ status, headers, body }`.",
			field{"status", prim("number", "The response's status code.")},
			field{"headers", &shape{typ: "map", elem: prim("string", ""), doc: "The response headers, each name in canonical form mapped to its values joined with `\", \"`."}},
			field{"body", prim("any", "The response body: parsed when its media type is JSON, a string otherwise.")},
		)
	case "sleep":
		return object("`{ slept }`.", field{"slept", prim("string", "The duration slept, in Go's form (`\"1m30s\"`).")})
	case "fail":
		return prim("none", "builtin.fail always fails: it has no output.")
	case "transform":
		s := exprShape(inputs, 0)
		if s == nil {
			s = object("")
		}
		s.doc = "The task's inputs, evaluated."
		return s
	}
	return nil
}

// exprShape is what the syntax of an expression says of its value's type.
func exprShape(e hclsyntax.Expression, depth int) *shape {
	if e == nil || depth > 16 {
		return nil
	}
	switch e := e.(type) {
	case *hclsyntax.ObjectConsExpr:
		var fields []field
		for _, item := range e.Items {
			key := objectKey(item.KeyExpr)
			if key == "" {
				continue
			}
			fs := exprShape(item.ValueExpr, depth+1)
			if fs == nil {
				fs = anyShape
			}
			fields = append(fields, field{key, fs})
		}
		return object("", fields...)
	case *hclsyntax.TupleConsExpr:
		return &shape{typ: "list", elem: anyShape}
	case *hclsyntax.TemplateExpr:
		return prim("string", "")
	case *hclsyntax.LiteralValueExpr:
		return ctyShape(e.Val.Type(), depth+1)
	}
	return nil
}

// objectKey is the key of an object constructor item when it is a name or a literal string.
func objectKey(e hclsyntax.Expression) string {
	if k, ok := e.(*hclsyntax.ObjectConsKeyExpr); ok {
		if kw := hcl.ExprAsKeyword(k.Wrapped); kw != "" {
			return kw
		}
		e = k.Wrapped
	}
	if t, ok := e.(*hclsyntax.TemplateExpr); ok && len(t.Parts) == 1 {
		if lit, ok := t.Parts[0].(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.String && lit.Val.IsKnown() && !lit.Val.IsNull() {
			return lit.Val.AsString()
		}
	}
	return ""
}

// ctyShape converts a cty type (a variable's type constraint).
func ctyShape(t cty.Type, depth int) *shape {
	if depth > 16 {
		return nil
	}
	switch {
	case t == cty.String:
		return prim("string", "")
	case t == cty.Number:
		return prim("number", "")
	case t == cty.Bool:
		return prim("bool", "")
	case t.IsObjectType():
		var fields []field
		for name, at := range t.AttributeTypes() {
			fields = append(fields, field{name, ctyShape(at, depth+1)})
		}
		return object("", fields...)
	case t.IsListType():
		return &shape{typ: "list", elem: ctyShape(t.ElementType(), depth+1)}
	case t.IsSetType():
		return &shape{typ: "set", elem: ctyShape(t.ElementType(), depth+1)}
	case t.IsMapType():
		return &shape{typ: "map", elem: ctyShape(t.ElementType(), depth+1)}
	case t.IsTupleType():
		return &shape{typ: "list", elem: anyShape}
	}
	return anyShape
}

// jsonShape converts a JSON Schema document (a task's output_schema) as far as it says what
// a value holds: types, properties, items and descriptions. nil when raw says nothing.
func jsonShape(raw json.RawMessage) *shape {
	if len(raw) == 0 {
		return nil
	}
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	return jsonSchemaShape(doc, 0)
}

func jsonSchemaShape(x any, depth int) *shape {
	m, ok := x.(map[string]any)
	if !ok || depth > 16 {
		return nil
	}
	s := &shape{typ: "any"}
	if d, ok := m["description"].(string); ok {
		s.doc = d
	}
	var types []string
	switch t := m["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok && str != "null" {
				types = append(types, str)
			}
		}
	}
	if len(types) == 1 {
		switch types[0] {
		case "string", "boolean", "number", "integer", "object", "array":
			s.typ = map[string]string{"string": "string", "boolean": "bool", "number": "number", "integer": "number", "object": "object", "array": "list"}[types[0]]
		}
	} else if len(types) > 1 {
		s.typ = strings.Join(types, " or ")
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if s.typ == "any" {
			s.typ = "object"
		}
		for name, p := range props {
			fs := jsonSchemaShape(p, depth+1)
			if fs == nil {
				fs = &shape{typ: "any"}
			}
			s.fields = append(s.fields, field{name, fs})
		}
		sort.Slice(s.fields, func(i, j int) bool { return s.fields[i].name < s.fields[j].name })
	}
	if s.typ == "list" {
		s.elem = jsonSchemaShape(m["items"], depth+1)
		if s.elem == nil {
			s.elem = anyShape
		}
	}
	if s.typ == "object" && len(s.fields) == 0 {
		if ap, ok := m["additionalProperties"].(map[string]any); ok {
			s.typ, s.elem = "map", jsonSchemaShape(ap, depth+1)
			if s.elem == nil {
				s.elem = anyShape
			}
		}
	}
	return s
}

// schemaProperties returns the properties of a JSON Schema object at a path of property
// names (a task's inputs: `inputs = { headers = { … } }`), with their shapes, sorted.
func schemaProperties(raw json.RawMessage, path []string) []field {
	s := jsonShape(raw)
	for _, p := range path {
		s = s.field(p)
	}
	if s == nil {
		return nil
	}
	return s.fields
}

// builtinInputSchema returns a builtin's input schema document, or nil.
func builtinInputSchema(name string) json.RawMessage {
	s, ok := builtin.InputSchema(name)
	if !ok {
		return nil
	}
	return s.Raw()
}

// schemaDescription is a JSON Schema's top-level description.
func schemaDescription(raw json.RawMessage) string {
	var doc struct {
		Description string `json:"description"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return ""
	}
	return doc.Description
}
