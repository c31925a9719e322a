package lsp

import (
	"slices"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/lang/query"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/discover"
)

// installed is what lang/query is told is installed for one workflow file: the components of
// the home (-home) and the plugins of the file's search path (./plugins beside it, each
// -plugin-dir, the home's plugins), found as `fuscia validate` finds them.
//
// A plugin's tasks come from the schema it reported, which the plugin manager keeps (in memory
// and in the home's cache) once a check has asked for it: a completion never starts a plugin.
// So a plugin's tasks are known from the first check of a file that declares it on.
type installed struct {
	env     plan.Env // with the plugin manager's digest cache (Server.planEnv)
	plugins *plugin.Manager
	file    string
}

var _ query.Env = installed{}

// Component finds the newest installed version of source that satisfies version.
func (e installed) Component(source, version string) (*query.Package, bool) {
	inst, err := registry.Find(e.env.ComponentsDir(), source, version)
	if err != nil || inst.Parsed == nil {
		return nil, false
	}
	m := inst.Parsed
	p := &query.Package{Source: inst.Source, Version: inst.Version, Description: m.Description}
	for _, name := range sortedKeys(m.Tasks) {
		t := m.Tasks[name]
		p.Tasks = append(p.Tasks, query.TaskInfo{Name: name, Description: t.Description, InputSchema: t.Schema, OutputSchema: t.OutputSchema})
	}
	for _, name := range sortedKeys(m.Triggers) {
		t := m.Triggers[name]
		p.Triggers = append(p.Triggers, query.TaskInfo{Name: name, Description: t.Description, InputSchema: t.Schema})
	}
	return p, true
}

// Plugin finds the binary `fuscia validate` would run for a plugin block, and its schema when
// a check has fetched it.
func (e installed) Plugin(source, version string) (*query.Package, bool) {
	bin, err := discover.Find(e.env.PluginSearchPath(e.file), source, version)
	if err != nil {
		return nil, false
	}
	digest, err := e.env.Digests.Digest(bin.Path)
	if err != nil {
		return nil, false
	}
	s := e.plugins.CachedSchema(plugin.Target{Name: source, Path: bin.Path, Digest: digest, Version: bin.Version})
	if s == nil {
		return &query.Package{Source: source, Version: bin.Version}, true
	}
	p := &query.Package{Source: s.Name, Version: s.Version}
	for _, name := range sortedKeys(s.Tasks) {
		t := s.Tasks[name]
		p.Tasks = append(p.Tasks, query.TaskInfo{Name: name, Description: t.Description, InputSchema: t.Input, OutputSchema: t.Output})
	}
	for _, name := range sortedKeys(s.Triggers) {
		t := s.Triggers[name]
		// A trigger's payload is what it gives the workflow: its output.
		p.Triggers = append(p.Triggers, query.TaskInfo{Name: name, Description: t.Description, OutputSchema: t.Payload})
	}
	return p, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// planEnv is Config.Env with the plugin manager's digest cache, so that neither a check nor a
// completion reads a plugin binary of many megabytes again while it is unchanged.
func (s *Server) planEnv() plan.Env {
	env := s.cfg.Env
	if env.Digests == nil {
		env.Digests = s.plugins.Digests()
	}
	return env
}
