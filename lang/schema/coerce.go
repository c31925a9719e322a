package schema

import (
	"bytes"
	"encoding/json"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/bounds"
)

// Coerce converts v toward the schema's types, the way a user writing HCL expects:
//
//   - a string becomes a number where the schema says "integer" or "number" ("42", "1.5"),
//     a boolean where it says "boolean" ("true", "false"), and an object or array where it
//     says so and the string holds that JSON;
//   - a number or a boolean becomes a string where the schema says "string";
//   - tuples and sets become lists where the schema describes an array (they stay tuples when
//     their elements end up of different types, or when "prefixItems" describes positions);
//   - attributes and elements are coerced following "properties", "patternProperties",
//     "additionalProperties", "items" and "prefixItems", through "$ref" and "allOf"; for
//     "anyOf" and "oneOf" a value is coerced by the first branch that accepts its type, or
//     else by the first branch it can be converted to.
//
// Unknown values, and unknown parts of known values, are left as they are. Marks (such as the
// sensitive mark of secrets) stay on the values that carried them. A value that cannot be
// coerced is left unchanged and gives a Problem naming both types, like
// `must be an integer, got string "abc"`. Coerce does not check anything else: see Validate.
func (s *Schema) Coerce(v cty.Value) (cty.Value, []Problem) {
	c := coercer{s: s}
	out, _ := c.coerce(v, s.root, make(path, 0, pathCap), false)
	return out, render(c.problems)
}

// coercer carries the problems found by one Coerce call.
type coercer struct {
	s        *Schema
	problems []problem
}

// coerce returns v coerced to sch, and whether anything changed. at is the path of v and
// sensitive tells whether v lies inside a marked value, so its content must not be quoted.
func (c *coercer) coerce(v cty.Value, sch *jsonschema.Schema, at path, sensitive bool) (cty.Value, bool) {
	if sch == nil || !v.IsKnown() || v.IsNull() {
		return v, false
	}
	in := c.s.infos[sch]
	orig := v
	v, marks := v.Unmark()
	sensitive = sensitive || len(marks) > 0
	got := typeOfCty(v)
	if got == 0 {
		return orig, false // capsules have no JSON form; validation reports them
	}

	changed := false
	if !in.own.accepts(got) {
		nv, ok := convert(v, in.own)
		if !ok {
			c.problems = append(c.problems, newProblem(at, mismatch(in.own, v, sensitive)))
			return orig, false
		}
		v, got, changed = nv, typeOfCty(nv), true
	}
	var ch bool
	if got == tObject && in.object {
		v, ch = c.attrs(v, in, at, sensitive)
		changed = changed || ch
	}
	if got == tArray && in.array {
		v, ch = c.items(v, in, at, sensitive)
		changed = changed || ch
	}
	for _, alt := range in.alts {
		v, ch = c.alternative(v, alt, at, sensitive)
		changed = changed || ch
	}
	if !changed {
		return orig, false
	}
	return v.WithMarks(marks), true
}

// attrs coerces the attributes of an object or map. The result is an object, because
// coercion may give attributes of one map different types.
func (c *coercer) attrs(v cty.Value, in *info, at path, sensitive bool) (cty.Value, bool) {
	var out map[string]cty.Value // allocated on the first change only
	eachAttr(v, func(name string, ev cty.Value) {
		sub := append(at, keyStep(name))
		nv, ch := ev, false
		for _, a := range in.apps {
			nv, ch = c.attr(nv, a, name, sub, sensitive, ch)
		}
		if ch && out == nil {
			out = v.AsValueMap()
		}
		if out != nil {
			out[name] = nv
		}
	})
	if out == nil {
		return v, false
	}
	return cty.ObjectVal(out), true
}

// attr coerces the value of attribute name by the subschemas a gives it.
func (c *coercer) attr(v cty.Value, a *jsonschema.Schema, name string, at path, sensitive, changed bool) (cty.Value, bool) {
	var ch bool
	matched := false
	if p, ok := a.Properties[name]; ok {
		v, ch = c.coerce(v, p, at, sensitive)
		changed, matched = changed || ch, true
	}
	for re, p := range a.PatternProperties {
		if re.MatchString(name) {
			v, ch = c.coerce(v, p, at, sensitive)
			changed, matched = changed || ch, true
		}
	}
	if !matched {
		if ap := asSchema(a.AdditionalProperties); ap != nil {
			v, ch = c.coerce(v, ap, at, sensitive)
			changed = changed || ch
		}
	}
	return v, changed
}

// items coerces the elements of a tuple, list or set, and turns tuples and sets into lists
// where the schema describes a homogeneous array.
func (c *coercer) items(v cty.Value, in *info, at path, sensitive bool) (cty.Value, bool) {
	n := v.LengthInt()
	elems := make([]cty.Value, 0, n)
	changed := false
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		sub := append(at, indexStep(i))
		var ch bool
		for _, a := range in.apps {
			if is := itemSchema(a, i); is != nil {
				ev, ch = c.coerce(ev, is, sub, sensitive)
				changed = changed || ch
			}
		}
		elems = append(elems, ev)
	}

	ty := v.Type()
	if in.positional {
		if !changed && ty.IsTupleType() {
			return v, false
		}
		return cty.TupleVal(elems), true
	}
	if ty.IsListType() && !changed {
		return v, false
	}
	if n == 0 {
		return cty.ListValEmpty(cty.DynamicPseudoType), true
	}
	if sameTypes(elems) {
		return cty.ListVal(elems), true
	}
	if !changed && ty.IsTupleType() {
		return v, false
	}
	return cty.TupleVal(elems), true
}

