package engine

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/jsonenc"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/schema"
)

// redactedJSON is what a sensitive value becomes in the journal, the same marker plan -json uses.
var redactedJSON = json.RawMessage(`{"sensitive":true}`)

// wireJSON encodes a wholly known value as JSON for a task, secrets included: this is the one
// place where sensitive values are deliberately unmarked, because the task must receive them.
func wireJSON(v cty.Value) (json.RawMessage, error) {
	uv, _ := v.UnmarkDeep()
	b, _, ok := appendJSON(nil, uv)
	if len(b) > MaxValueJSON {
		return nil, errValueTooLarge
	}
	if ok {
		return b, nil
	}
	if err := checkJSONSize(uv); err != nil {
		return nil, err
	}
	x, err := schema.ToJSON(uv)
	if err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// errValueTooLarge is the error of a value past MaxValueJSON.
var errValueTooLarge = fmt.Errorf("the value is more than %d MiB written out as JSON; make it smaller, or pass large data as an artifact", MaxValueJSON>>20)

// checkJSONSize refuses a value past MaxValueJSON written out, measured within the bound, before
// the long way (any, then encoding/json) writes it: a value small in memory can be gigabytes
// written out (a setproduct over a payload's string repeats it 100,000 times), and one webhook
// took serve out of memory encoding it. appendJSON, the usual way, stops at the bound itself.
func checkJSONSize(v cty.Value) error {
	if funcs.JSONSize(v, MaxValueJSON) > MaxValueJSON {
		return errValueTooLarge
	}
	return nil
}

// MaxValueJSON bounds a task's input written out as JSON (docs/reference/language.md,
// "Limits"): far more than an input needs (a node's output is 10 MiB by default), far less
// than a machine has.
const MaxValueJSON = 128 << 20

// maxJournaledInput bounds the input an attempt_started entry holds (docs/state.md): a
// larger one is journaled as {"truncated": true, "bytes": n}. The input is there to be shown
// (the API's node view); a run's state never needs it, since a resume evaluates it again.
const maxJournaledInput = 64 << 10

// journaledInput is a task's input as its attempt_started entry holds it: wire, the JSON the
// task gets, when no part of it is sensitive; else v's sensitive parts (sensitive holds their
// pointers) as {"sensitive": true}, exactly as a sensitive output is journaled; and
// {"truncated": true, "bytes": n} when that is over maxJournaledInput. The store's scrubber
// goes over it like over an output (Engine.append).
func journaledInput(wire json.RawMessage, v cty.Value, sensitive []string) json.RawMessage {
	out := wire
	if len(sensitive) > 0 {
		b, _, err := journalJSON(v)
		if err != nil {
			return nil // not shown; nothing the task gets is lost
		}
		out = b
	}
	if len(out) > maxJournaledInput {
		return marshal(map[string]any{"truncated": true, "bytes": len(out)})
	}
	return out
}

// journalJSON encodes a value for the journal and for display: sensitive parts become
// {"sensitive": true}. redacted reports whether any part did.
func journalJSON(v cty.Value) (out json.RawMessage, redacted bool, err error) {
	if v == cty.NilVal {
		return json.RawMessage("null"), false, nil
	}
	b, redacted, ok := appendJSON(nil, v)
	if len(b) > MaxValueJSON {
		return nil, false, errValueTooLarge
	}
	if ok {
		return b, redacted, nil
	}
	if err := checkJSONSize(v); err != nil {
		return nil, false, err
	}
	x, redacted, err := redactToJSON(v)
	if err != nil {
		return nil, false, err
	}
	b, err = json.Marshal(x)
	return b, redacted, err
}

// appendJSON appends v as journalJSON's long way encodes it (redactToJSON, then encoding/json):
// a marked part is {"sensitive": true}, and redacted says whether there was one. It takes the
// usual values (strings, bools, whole numbers, objects, maps and lists of them); for anything
// else (another number, an unknown value) ok is false and the long way decides, so that the
// bytes and the errors stay its own. An input and an output went through any and reflection for
// every attempt: 3-4% of a webhook run's CPU (docs/performance.md, issue 20 item 4, session 24).
// TestAppendJSONMatches holds it to the long way.
func appendJSON(b []byte, v cty.Value) (out []byte, redacted, ok bool) {
	if v.IsMarked() {
		return append(b, redactedJSON...), true, true
	}
	if !v.IsKnown() {
		return b, false, false
	}
	if v.IsNull() {
		return append(b, "null"...), false, true
	}
	switch ty := v.Type(); {
	case ty == cty.String:
		return jsonenc.String(b, v.AsString()), false, true
	case ty == cty.Bool:
		return strconv.AppendBool(b, v.True()), false, true
	case ty == cty.Number:
		i, acc := v.AsBigFloat().Int64()
		if acc != big.Exact {
			return b, false, false
		}
		return strconv.AppendInt(b, i, 10), false, true
	case ty.IsObjectType() || ty.IsMapType(), ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		// The elements in cty's order: an object's and a map's sorted by name, as encoding/json
		// sorts a map's keys.
		object := ty.IsObjectType() || ty.IsMapType()
		open, end := byte('['), byte(']')
		if object {
			open, end = '{', '}'
		}
		b = append(b, open)
		first := true
		for it := v.ElementIterator(); it.Next(); {
			if len(b) > MaxValueJSON {
				// Past the bound: the callers refuse the value (errValueTooLarge) without
				// writing the rest, which can be gigabytes of references to one string.
				return b, redacted, true
			}
			k, ev := it.Element()
			if !first {
				b = append(b, ',')
			}
			first = false
			if object {
				b = append(jsonenc.String(b, k.AsString()), ':')
			}
			var r bool
			if b, r, ok = appendJSON(b, ev); !ok {
				return b, false, false
			}
			redacted = redacted || r
		}
		return append(b, end), redacted, true
	}
	return b, false, false
}

func redactToJSON(v cty.Value) (any, bool, error) {
	if v.IsMarked() {
		return map[string]any{"sensitive": true}, true, nil
	}
	if !v.IsKnown() {
		return nil, false, fmt.Errorf("value is not known")
	}
	if v.IsNull() {
		return nil, false, nil
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType() || ty.IsMapType():
		out := make(map[string]any, v.LengthInt())
		any := false
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			x, r, err := redactToJSON(ev)
			if err != nil {
				return nil, false, err
			}
			any = any || r
			out[k.AsString()] = x
		}
		return out, any, nil
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		any := false
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			x, r, err := redactToJSON(ev)
			if err != nil {
				return nil, false, err
			}
			any = any || r
			out = append(out, x)
		}
		return out, any, nil
	}
	x, err := schema.ToJSON(v)
	return x, false, err
}

