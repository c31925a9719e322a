package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// Secrets in the engine (docs/security.md, "Secrets"):
//
//   - Values read from `secret` blocks and given to sensitive variables carry the
//     lang.Sensitive mark through expressions; journalJSON writes {"sensitive": true} for a
//     marked value (values.go).
//   - The same values are added to the engine's redact.Set, and every entry, log line and
//     event leaves the engine through append, appendLog or emit, which scrub them of every
//     form of those values: text a task made of them (an error message, an echoed header) is
//     caught there.
//   - A task whose inputs hold a sensitive value gets a sensitive output as a whole
//     (exec_task.go): what it derived from the secret in a way no scrubber sees stays out of
//     the journal. resume.go decides what such a task's redacted output becomes on resume.

// readSecrets reads every secret of w from the environment or its file, marked sensitive.
func (e *Engine) readSecrets(w *lang.Workflow) (cty.Value, error) {
	vals := make(map[string]cty.Value, len(w.Secrets))
	for _, s := range w.Secrets {
		v, err := e.readSecret(s)
		if err != nil {
			return cty.NilVal, err
		}
		vals[s.Name] = cty.StringVal(v).Mark(lang.Sensitive)
	}
	if len(vals) == 0 {
		return cty.EmptyObjectVal, nil
	}
	return cty.ObjectVal(vals), nil
}

// SecretError is a secret a run could not read, so the run did not start: the CLI shows it as a
// diagnostic at the secret's block.
type SecretError struct {
	Range hcl.Range // the secret block's
	Err   error
}

// Error says where the block is: the run's start is far from the file.
func (e *SecretError) Error() string {
	if e.Range.Filename == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (the secret block: %s line %d)", e.Err, e.Range.Filename, e.Range.Start.Line)
}

func (e *SecretError) Unwrap() error { return e.Err }

// readSecret reads one secret and adds it to the engine's redact set before anything can use
// it.
func (e *Engine) readSecret(s *lang.Secret) (v string, err error) {
	defer func() {
		if err != nil {
			err = &SecretError{Range: s.DeclRange, Err: err}
		}
	}()
	switch {
	case s.Env != "":
		v = e.cfg.Getenv(s.Env)
		if v == "" {
			return "", fmt.Errorf("secret %q: the environment variable %s is not set; set it, or remove the secret from the workflow", s.Name, s.Env)
		}
	case s.File != "":
		b, err := e.cfg.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("secret %q: cannot read %s: %w", s.Name, s.File, err)
		}
		v = strings.TrimSuffix(string(b), "\n")
		if strings.TrimSpace(v) == "" {
			// An empty secret is no secret: an HMAC key of nothing lets anyone sign.
			return "", fmt.Errorf("secret %q: the file %s is empty; put the secret in it, or remove the secret from the workflow", s.Name, s.File)
		}
	}
	e.cfg.Redact.Add(v)
	return v, nil
}

// addSensitive adds the text of every marked part of v (the values of sensitive variables) to
// the engine's redact set: strings as they are, numbers as JSON writes them.
func (e *Engine) addSensitive(v cty.Value) {
	if !v.ContainsMarked() {
		return
	}
	var texts []string
	var walk func(v cty.Value, marked bool)
	walk = func(v cty.Value, marked bool) {
		if v.IsMarked() {
			marked = true
			v, _ = v.Unmark()
		}
		if !v.IsKnown() || v.IsNull() {
			return
		}
		ty := v.Type()
		switch {
		case ty == cty.String:
			if marked {
				texts = append(texts, v.AsString())
			}
		case ty == cty.Number:
			if marked {
				texts = append(texts, v.AsBigFloat().Text('f', -1))
			}
		case ty.IsCollectionType() || ty.IsObjectType() || ty.IsTupleType():
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				walk(ev, marked)
			}
		}
	}
	walk(v, false)
	e.cfg.Redact.Add(texts...)
}

// append is the engine's one way into the journal: entries are scrubbed of every secret the
// process knows before they are written.
func (e *Engine) append(ctx context.Context, id string, durable bool, entries ...journal.Entry) error {
	if sc := e.cfg.Redact.Scrubber(); sc != nil {
		for i := range entries {
			scrubEntry(sc, &entries[i])
		}
	}
	return e.cfg.Store.Append(ctx, id, durable, entries...)
}

// appendLog journals a node's log line, scrubbed.
func (e *Engine) appendLog(id string, line journal.LogLine) error {
	line.Message = e.cfg.Redact.String(line.Message)
	return e.cfg.Store.Log(id, line)
}

// scrubEntry scrubs every field of an entry that can hold text from a task or a payload. What
// the entry points to is copied, never changed: the run still holds it.
func scrubEntry(sc *redact.Scrubber, en *journal.Entry) {
	en.Output = sc.JSON(en.Output)
	en.Input = sc.JSON(en.Input)
	en.State = sc.JSON(en.State)
	en.Outputs = sc.JSON(en.Outputs)
	en.Key = sc.JSON(en.Key)
	en.Reason = sc.String(en.Reason)
	en.Error = scrubError(sc, en.Error)
	if en.Run != nil {
		info := *en.Run
		info.Vars = sc.JSON(info.Vars)
		info.Trigger.Payload = sc.JSON(info.Trigger.Payload)
		en.Run = &info
	}
}

func scrubError(sc *redact.Scrubber, err *outcome.Error) *outcome.Error {
	if err == nil {
		return nil
	}
	if msg := sc.String(err.Message); msg != err.Message {
		return &outcome.Error{Kind: err.Kind, Message: msg}
	}
	return err
}

// scrubEvent scrubs what an event carries besides the journaled execution (already scrubbed).
func scrubEvent(sc *redact.Scrubber, ev *Event) {
	ev.Error = scrubError(sc, ev.Error)
	ev.Reason = sc.String(ev.Reason)
	ev.Message = sc.String(ev.Message)
	ev.Key = sc.JSON(ev.Key)
}

// sensitivePointers returns the JSON Pointers (RFC 6901) of the sensitive parts of a task's
// input, in no particular order; nil when it has none.
func sensitivePointers(v cty.Value) []string {
	if v == cty.NilVal || !v.ContainsMarked() {
		return nil
	}
	_, marked := v.UnmarkDeepWithPaths()
	var out []string
	for _, pm := range marked {
		if _, ok := pm.Marks[lang.Sensitive]; !ok {
			continue
		}
		var b strings.Builder
		for _, step := range pm.Path {
			b.WriteByte('/')
			switch s := step.(type) {
			case cty.GetAttrStep:
				b.WriteString(pointerEscaper.Replace(s.Name))
			case cty.IndexStep:
				switch {
				case s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull():
					b.WriteString(pointerEscaper.Replace(s.Key.AsString()))
				case s.Key.Type() == cty.Number && s.Key.IsKnown() && !s.Key.IsNull():
					b.WriteString(s.Key.AsBigFloat().Text('f', -1))
				default:
					// A set element has no position: "-" names no member, and the set as a
					// whole is reported by its own pointer's prefix.
					b.WriteString("-")
				}
			}
		}
		out = append(out, b.String())
	}
	if len(out) == 0 {
		// Marked, but with another mark only: nothing sensitive.
		return nil
	}
	return out
}

// pointerEscaper escapes a JSON Pointer reference token.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
