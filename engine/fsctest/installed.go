package fsctest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/discover"
)

// InstalledSchemas is the SchemaSource of what `fuscia validate` would find: components
// installed under env.Home and plugin binaries on env's search path (beside the workflow, each
// -plugin-dir, $FUSCIA_HOME/plugins). A plugin is asked for its schema through plugins (it
// starts the binary once and keeps the answer; nothing runs a task), which the caller owns and
// closes after the test. Nothing is written: give plugins a Manager without a CacheDir to keep
// $FUSCIA_HOME untouched.
//
// ctx bounds the plugins' starts and schema calls: TaskSchemas has no context of its own, as
// the runner asks from deep inside a run. A block that is not installed, a plugin that does
// not start and a schema that does not compile all mean "no schema": the test does not check
// against it, as validate only warns about what is not installed.
func InstalledSchemas(ctx context.Context, env plan.Env, plugins *plugin.Manager) SchemaSource {
	return &installed{ctx: ctx, env: env, plugins: plugins, cache: map[string]*taskSchemas{}}
}

type installed struct {
	ctx     context.Context
	env     plan.Env
	plugins *plugin.Manager

	mu    sync.Mutex
	cache map[string]*taskSchemas // guarded by mu; by block, constraint, search path and task
}

type taskSchemas struct {
	once          sync.Once
	input, output *schema.Schema
}

// TaskSchemas implements SchemaSource. Concurrent calls for the same task look it up once.
func (s *installed) TaskSchemas(w *lang.Workflow, uses lang.Uses) (input, output *schema.Schema) {
	var find func() (in, out json.RawMessage, name string)
	var key string
	switch uses.Kind {
	case lang.UsesComponent:
		c := componentNamed(w, uses.Local)
		if c == nil {
			return nil, nil
		}
		key = "component\x00" + c.Source + "\x00" + c.Version + "\x00" + uses.Name
		find = func() (json.RawMessage, json.RawMessage, string) { return s.componentTask(c, uses.Name) }
	case lang.UsesPlugin:
		p := pluginNamed(w, uses.Local)
		if p == nil {
			return nil, nil
		}
		// The search path starts beside the workflow, so the same block in two directories
		// may find two binaries.
		key = "plugin\x00" + filepath.Dir(w.Filename) + "\x00" + p.Source + "\x00" + p.Version + "\x00" + uses.Name
		find = func() (json.RawMessage, json.RawMessage, string) { return s.pluginTask(w, p, uses.Name) }
	default:
		return nil, nil
	}
	s.mu.Lock()
	ts, ok := s.cache[key]
	if !ok {
		ts = &taskSchemas{}
		s.cache[key] = ts
	}
	s.mu.Unlock()
	ts.once.Do(func() {
		in, out, name := find()
		ts.input, ts.output = compile(name+" input", in), compile(name+" output", out)
	})
	return ts.input, ts.output
}

// componentTask is the raw input and output schemas of task of component block c, as the
// newest installed version matching its constraint declares them.
func (s *installed) componentTask(c *lang.Component, task string) (in, out json.RawMessage, name string) {
	inst, err := registry.Find(s.env.ComponentsDir(), c.Source, c.Version)
	if err != nil || inst.Parsed == nil {
		return nil, nil, ""
	}
	t, ok := inst.Parsed.Tasks[task]
	if !ok {
		return nil, nil, ""
	}
	return t.Schema, t.OutputSchema, "component " + inst.Ref() + " task " + task
}

// pluginTask is the raw input and output schemas of task of plugin block p, as the binary
// found for it reports them.
func (s *installed) pluginTask(w *lang.Workflow, p *lang.Plugin, task string) (in, out json.RawMessage, name string) {
	if s.plugins == nil {
		return nil, nil, ""
	}
	bin, err := discover.Find(s.env.PluginSearchPath(w.Filename), p.Source, p.Version)
	if err != nil {
		return nil, nil, ""
	}
	digest, err := s.plugins.Digests().Digest(bin.Path)
	if err != nil {
		return nil, nil, ""
	}
	sch, err := s.plugins.Schema(s.ctx, plugin.Target{Name: p.Name, Path: bin.Path, Digest: digest, Version: bin.Version})
	if err != nil {
		return nil, nil, ""
	}
	t, ok := sch.Tasks[task]
	if !ok {
		return nil, nil, ""
	}
	return t.Input, t.Output, "plugin " + sch.Name + " task " + task
}

// compile compiles a raw schema; nil for none and for one that does not compile (the
// component's install or the plugin's own tests are where that is reported).
func compile(name string, raw json.RawMessage) *schema.Schema {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	s, err := schema.Compile(name, raw)
	if err != nil {
		return nil
	}
	return s
}

func componentNamed(w *lang.Workflow, local string) *lang.Component {
	for _, c := range w.Components {
		if c.Name == local && !c.Invalid {
			return c
		}
	}
	return nil
}

func pluginNamed(w *lang.Workflow, local string) *lang.Plugin {
	for _, p := range w.Plugins {
		if p.Name == local && !p.Invalid {
			return p
		}
	}
	return nil
}