// fromJSON decodes JSON into a cty value, keeping numbers exact.
func fromJSON(raw json.RawMessage) (cty.Value, error) {
	if len(raw) == 0 {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	return schema.ParseJSON(raw)
}

// nullValue is the output of a node that produced none (skipped, failed, cancelled).
var nullValue = cty.NullVal(cty.DynamicPseudoType)

// keyJSON is the JSON of an iteration key: a number for lists, a string for maps.
func keyJSON(k cty.Value) json.RawMessage {
	b, err := wireJSON(k)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// items splits a for_each value into keys and values, in iteration order (docs/reference/language.md: lists by
// position, maps in key order).
func items(v cty.Value) (keys, vals []cty.Value, err error) {
	v, marks := v.Unmark()
	if v.IsNull() || !v.IsKnown() {
		return nil, nil, fmt.Errorf("for_each is %s", map[bool]string{true: "null", false: "not known"}[v.IsNull()])
	}
	ty := v.Type()
	switch {
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		i := 0
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			keys = append(keys, cty.NumberIntVal(int64(i)))
			vals = append(vals, ev.WithMarks(marks))
			i++
		}
	case ty.IsMapType() || ty.IsObjectType():
		m := v.AsValueMap()
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			keys = append(keys, cty.StringVal(k))
			vals = append(vals, m[k].WithMarks(marks))
		}
	default:
		return nil, nil, fmt.Errorf("for_each must be a list, set or map; got %s", ty.FriendlyName())
	}
	if len(keys) > lang.MaxForEachItems {
		return nil, nil, fmt.Errorf("for_each has %d items; the limit is %d", len(keys), lang.MaxForEachItems)
	}
	return keys, vals, nil
}

// collect builds a for_each or loop output: a tuple in item order, or an object by key when the
// keys are strings.
func collect(keys, vals []cty.Value) cty.Value {
	if len(keys) > 0 && keys[0].Type() == cty.String {
		m := make(map[string]cty.Value, len(keys))
		for i, k := range keys {
			m[k.AsString()] = vals[i]
		}
		return cty.ObjectVal(m)
	}
	if len(vals) == 0 {
		return cty.EmptyTupleVal
	}
	return cty.TupleVal(vals)
}

// readOutputs finds the nodes whose output the workflow reads: through a data reference, as a
// join's branch (joins merge outputs), as a loop body's sink (the default loop output), or in an
// output block or a loop's output expression.
func readOutputs(w *lang.Workflow) map[string]bool {
	reads := map[string]bool{}
	exprs := make([]hcl.Expression, 0, len(w.Outputs))
	for _, o := range w.Outputs {
		exprs = append(exprs, o.Value)
	}
	hasDependent := map[string]bool{}
	for _, n := range w.Nodes {
		for _, d := range n.Deps {
			if d.Kinds&lang.DepData != 0 {
				reads[d.Upstream.Name] = true
			}
			if d.Upstream.Loop == n.Addr.Loop {
				hasDependent[d.Upstream.Name] = true
			}
		}
		if n.Join != nil {
			for _, a := range n.After {
				reads[a.Target.Name] = true
			}
		}
		if n.Loop != nil && n.Loop.Output != nil {
			exprs = append(exprs, n.Loop.Output)
		}
	}
	for _, n := range w.Nodes {
		if n.Addr.Loop != "" && !hasDependent[n.Addr.Name] {
			if loop := w.Node(n.Addr.LoopAddr()); loop != nil && loop.Loop.Output == nil {
				reads[n.Addr.Name] = true
			}
		}
	}
	for _, e := range exprs {
		for _, tr := range e.Variables() {
			if len(tr) < 2 {
				continue
			}
			if step, ok := tr[1].(hcl.TraverseAttr); ok {
				reads[step.Name] = true
			}
		}
	}
	return reads
}
