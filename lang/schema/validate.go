package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/zclconf/go-cty/cty"
)

// Validate checks v against the schema and returns its problems sorted by path. It does not
// coerce: call Check for what a task's input goes through.
//
// Unknown values are never reported: a wholly unknown v validates, an unknown required
// attribute counts as present, and every failure located at or under an unknown value is
// dropped, as are failures of keywords that look at a whole value (enum, const, not,
// uniqueItems, contains, oneOf) on a value with unknown parts. The exception is "if": a
// condition that depends on an unknown part is decided as if that part were null, so the
// branch it picks may report a failure the final value would not have.
//
// Marked values are validated by their content, but no message quotes them.
func (s *Schema) Validate(v cty.Value) []Problem {
	return render(s.validate(v))
}

// Check coerces v (see Coerce) and then validates the result (see Validate). Validation
// problems at or under a value that could not be coerced are left out, since the coercion
// problem already says what is wrong there. It returns the coerced value, which is what the
// task should receive.
func (s *Schema) Check(v cty.Value) (cty.Value, []Problem) {
	c := coercer{s: s}
	out, _ := c.coerce(v, s.root, make(path, 0, pathCap), false)
	ps := c.problems
	failed := len(ps)
outer:
	for _, p := range s.validate(out) {
		for _, f := range ps[:failed] {
			if p.at.within(f.at) {
				continue outer
			}
		}
		ps = append(ps, p)
	}
	return out, render(ps)
}

func (s *Schema) validate(v cty.Value) []problem {
	if !v.IsKnown() {
		return nil
	}
	if s.anyObject && !v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil // what the library would answer, without converting the value for it
	}
	r := reporter{s: s}
	r.doc = r.toDoc(v, make(path, 0, pathCap))
	err := s.root.Validate(r.doc)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []problem{{msg: err.Error()}}
	}
	return r.collect(verr)
}

// reporter turns one validation's error tree into problems.
type reporter struct {
	s   *Schema
	doc any // the value as validated, unknown values replaced by null
	// unknown and sensitive are the paths of unknown and of marked values inside doc.
	unknown, sensitive []path
}

// capsule stands in for a cty capsule value, which has no JSON form; the validator rejects it.
type capsule struct{ name string }

// toDoc converts v to the form the validator reads, noting unknown and marked values.
// Unknown values become null: whatever null fails is located at the unknown value and dropped.
func (r *reporter) toDoc(v cty.Value, at path) any {
	if !v.IsKnown() {
		r.unknown = append(r.unknown, slices.Clone(at))
		return nil
	}
	if v.IsMarked() {
		v, _ = v.Unmark()
		r.sensitive = append(r.sensitive, slices.Clone(at))
	}
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Bool:
		return v.True()
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInf() {
			return capsule{"infinity"}
		}
		return json.Number(bigText(bf))
	case ty.IsObjectType() || ty.IsMapType():
		out := make(map[string]any, v.LengthInt())
		eachAttr(v, func(name string, ev cty.Value) {
			out[name] = r.toDoc(ev, append(at, keyStep(name)))
		})
		return out
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			out = append(out, r.toDoc(ev, append(at, indexStep(i))))
		}
		return out
	default:
		return capsule{ty.FriendlyName()}
	}
}

// collect returns the problems of e that are not explained away by unknown values.
func (r *reporter) collect(e *jsonschema.ValidationError) []problem {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		var out []problem
		for _, c := range e.Causes {
			out = append(out, r.collect(c)...)
		}
		return out
	case *kind.AnyOf:
		return r.alternatives(e)
	case *kind.OneOf:
		if k.Subschemas == nil {
			return r.alternatives(e)
		}
	}
	at := r.pathOf(e.InstanceLocation)
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		at = r.propertyNamesPath(at, k.Property)
	}
	if r.underUnknown(at) {
		return nil
	}
	switch e.ErrorKind.(type) {
	case *kind.Enum, *kind.Const, *kind.Not, *kind.OneOf, *kind.UniqueItems,
		*kind.Contains, *kind.MinContains, *kind.MaxContains:
		// These look at the whole value; its unknown parts (null here) may be why it failed.
		if r.hasUnknownWithin(at) {
			return nil
		}
	}
	return r.leaf(e, at)
}

