// Package taskenv is what the Wasm and plugin runtimes share: the KV and artifact scopes a
// call may reach, the check of an answer against its output_schema, and the encoding of a
// block's config.
package taskenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/schema"
)

// ErrNotFound is what ArtifactScope.Read returns for an artifact that does not exist; each
// runtime maps it to its own host's error.
var ErrNotFound = artifact.ErrNotFound

// KVScope is a task's or trigger's key-value state: the keys of one scope of a task.KVStore.
type KVScope struct {
	Store task.KVStore
	Scope string
}

// Get reads key.
func (k KVScope) Get(_ context.Context, key string) ([]byte, bool, error) {
	return k.Store.KVGet(k.Scope, key)
}

// Set writes key.
func (k KVScope) Set(_ context.Context, key string, v []byte) error {
	return k.Store.KVSet(k.Scope, key, v)
}

// Delete removes key.
func (k KVScope) Delete(_ context.Context, key string) error {
	return k.Store.KVDelete(k.Scope, key)
}

// ArtifactScope is the artifacts of one execution.
type ArtifactScope struct {
	Store     artifact.Store
	Execution string
}

// Write stores data and returns its reference as JSON.
func (a ArtifactScope) Write(ctx context.Context, contentType string, data []byte) ([]byte, error) {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	ref, err := a.Store.Put(ctx, a.Execution, contentType, data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ref)
}

// Read reads artifact id; ErrNotFound when there is none.
func (a ArtifactScope) Read(ctx context.Context, id string) ([]byte, error) {
	b, err := a.Store.Get(ctx, a.Execution, id)
	if errors.Is(err, artifact.ErrNotFound) {
		return nil, ErrNotFound
	}
	return b, err
}

// Preview quotes the start of an answer for a message.
func Preview(b []byte) string {
	const max = 200
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

// JSON encodes a value for the wire: marks dropped, artifact references and numbers as the
// engine sends them.
func JSON(v cty.Value) (json.RawMessage, error) {
	uv, _ := v.UnmarkDeep()
	x, err := schema.ToJSON(uv)
	if err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// CheckOutput holds a component's or plugin's answer to the output_schema it declares, as
// Terraform refuses a provider's invalid object at its source: plan type-checks references to
// task.x.output against that schema, so an output that breaks it would otherwise fail far
// downstream, or not at all. An output of success or branch that does not match fails the
// attempt with a fatal error (not retried: the same code gives the same answer) naming what
// produced it and the JSON Pointer of the first violation. An absent output is checked as
// null. A continue's output is intermediate progress and is not checked; the final one is.
//
// what names the producer: `component acme/text@1.0.0 task "count"`. s is nil when the task
// declares no output_schema.
func CheckOutput(res outcome.Result, s *schema.Schema, what string) outcome.Result {
	return CheckOutputInto(res, s, what, nil)
}

// CheckOutputInto is CheckOutput that also hands the output, as the check decoded it
// (schema.DecodeJSON: numbers exact), to into (task.Call.Output) when it was decoded and
// matched, so that the engine converts it (schema.FromJSON) without decoding the same bytes
// again. into is left as it is when there was nothing to check or the output failed the check;
// it may be nil.
func CheckOutputInto(res outcome.Result, s *schema.Schema, what string, into *task.DecodedOutput) outcome.Result {
	if s == nil || (res.Type != outcome.Success && res.Type != outcome.Branch) {
		return res
	}
	doc, err := schema.DecodeJSON(res.Output)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s produced an output that is %v", what, err)
	}
	problems := s.ValidateDoc(doc)
	if len(problems) == 0 {
		if into != nil {
			*into = task.DecodedOutput{Doc: doc, Set: true}
		}
		return res
	}
	return problemResult(problems, what)
}

// problemResult is the fatal result of an output that does not match its output_schema.
func problemResult(problems []schema.Problem, what string) outcome.Result {
	p := problems[0]
	at := p.Pointer
	if at == "" {
		at = "the output itself"
	}
	more := ""
	if n := len(problems) - 1; n == 1 {
		more = " (and 1 more problem)"
	} else if n > 1 {
		more = fmt.Sprintf(" (and %d more problems)", n)
	}
	return outcome.Fail(outcome.Fatal, "%s produced an output that does not match its output_schema: at %s: %s%s", what, at, p.Message, more)
}