// sameTypes reports whether elems can form a list. Unknown elements of no particular type do
// not count as the list's type, so such a mix stays a tuple.
func sameTypes(elems []cty.Value) bool {
	first := elems[0].Type()
	if first == cty.DynamicPseudoType {
		return false
	}
	for _, e := range elems[1:] {
		if !e.Type().Equals(first) {
			return false
		}
	}
	return true
}

// itemSchema returns the subschema a gives to the element at index i, or nil.
func itemSchema(a *jsonschema.Schema, i int) *jsonschema.Schema {
	if i < len(a.PrefixItems) {
		return a.PrefixItems[i]
	}
	if a.Items2020 != nil {
		return a.Items2020
	}
	switch items := a.Items.(type) {
	case *jsonschema.Schema:
		return items
	case []*jsonschema.Schema:
		if i < len(items) {
			return items[i]
		}
		return asSchema(a.AdditionalItems)
	}
	return nil
}

// alternative coerces v by one of the branches of an anyOf or oneOf: the first whose type
// accepts v as it is, or else the first that v can be converted to without a problem.
func (c *coercer) alternative(v cty.Value, alt []*jsonschema.Schema, at path, sensitive bool) (cty.Value, bool) {
	got := typeOfCty(v)
	for _, b := range alt {
		if c.s.infos[b].want.accepts(got) {
			return c.coerce(v, b, at, sensitive)
		}
	}
	var union types
	for _, b := range alt {
		try := coercer{s: c.s}
		nv, ch := try.coerce(v, b, at, sensitive)
		if len(try.problems) == 0 {
			return nv, ch
		}
		union |= c.s.infos[b].want
	}
	c.problems = append(c.problems, newProblem(at, mismatch(union, v, sensitive)))
	return v, false
}

// convert converts a known, unmarked, non-null value to one of the types in want.
func convert(v cty.Value, want types) (cty.Value, bool) {
	switch v.Type() {
	case cty.String:
		s := v.AsString()
		if want.has(tNumber | tInteger) {
			if n, err := bounds.ParseNumber(s); err == nil && !n.AsBigFloat().IsInf() {
				if want.has(tNumber) || n.AsBigFloat().IsInt() {
					return n, true
				}
			}
		}
		if want.has(tBoolean) {
			switch s {
			case "true":
				return cty.True, true
			case "false":
				return cty.False, true
			}
		}
		if want.has(tObject | tArray) {
			if x, ok := decodeJSON(s); ok && want.has(typeOfJSON(x)) {
				if nv, err := FromJSON(x); err == nil {
					return nv, true
				}
			}
		}
	case cty.Number:
		if want.has(tString) {
			return cty.StringVal(numberText(v)), true
		}
	case cty.Bool:
		if want.has(tString) {
			if v.True() {
				return cty.StringVal("true"), true
			}
			return cty.StringVal("false"), true
		}
	}
	return v, false
}

// decodeJSON decodes s when it holds exactly one JSON object or array.
func decodeJSON(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return x, true
}

// numberText formats a cty number the way HCL does when it turns a number into a string.
func numberText(v cty.Value) string {
	return bigText(v.AsBigFloat())
}

// bigText formats a finite number in plain decimal notation, which is also valid JSON.
func bigText(f *big.Float) string {
	if i, acc := f.Int64(); acc == big.Exact {
		return strconv.FormatInt(i, 10) // the common case, without big's decimal conversion
	}
	return f.Text('f', -1)
}

// mismatch is the message for a value of the wrong type: `must be an integer, got string "abc"`.
func mismatch(want types, v cty.Value, sensitive bool) string {
	return "must be " + want.String() + ", got " + describe(v, sensitive)
}

// describe names the type of a known, unmarked value and, unless it is sensitive, shows it
// when it is short: `string "abc"`, `number 1.5`, `object`.
func describe(v cty.Value, sensitive bool) string {
	if v.IsNull() {
		return "null"
	}
	var b bytes.Buffer
	switch t := typeOfCty(v); {
	case t.has(tString):
		b.WriteString("string")
		if !sensitive {
			b.WriteByte(' ')
			b.WriteString(quoteShort(v.AsString()))
		}
	case t.has(tNumber):
		b.WriteString("number")
		if !sensitive {
			b.WriteByte(' ')
			b.WriteString(numberText(v))
		}
	case t.has(tBoolean):
		b.WriteString("boolean")
		if !sensitive {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatBool(v.True()))
		}
	case t.has(tObject):
		b.WriteString("object")
	case t.has(tArray):
		b.WriteString("array")
	default:
		b.WriteString(v.Type().FriendlyName())
	}
	if sensitive {
		b.WriteString(" (sensitive)")
	}
	return b.String()
}
