package schema

import (
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// info is what coercion needs to know about one compiled subschema. Compile computes it for every
// subschema once, so Coerce only reads it.
type info struct {
	// apps is the schema followed by every schema that applies to the same value in place:
	// "$ref", "$dynamicRef", "$recursiveRef" and "allOf", transitively, without repeats.
	apps []*jsonschema.Schema
	// own is the set of types the applying schemas ask for ("type", else the types of
	// "enum"/"const"), zero when they leave the type open.
	own types
	// want is own, or when that is open, the union of the types of the first anyOf/oneOf's
	// branches; it is what an enclosing anyOf compares a value against.
	want types
	// alts are the anyOf and oneOf groups of the applying schemas.
	alts [][]*jsonschema.Schema
	// object is set when some applying schema describes attributes, array when one describes
	// items (or asks for an array), positional when items are described by position.
	object, array, positional bool
}

// index fills s.infos and s.byLocation for every subschema reachable from root.
func (s *Schema) index(root *jsonschema.Schema) {
	var all []*jsonschema.Schema
	var walk func(*jsonschema.Schema)
	walk = func(sch *jsonschema.Schema) {
		if sch == nil {
			return
		}
		if _, seen := s.infos[sch]; seen {
			return
		}
		s.infos[sch] = &info{}
		s.byLocation[sch.Location] = sch
		all = append(all, sch)
		for _, c := range children(sch) {
			walk(c)
		}
	}
	walk(root)

	for _, sch := range all {
		in := s.infos[sch]
		in.apps = applying(sch)
		for _, a := range in.apps {
			if in.own == 0 {
				in.own = schemaTypes(a)
			}
			if len(a.AnyOf) > 0 {
				in.alts = append(in.alts, a.AnyOf)
			}
			if len(a.OneOf) > 0 {
				in.alts = append(in.alts, a.OneOf)
			}
			if len(a.Properties) > 0 || len(a.PatternProperties) > 0 || asSchema(a.AdditionalProperties) != nil {
				in.object = true
			}
			if len(a.PrefixItems) > 0 || a.Items2020 != nil || a.Items != nil || asSchema(a.AdditionalItems) != nil {
				in.array = true
			}
			if _, ok := a.Items.([]*jsonschema.Schema); ok || len(a.PrefixItems) > 0 {
				in.positional = true
			}
		}
		if in.own == 0 {
			for _, a := range in.apps {
				if a.Enum != nil {
					in.own = typesOfValues(a.Enum.Values)
					break
				}
				if a.Const != nil {
					in.own = typesOfValues([]any{*a.Const})
					break
				}
			}
		}
		if in.own.has(tArray) {
			in.array = true
		}
	}

	// want depends on the infos of branches, which may refer back to this schema.
	const visiting = 0xff
	var want func(*jsonschema.Schema) types
	want = func(sch *jsonschema.Schema) types {
		in := s.infos[sch]
		if in.want == visiting {
			return 0
		}
		if in.want != 0 || in.own != 0 || len(in.alts) == 0 {
			if in.want == 0 {
				in.want = in.own
			}
			return in.want
		}
		in.want = visiting
		var u types
		for _, b := range in.alts[0] {
			bt := want(b)
			if bt == 0 {
				u = 0
				break
			}
			u |= bt
		}
		in.want = u
		return u
	}
	for _, sch := range all {
		want(sch)
	}
}

// applying returns sch and the schemas it applies in place to the same value.
func applying(sch *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	var add func(*jsonschema.Schema)
	add = func(a *jsonschema.Schema) {
		if a == nil {
			return
		}
		for _, o := range out {
			if o == a {
				return
			}
		}
		out = append(out, a)
		add(a.Ref)
		if a.DynamicRef != nil {
			add(a.DynamicRef.Ref)
		}
		add(a.RecursiveRef)
		for _, b := range a.AllOf {
			add(b)
		}
	}
	add(sch)
	return out
}

// children lists the subschemas a schema refers to, in any role.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(cs ...*jsonschema.Schema) {
		for _, c := range cs {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
		s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema,
		asSchema(s.AdditionalProperties), asSchema(s.AdditionalItems))
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	add(s.PrefixItems...)
	for _, c := range s.Properties {
		add(c)
	}
	for _, c := range s.PatternProperties {
		add(c)
	}
	for _, c := range s.DependentSchemas {
		add(c)
	}
	for _, d := range s.Dependencies {
		add(asSchema(d))
	}
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		add(items)
	case []*jsonschema.Schema:
		add(items...)
	}
	return out
}

// asSchema returns x when it is a subschema; keywords such as additionalProperties hold either
// a boolean or a schema.
func asSchema(x any) *jsonschema.Schema {
	s, _ := x.(*jsonschema.Schema)
	return s
}
