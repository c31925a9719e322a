package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/fuscia/fuscia/plugin/sdk"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Schema is a plugin's GetSchema answer.
type Schema struct {
	Name            string                   `json:"name"`
	Version         string                   `json:"version"`
	ProtocolVersion int                      `json:"protocol_version"`
	Tasks           map[string]TaskSchema    `json:"tasks"`
	Triggers        map[string]TriggerSchema `json:"triggers"`
	// Config is the JSON Schema of the plugin block's config; nil accepts anything.
	Config json.RawMessage `json:"config_schema,omitempty"`
	// ExecuteStream: the plugin serves ExecuteStream, so task calls go on its streams. A
	// schema cached before the field existed says false: unary calls, as then.
	ExecuteStream bool `json:"execute_stream,omitempty"`
}

// TaskSchema describes one task; nil schemas mean none.
type TaskSchema struct {
	Description string          `json:"description,omitempty"`
	Input       json.RawMessage `json:"input_schema,omitempty"`
	Output      json.RawMessage `json:"output_schema,omitempty"`
}

// TriggerSchema describes one trigger.
type TriggerSchema struct {
	Description string          `json:"description,omitempty"`
	Payload     json.RawMessage `json:"payload_schema,omitempty"`
}

func schemaFrom(r *pluginv1.GetSchemaResponse) *Schema {
	s := &Schema{Name: r.Name, Version: r.Version, ProtocolVersion: int(r.ProtocolVersion),
		Tasks: map[string]TaskSchema{}, Triggers: map[string]TriggerSchema{}, Config: raw(r.ConfigSchema),
		ExecuteStream: r.ExecuteStream}
	for name, t := range r.Tasks {
		s.Tasks[name] = TaskSchema{Description: t.Description, Input: raw(t.InputSchema), Output: raw(t.OutputSchema)}
	}
	for name, t := range r.Triggers {
		s.Triggers[name] = TriggerSchema{Description: t.Description, Payload: raw(t.PayloadSchema)}
	}
	return s
}

func raw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// CachedSchema is t's schema when Schema has fetched it in this process or an earlier one
// cached it on disk; nil otherwise. It never starts the plugin.
func (m *Manager) CachedSchema(t Target) *Schema {
	s := m.known(t.Digest)
	if s == nil || t.Check(s) != nil {
		return nil
	}
	return s
}

// Schema returns t's GetSchema answer, checked against its file (see [Target.Check]). It is
// kept by binary digest, in memory and in the cache directory, so that `validate` needs to
// start a plugin only the first time it sees a binary.
func (m *Manager) Schema(ctx context.Context, t Target) (*Schema, error) {
	s, err := m.Describe(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := t.Check(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Describe returns t's GetSchema answer as the plugin gives it, unchecked: what `plugin list`
// shows, even of a binary whose file name disagrees with it. Cached as Schema is.
func (m *Manager) Describe(ctx context.Context, t Target) (*Schema, error) {
	if s := m.known(t.Digest); s != nil {
		return s, nil
	}
	var s *Schema
	err := m.checkCall(ctx, t, "GetSchema", func(ctx context.Context, p *process, _ string, _ int64) error {
		// A process started for this call fetched the schema already (learnStreams).
		if s = m.known(t.Digest); s != nil {
			return nil
		}
		resp, err := p.provider.GetSchema(ctx, &pluginv1.GetSchemaRequest{})
		if err != nil {
			return err
		}
		p.streams.allow(resp.ExecuteStream)
		s = schemaFrom(resp)
		m.remember(t.Digest, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// known is the schema of the binary with digest d from memory, else from the disk cache (then
// kept in memory too); nil when neither has it.
func (m *Manager) known(d string) *Schema {
	m.mu.Lock()
	s, ok := m.schemas[d]
	m.mu.Unlock()
	if ok {
		return s
	}
	file := m.cacheFile(d)
	if file == "" {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var cached Schema
	if json.Unmarshal(b, &cached) != nil || cached.Tasks == nil {
		return nil
	}
	m.mu.Lock()
	m.schemas[d] = &cached
	m.mu.Unlock()
	return &cached
}

// remember keeps a fetched schema in memory and in the disk cache. The cache only saves a
// start; failing to write it is not worth failing the call.
func (m *Manager) remember(d string, s *Schema) {
	m.mu.Lock()
	m.schemas[d] = s
	m.mu.Unlock()
	file := m.cacheFile(d)
	if file == "" {
		return
	}
	b, err := json.Marshal(s)
	// Private like the home the cache is in (and creates when missing).
	if err != nil || os.MkdirAll(filepath.Dir(file), 0o700) != nil {
		return
	}
	tmp := file + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, file)
	}
}

// cacheFile is where the schema of the binary with digest d is kept.
func (m *Manager) cacheFile(d string) string {
	if m.opts.CacheDir == "" {
		return ""
	}
	return filepath.Join(m.opts.CacheDir, "plugins", strings.ReplaceAll(d, ":", "-")+".json")
}

// Check compares what a plugin reports with what Fuscia knows of it: the plugin protocol it
// speaks must be Fuscia's, and when its file name carries a version (fuscia-plugin-NAME_vX.Y.Z)
// the version it reports must be that one. The reported version is the plugin's version
// everywhere else (lock file, plan, `plugin list`); a file name that says otherwise is refused
// rather than trusted, because discovery picked the binary by that name.
func (t Target) Check(s *Schema) error {
	if s.ProtocolVersion != 0 && s.ProtocolVersion != int(sdk.Handshake.ProtocolVersion) {
		return &Error{Kind: Fatal, Message: fmt.Sprintf("%s speaks plugin protocol %d; Fuscia speaks %d", t, s.ProtocolVersion, sdk.Handshake.ProtocolVersion)}
	}
	if t.Version == "" {
		return nil
	}
	want, err1 := version.NewSemver(t.Version)
	got, err2 := version.NewSemver(s.Version)
	if err := errors.Join(err1, err2); err != nil || !want.Equal(got) {
		return &Error{Kind: Fatal, Message: fmt.Sprintf("%s reports version %q, but its file name says %s; rename the binary or rebuild it", t, s.Version, t.Version)}
	}
	return nil
}