// alternatives reports an anyOf or oneOf that no branch matched. If some branch fails only
// because of unknown values, it may well match later, so nothing is reported.
func (r *reporter) alternatives(e *jsonschema.ValidationError) []problem {
	at := r.pathOf(e.InstanceLocation)
	if r.underUnknown(at) {
		return nil
	}
	branches := make([][]problem, len(e.Causes))
	for i, c := range e.Causes {
		branches[i] = r.collect(c)
		if len(branches[i]) == 0 {
			return nil
		}
	}
	// When every branch wants another type for the value itself, one message lists them all.
	var union types
	var best []problem
	for _, b := range branches {
		if len(b) == 1 && b[0].want != 0 && comparePaths(b[0].at, at) == 0 {
			union |= b[0].want
			continue
		}
		// The value has the type this branch wants: report the branch that comes closest.
		if best == nil || len(b) < len(best) {
			best = b
		}
	}
	if best != nil {
		return best
	}
	return []problem{{at: at, want: union, msg: "must be " + union.String() + ", got " + r.describe(at)}}
}

// leaf turns one failed keyword into problems.
func (r *reporter) leaf(e *jsonschema.ValidationError, at path) []problem {
	one := func(format string, args ...any) []problem {
		return []problem{{at: at, msg: fmt.Sprintf(format, args...)}}
	}
	sensitive := r.isSensitive(at)
	got := ""
	if !sensitive {
		got = ", got " + r.describe(at)
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		want := typesFromNames(k.Want)
		return []problem{{at: at, want: want, msg: "must be " + want.String() + ", got " + r.describe(at)}}
	case *kind.Required:
		return r.each(at, k.Missing, "attribute %q is required")
	case *kind.DependentRequired:
		return r.each(at, k.Missing, "attribute %q is required when "+strconv.Quote(k.Prop)+" is set")
	case *kind.Dependency:
		return r.each(at, k.Missing, "attribute %q is required when "+strconv.Quote(k.Prop)+" is set")
	case *kind.AdditionalProperties:
		out := make([]problem, 0, len(k.Properties))
		for _, name := range k.Properties {
			msg := fmt.Sprintf("unknown attribute %q", name)
			if guess := suggest(name, r.knownProperties(e.SchemaURL)); guess != "" {
				msg += fmt.Sprintf("; did you mean %q?", guess)
			}
			out = append(out, problem{at: at, msg: msg, attr: name})
		}
		return out
	case *kind.Enum:
		if len(k.Want) == 1 {
			return one("must be %s%s", jsonText(k.Want[0]), got)
		}
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return one("must be one of %s%s", strings.Join(want, ", "), got)
	case *kind.Const:
		return one("must be %s%s", jsonText(k.Want), got)
	case *kind.Format:
		msg := "must be a valid " + formatNoun(k.Want)
		if !sensitive {
			msg += ", got " + r.describe(at)
		}
		if k.Err != nil {
			msg += ": " + k.Err.Error()
		}
		return one("%s", msg)
	case *kind.Minimum:
		return one("must be at least %s%s", ratText(k.Want), got)
	case *kind.Maximum:
		return one("must be at most %s%s", ratText(k.Want), got)
	case *kind.ExclusiveMinimum:
		return one("must be greater than %s%s", ratText(k.Want), got)
	case *kind.ExclusiveMaximum:
		return one("must be less than %s%s", ratText(k.Want), got)
	case *kind.MultipleOf:
		return one("must be a multiple of %s%s", ratText(k.Want), got)
	case *kind.MinLength:
		return one("must be at least %d characters long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return one("must be at most %d characters long, got %d", k.Want, k.Got)
	case *kind.Pattern:
		return one("must match the pattern %q%s", k.Want, got)
	case *kind.MinItems:
		return one("must have at least %d elements, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return one("must have at most %d elements, got %d", k.Want, k.Got)
	case *kind.AdditionalItems:
		return one("has %d elements more than allowed", k.Count)
	case *kind.MinProperties:
		return one("must have at least %d attributes, got %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return one("must have at most %d attributes, got %d", k.Want, k.Got)
	case *kind.UniqueItems:
		return one("elements [%d] and [%d] are equal; elements must be unique", k.Duplicates[0], k.Duplicates[1])
	case *kind.PropertyNames:
		return one("attribute name %q is not allowed", k.Property)
	case *kind.Contains:
		return one("must contain an element that matches the schema's \"contains\"")
	case *kind.FalseSchema:
		return one("is not allowed")
	case *kind.Not:
		return one("is not allowed: it matches the schema's \"not\"")
	case *kind.OneOf:
		return one("matches more than one of the allowed forms (oneOf branches %d and %d)", k.Subschemas[0], k.Subschemas[1])
	case *kind.InvalidJsonValue:
		if c, ok := k.Value.(capsule); ok {
			return one("%s has no JSON form", c.name)
		}
		return one("has no JSON form")
	}
	if sensitive {
		return one("is invalid (%s)", strings.Join(e.ErrorKind.KeywordPath(), "/"))
	}
	// Any other keyword: the library's own English, without its location prefix.
	msg := (&jsonschema.ValidationError{ErrorKind: e.ErrorKind}).Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return one("%s", msg)
}

// each makes one problem per name, so that each missing attribute is its own line.
func (r *reporter) each(at path, names []string, format string) []problem {
	out := make([]problem, 0, len(names))
	for _, n := range names {
		out = append(out, problem{at: at, msg: fmt.Sprintf(format, n)})
	}
	return out
}

// knownProperties lists the attributes the schema at loc declares, through $ref and allOf.
func (r *reporter) knownProperties(loc string) []string {
	sch := r.s.byLocation[loc]
	if sch == nil {
		return nil
	}
	var names []string
	for _, a := range r.s.infos[sch].apps {
		for n := range a.Properties {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// pathOf turns a validator instance location into a path, telling indexes from attribute
// names by the value they step into.
func (r *reporter) pathOf(loc []string) path {
	p := make(path, 0, len(loc))
	cur := r.doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				p = append(p, keyStep(tok))
				cur = nil
				continue
			}
			p = append(p, indexStep(i))
			cur = c[i]
		case map[string]any:
			p = append(p, keyStep(tok))
			cur = c[tok]
		default:
			p = append(p, keyStep(tok))
			cur = nil
		}
	}
	return p
}

// propertyNamesPath works around jsonschema v6.0.3 reporting propertyNames failures with an
// instance location that a later sibling may have overwritten (santhosh-tekuri/jsonschema#269):
// the depth is right, so when exactly one object at that depth has the property, that is the one.
func (r *reporter) propertyNamesPath(reported path, name string) path {
	var found []path
	var walk func(x any, at path)
	walk = func(x any, at path) {
		if len(found) > 1 {
			return
		}
		switch x := x.(type) {
		case map[string]any:
			if len(at) == len(reported) {
				if _, ok := x[name]; ok {
					found = append(found, slices.Clone(at))
				}
				return
			}
			for k, e := range x {
				walk(e, append(at, keyStep(k)))
			}
		case []any:
			if len(at) < len(reported) {
				for i, e := range x {
					walk(e, append(at, indexStep(i)))
				}
			}
		}
	}
	walk(r.doc, nil)
	if len(found) == 1 {
		return found[0]
	}
	return reported
}

// valueAt returns the value of doc at p.
func (r *reporter) valueAt(p path) any {
	cur := r.doc
	for _, s := range p {
		switch c := cur.(type) {
		case []any:
			if s.index < 0 || s.index >= len(c) {
				return nil
			}
			cur = c[s.index]
		case map[string]any:
			cur = c[s.key]
		default:
			return nil
		}
	}
	return cur
}

// underUnknown reports whether p is an unknown value or lies inside one.
func (r *reporter) underUnknown(p path) bool {
	for _, u := range r.unknown {
		if p.within(u) {
			return true
		}
	}
	return false
}

// hasUnknownWithin reports whether some part of the value at p is unknown.
func (r *reporter) hasUnknownWithin(p path) bool {
	for _, u := range r.unknown {
		if u.within(p) {
			return true
		}
	}
	return false
}

// isSensitive reports whether the value at p is marked or lies inside a marked value.
func (r *reporter) isSensitive(p path) bool {
	for _, s := range r.sensitive {
		if p.within(s) {
			return true
		}
	}
	return false
}

// describe names the type of the value at p and shows it when it is short and not sensitive.
func (r *reporter) describe(p path) string {
	x := r.valueAt(p)
	sensitive := r.isSensitive(p)
	var s string
	switch x := x.(type) {
	case nil:
		return "null"
	case string:
		s = "string"
		if !sensitive {
			s += " " + quoteShort(x)
		}
	case json.Number:
		s = "number"
		if !sensitive {
			s += " " + string(x)
		}
	case bool:
		s = "boolean"
		if !sensitive {
			s += " " + strconv.FormatBool(x)
		}
	case map[string]any:
		s = "object"
	case []any:
		s = "array"
	case capsule:
		return x.name
	default:
		s = fmt.Sprintf("%T", x)
	}
	if sensitive {
		s += " (sensitive)"
	}
	return s
}

// quoteShort quotes s, shortened so that a long value does not drown the message.
func quoteShort(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == max {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

// jsonText writes a schema value (from enum or const) as JSON, as a user would write it.
func jsonText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// ratText writes a bound from the schema as a plain number.
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// suggest returns the candidate closest to name when it is close enough to be a likely typo.
func suggest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		d := editDistance(name, c)
		if d < bestDist && d <= max(1, len(c)/3) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions, deletions, substitutions
// and transpositions of adjacent characters each cost one, so "hedaers" is one from "headers".
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
