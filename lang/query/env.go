package query

import "encoding/json"

// Env tells the analysis what is installed: the tasks and triggers of components and plugins,
// with their schemas. The language server implements it from the component store and the
// plugin directory; a nil Env knows nothing installed, and completion and hover then say only
// what the file itself says. Methods may be called from several goroutines and should answer
// from memory (they are called while the user types).
type Env interface {
	// Component returns the installed component for a `component` block's source ("org/name")
	// and version constraint ("" for the newest); ok is false when none is installed.
	Component(source, version string) (p *Package, ok bool)
	// Plugin returns the plugin for a `plugin` block's source (the plugin's name) and version
	// constraint; ok is false when none is found.
	Plugin(source, version string) (p *Package, ok bool)
}

// EnvFuncs is an [Env] made of two functions; a nil function finds nothing.
type EnvFuncs struct {
	ComponentFunc func(source, version string) (*Package, bool)
	PluginFunc    func(source, version string) (*Package, bool)
}

// Component calls ComponentFunc.
func (e EnvFuncs) Component(source, version string) (*Package, bool) {
	if e.ComponentFunc == nil {
		return nil, false
	}
	return e.ComponentFunc(source, version)
}

// Plugin calls PluginFunc.
func (e EnvFuncs) Plugin(source, version string) (*Package, bool) {
	if e.PluginFunc == nil {
		return nil, false
	}
	return e.PluginFunc(source, version)
}

// Package is an installed component or plugin as [Env] reports it.
type Package struct {
	// Source and Version name what was found ("acme/stripe", "1.2.0"); shown in hover.
	Source, Version string
	Description     string
	Tasks           []TaskInfo
	Triggers        []TaskInfo
}

// TaskInfo is one task or trigger of a [Package]. The schemas are JSON Schema documents as the
// manifest or the plugin's schema gives them; nil when there is none.
type TaskInfo struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// OutputSchema is a task's output; for a trigger, the payload of the runs it starts
	// (trigger.payload completes from it).
	OutputSchema json.RawMessage
}
