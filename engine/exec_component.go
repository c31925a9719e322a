package engine

import (
	"encoding/json"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// componentCall is what the calls of a component task need of its block: the block, the
// plan's lock and the evaluated config. It is built once per run and block, on the loop
// goroutine; nil for tasks that are not component tasks.
func (r *Run) componentCall(uses lang.Uses) *ComponentCall {
	if uses.Kind != lang.UsesComponent {
		return nil
	}
	if cc, ok := r.components[uses.Local]; ok {
		return cc
	}
	if r.components == nil {
		r.components = map[string]*ComponentCall{}
	}
	cc := &ComponentCall{}
	r.components[uses.Local] = cc
	for _, b := range r.wf.Components {
		if b.Name == uses.Local {
			cc.Block = b
			break
		}
	}
	if cc.Block == nil {
		cc.Err = outcome.Errorf(outcome.Fatal, "the workflow has no component block %q", uses.Local)
		return cc
	}
	if lock, ok := r.prog.componentLocks()[uses.Local]; ok && lock.Source == cc.Block.Source {
		cc.Version, cc.Digest = lock.Version, lock.Digest
	}
	if cc.Block.Config == nil {
		return cc
	}
	v, err := r.top.eval(cc.Block.Config, cty.NilVal)
	if err != nil {
		cc.Err = err
		return cc
	}
	cc.Config, cc.Err = configValues(uses.Local, v)
	return cc
}

// configValues turns a config object into config_get's values: strings as their bytes,
// anything else as JSON (docs/reference/abi-v1.md).
func configValues(local string, v cty.Value) (map[string][]byte, *outcome.Error) {
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return nil, nil
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return nil, outcome.Errorf(outcome.Validation, "the config of component %q must be an object; got %s", local, v.Type().FriendlyName())
	}
	out := map[string][]byte{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.Type() == cty.String && e.IsKnown() && !e.IsNull() {
			out[k.AsString()] = []byte(e.AsString())
			continue
		}
		raw, err := wireJSON(e)
		if err != nil {
			return nil, outcome.Errorf(outcome.Validation, "the config value %q of component %q cannot be encoded: %v", k.AsString(), local, err)
		}
		out[k.AsString()] = json.RawMessage(raw)
	}
	return out, nil
}
