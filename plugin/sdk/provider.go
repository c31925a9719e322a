package sdk

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// provider serves the Provider service for one Plugin. Everything but hosts and running is
// read-only after newProvider, so RPCs run concurrently without locks.
type provider struct {
	pluginv1.UnimplementedProviderServer

	plugin   Plugin
	tasks    map[string]TaskDef
	triggers map[string]TriggerDef
	schema   *pluginv1.GetSchemaResponse

	hosts   hosts
	running inFlight
	// logWindow is how long a call's log lines may wait for its answer (logBatch).
	logWindow time.Duration
}

// newProvider indexes p, which p.check has accepted.
func newProvider(p Plugin) *provider {
	pr := &provider{
		logWindow: batchWindow,
		plugin:    p,
		tasks:     map[string]TaskDef{},
		triggers:  map[string]TriggerDef{},
		schema: &pluginv1.GetSchemaResponse{
			Name:            p.Name,
			Version:         p.Version,
			Tasks:           map[string]*pluginv1.TaskSchema{},
			Triggers:        map[string]*pluginv1.TriggerSchema{},
			ConfigSchema:    p.ConfigSchema,
			ProtocolVersion: ProtocolVersion,
			ExecuteStream:   true, // execute.go
		},
	}
	for _, t := range p.Tasks {
		pr.tasks[t.name] = t
		pr.schema.Tasks[t.name] = &pluginv1.TaskSchema{
			Description: t.description, InputSchema: t.inputSchema, OutputSchema: t.outputSchema,
		}
	}
	for _, t := range p.Triggers {
		pr.triggers[t.name] = t
		pr.schema.Triggers[t.name] = &pluginv1.TriggerSchema{Description: t.description, PayloadSchema: t.payloadSchema}
	}
	return pr
}

// GetSchema describes the plugin; the answer never changes.
func (p *provider) GetSchema(context.Context, *pluginv1.GetSchemaRequest) (*pluginv1.GetSchemaResponse, error) {
	return p.schema, nil
}

// Configure checks a plugin block's config with Plugin.Configure.
func (p *provider) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return &pluginv1.ConfigureResponse{Diagnostics: diagnosticsProto([]Diagnostic{{Summary: "Invalid config", Detail: err.Error()}})}, nil
	}
	if p.plugin.Configure == nil {
		return &pluginv1.ConfigureResponse{}, nil
	}
	diags := protectDiagnostics("Configure", func() []Diagnostic {
		return p.plugin.Configure(ctx, cfg, NewUnknowns(req.UnknownPaths...))
	})
	return &pluginv1.ConfigureResponse{Diagnostics: diagnosticsProto(diags)}, nil
}

// Running says which of the given calls have a handler still running, in the order asked.
func (p *provider) Running(_ context.Context, req *pluginv1.RunningRequest) (*pluginv1.RunningResponse, error) {
	return &pluginv1.RunningResponse{CallIds: p.running.which(req.CallIds)}, nil
}

// inFlight is the set of calls whose handler has not returned yet, whether or not the host
// still waits for it: Fuscia kills a plugin whose handler outlives a deadline by too much.
type inFlight struct {
	mu    sync.Mutex     // guards calls
	calls map[string]int // call id -> handlers running under it (the host should use an id once)
}

// start records that a handler for id runs, until the returned func is called.
func (f *inFlight) start(id string) (done func()) {
	if id == "" {
		return func() {}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[id]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.calls[id]--; f.calls[id] <= 0 {
			delete(f.calls, id)
		}
	}
}

func (f *inFlight) which(ids []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, id := range ids {
		if f.calls[id] > 0 {
			out = append(out, id)
		}
	}
	return out
}

// protect calls fn and turns a panic into a fatal error naming what panicked; the stack goes to
// standard error (Fuscia's log), and the process lives on for the other calls.
func protect[R any](what string, fn func() (R, error)) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			msg := what + " panicked: " + panicMessage(p)
			fmt.Fprintf(os.Stderr, "%s\n%s", msg, debug.Stack())
			err = &Error{Kind: KindFatal, Message: msg}
		}
	}()
	return fn()
}

// protectDiagnostics calls a plan-time check and turns a panic into an error diagnostic.
func protectDiagnostics(what string, fn func() []Diagnostic) []Diagnostic {
	diags, err := protect(what, func() ([]Diagnostic, error) { return fn(), nil })
	if err != nil {
		return []Diagnostic{{Summary: "The plugin failed to check this", Detail: err.Error()}}
	}
	return diags
}

func panicMessage(p any) string {
	switch v := p.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return fmt.Sprint(p)
}

// unknownName says that the plugin has no kind ("task") called name, and what it has.
func unknownName[V any](kind, name string, known map[string]V) string {
	msg := "this plugin has no " + kind + " " + strconv.Quote(name)
	if len(known) == 0 {
		return msg + "; it has no " + kind + "s"
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return msg + "; its " + kind + "s are " + strings.Join(names, ", ")
}
