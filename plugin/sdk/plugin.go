package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/fuscia/fuscia/plugin/internal/transport"
)

// ProtocolVersion is the version of the plugin protocol (proto/fuscia/plugin/v1) this SDK speaks,
// sent in the handshake and in GetSchema.
const ProtocolVersion = 1

// Handshake is the go-plugin handshake of a Fuscia plugin (docs/reference/plugin-protocol.md). The host side uses it too,
// so both ends agree by construction; do not change it.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "FUSCIA_PLUGIN",
	MagicCookieValue: "f7a1c0de-fuscia-plugin",
}

// PluginKey is the name of the only plugin in the go-plugin plugin set.
const PluginKey = "provider"

// MaxMessageSize caps a gRPC message in both directions, on both ends: inputs, outputs and
// artifacts travel in one message each. It is far above the 10 MiB output caps of the
// first-party plugins because JSON can escape a byte into six (\u0000): 2 x 10 MiB of raw
// output may become 120 MiB of JSON.
const MaxMessageSize = transport.MaxMessageSize

// Plugin describes a plugin: what it is called, what it serves and how its config is checked.
type Plugin struct {
	// Name is the plugin's name, e.g. "shell"; the binary is fuscia-plugin-<Name>.
	Name string
	// Version is the plugin's semver, e.g. "0.1.0"; it must match the binary's file name when
	// that carries one (fuscia-plugin-<Name>_v<Version>).
	Version string
	// Tasks and Triggers are what the plugin serves; names must be unique within each list.
	Tasks    []TaskDef
	Triggers []TriggerDef
	// ConfigSchema is the JSON Schema of the plugin block's config; nil accepts any config.
	ConfigSchema json.RawMessage
	// Configure checks the plugin block's config, at plan time (when some values may be unknown:
	// they are null in cfg and listed in unknown) and once per run and block before its first
	// call. Optional.
	Configure func(ctx context.Context, cfg Config, unknown Unknowns) []Diagnostic
}

// check reports what makes p unservable, so that Serve fails at start with a clear message
// rather than when Fuscia first asks.
func (p *Plugin) check() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("the plugin has no Name"))
	}
	if p.Version == "" {
		errs = append(errs, errors.New("the plugin has no Version"))
	}
	if p.ConfigSchema != nil && !json.Valid(p.ConfigSchema) {
		errs = append(errs, errors.New("ConfigSchema is not valid JSON"))
	}
	seen := map[string]bool{}
	for i, t := range p.Tasks {
		if t.err != nil {
			errs = append(errs, fmt.Errorf("Tasks[%d]: %w", i, t.err))
			continue
		}
		if t.name == "" {
			errs = append(errs, fmt.Errorf("Tasks[%d] was not made with Task or TaskWithResult", i))
			continue
		}
		if seen[t.name] {
			errs = append(errs, fmt.Errorf("task %s is listed twice", strconv.Quote(t.name)))
		}
		seen[t.name] = true
	}
	seen = map[string]bool{}
	for i, t := range p.Triggers {
		if t.err != nil {
			errs = append(errs, fmt.Errorf("Triggers[%d]: %w", i, t.err))
			continue
		}
		if t.name == "" {
			errs = append(errs, fmt.Errorf("Triggers[%d] was not made with Trigger", i))
			continue
		}
		if seen[t.name] {
			errs = append(errs, fmt.Errorf("trigger %s is listed twice", strconv.Quote(t.name)))
		}
		seen[t.name] = true
	}
	return errors.Join(errs...)
}
