package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Call is one call of a task or trigger: which node attempt it belongs to, and the way back to
// the host (logs, KV, artifacts). It is valid only while the handler runs: the host refuses its
// requests afterwards.
type Call struct {
	ExecutionID string // empty for a trigger
	Workflow    string
	// Node is the node's address, e.g. "loop.notify/task.send".
	Node   string
	TaskID string
	// Attempt is 1-based.
	Attempt int
	// Iteration is the 0-based iteration of the enclosing loop or for_each; nil outside them.
	Iteration *int
	// State is the state of the task's last Continue result in this attempt, as JSON; nil on an
	// attempt's first call.
	State json.RawMessage
	// Config is the plugin block's evaluated config.
	Config Config
	// Deadline is when the attempt times out, the handler's ctx's deadline; zero when none.
	Deadline time.Time

	host hostRef // the zero hostRef outside Serve: no host
}

// DecodeState decodes c.State into v, as json.Unmarshal does. It reports false, and leaves v
// alone, when there is no state (the first call of an attempt).
func (c *Call) DecodeState(v any) (bool, error) {
	if isNull(c.State) {
		return false, nil
	}
	if err := json.Unmarshal(c.State, v); err != nil {
		return false, fmt.Errorf("decode continue state: %w", err)
	}
	return true, nil
}

// Level is the severity of a log line.
type Level string

// Log levels.
const (
	LevelDebug Level = "debug"
	LevelInfo  Level = "info"
	LevelWarn  Level = "warn"
	LevelError Level = "error"
)

// logTimeout bounds one log line's trip to the host. Logging must not hang a handler, and is
// not tied to the handler's ctx so that a handler can still say why it stops after its deadline.
const logTimeout = 5 * time.Second

// Log writes a line to the node's logs (and the trace). The message is fmt.Sprintf(format,
// args...), or format as is when there are no args. Logging never fails the call: a line the
// host does not take goes to standard error, that is Fuscia's log.
func (c *Call) Log(level Level, format string, args ...any) {
	msg := sprintf(format, args...)
	var err error
	if c == nil {
		err = errNoHost
	} else {
		err = c.host.log(level, msg)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "[%s] %s (not in the node's logs: %v)\n", level, msg, err)
	}
}

// Debug logs at LevelDebug.
func (c *Call) Debug(format string, args ...any) { c.Log(LevelDebug, format, args...) }

// Info logs at LevelInfo.
func (c *Call) Info(format string, args ...any) { c.Log(LevelInfo, format, args...) }

// Warn logs at LevelWarn.
func (c *Call) Warn(format string, args ...any) { c.Log(LevelWarn, format, args...) }

// Error logs at LevelError. It does not make an error: see Fatal, Retryable and Validation.
func (c *Call) Error(format string, args ...any) { c.Log(LevelError, format, args...) }

// KV returns the host's key-value store for this call: a task's is scoped to its execution
// (every task of the run sees it, and it outlives the attempt), a trigger's to the workflow's
// trigger, kept across invocations.
func (c *Call) KV() KV { return KV{host: c.host} }

// Artifacts returns the execution's artifact store. A trigger has none: its calls fail.
func (c *Call) Artifacts() Artifacts { return Artifacts{host: c.host} }

// callFromRequest builds the Call of a request.
func callFromRequest(cc *pluginv1.CallContext, config Config, deadline time.Time, host hostRef) *Call {
	c := &Call{Config: config, Deadline: deadline, host: host}
	if cc != nil {
		c.ExecutionID, c.Workflow, c.Node, c.TaskID = cc.ExecutionId, cc.Workflow, cc.Node, cc.TaskId
		c.Attempt = int(cc.Attempt)
		if cc.Iteration != nil {
			i := int(*cc.Iteration)
			c.Iteration = &i
		}
	}
	return c
}

// log sends one log line to the host, or keeps it for the call's answer when the host takes
// lines there.
func (h hostRef) log(level Level, msg string) error {
	if h.batch != nil {
		return h.batch.log(level, msg)
	}
	return h.send(level, msg)
}

// send sends one log line through Host.Log.
func (h hostRef) send(level Level, msg string) error {
	client, err := h.get()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), logTimeout)
	defer cancel()
	_, err = client.Log(ctx, &pluginv1.LogRequest{CallId: h.callID, Level: string(level), Message: msg})
	return err
}
