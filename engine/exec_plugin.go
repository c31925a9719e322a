package engine

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// pluginCall is what the calls of a plugin task need of its block: the block, the plan's
// lock and the evaluated config. Built once per run and block, on the loop goroutine; nil
// for tasks that are not plugin tasks.
func (r *Run) pluginCall(uses lang.Uses) *PluginCall {
	if uses.Kind != lang.UsesPlugin {
		return nil
	}
	return r.pluginBlock(uses.Local)
}

// pluginBlock is the PluginCall of the workflow's plugin block local.
func (r *Run) pluginBlock(local string) *PluginCall {
	if pc, ok := r.plugins[local]; ok {
		return pc
	}
	if r.plugins == nil {
		r.plugins = map[string]*PluginCall{}
	}
	pc := &PluginCall{Workflow: r.wf.Filename, Config: []byte("{}")}
	r.plugins[local] = pc
	for _, b := range r.wf.Plugins {
		if b.Name == local {
			pc.Block = b
			break
		}
	}
	if pc.Block == nil {
		pc.Err = outcome.Errorf(outcome.Fatal, "the workflow has no plugin block %q", local)
		return pc
	}
	if lock, ok := r.prog.lockedPlugins()[local]; ok && lock.Source == pc.Block.Source {
		pc.Version, pc.Digest = lock.Version, lock.Digest
	}
	if pc.Block.Config == nil {
		return pc
	}
	v, err := r.top.eval(pc.Block.Config, cty.NilVal)
	if err != nil {
		pc.Err = err
		return pc
	}
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return pc
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		pc.Err = outcome.Errorf(outcome.Validation, "the config of plugin %q must be an object; got %s", local, v.Type().FriendlyName())
		return pc
	}
	raw, werr := wireJSON(v)
	if werr != nil {
		pc.Err = outcome.Errorf(outcome.Validation, "the config of plugin %q cannot be encoded: %v", local, werr)
		return pc
	}
	pc.Config = raw
	return pc
}
