package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fuscia/fuscia/internal/outcome"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Kind classifies a failed call: it is the engine's error kind (internal/outcome), so there
// is one kind type on the host side.
type Kind = outcome.Kind

// Kinds of Error.
const (
	Fatal     = outcome.Fatal
	Timeout   = outcome.Timeout
	Cancelled = outcome.Cancelled
	// Crashed: the plugin process died during the call. Retryable: the next call starts a new
	// process.
	Crashed = outcome.PluginCrashed
)

// Error is a call that did not get an answer from the plugin.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// KindOf returns the Kind of err: Fatal unless err is an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Fatal
}

// Request is one call of a task.
type Request struct {
	Task                 string
	Input, State, Config []byte
	Context              *pluginv1.CallContext
}

// Execute runs one call of a task in t's process, starting the process if needed. env serves
// the plugin's Host requests during the call. A call the plugin answered returns its
// response, whatever result it holds; a call it did not answer returns an *Error.
func (m *Manager) Execute(ctx context.Context, t Target, req Request, env *CallEnv) (*pluginv1.ExecuteResponse, error) {
	var resp *pluginv1.ExecuteResponse
	err := m.call(ctx, t, "task "+req.Task, env, func(ctx context.Context, p *process, id string, deadline int64) error {
		var err error
		resp, err = p.execute(ctx, &pluginv1.ExecuteRequest{
			Context: req.Context, Task: req.Task, Input: req.Input, State: req.State, Config: req.Config,
			CallId: id, HostBrokerId: p.hostBrokerID(), DeadlineUnixNano: deadline, LogsInResponse: true,
		})
		return err
	})
	if err == nil {
		// The lines the plugin kept for its answer come after those it sent through Host.Log
		// (which are delivered by now: the plugin waits for each).
		for _, l := range resp.Logs {
			env.log(l.Level, l.Message)
		}
	}
	return resp, err
}

// TriggerRequest is one invocation of a trigger.
type TriggerRequest struct {
	Trigger       string
	Event, Config []byte
	Context       *pluginv1.CallContext
}

// HandleTrigger invokes a trigger, as Execute runs a task.
func (m *Manager) HandleTrigger(ctx context.Context, t Target, req TriggerRequest, env *CallEnv) (*pluginv1.HandleTriggerResponse, error) {
	var resp *pluginv1.HandleTriggerResponse
	err := m.call(ctx, t, "trigger "+req.Trigger, env, func(ctx context.Context, p *process, id string, deadline int64) error {
		var err error
		resp, err = p.provider.HandleTrigger(ctx, &pluginv1.HandleTriggerRequest{
			Context: req.Context, Trigger: req.Trigger, Event: req.Event, Config: req.Config,
			CallId: id, HostBrokerId: p.hostBrokerID(), DeadlineUnixNano: deadline,
		})
		return err
	})
	return resp, err
}

// Configure checks a plugin block's config; unknown lists the JSON Pointers of values not
// known yet.
func (m *Manager) Configure(ctx context.Context, t Target, config []byte, unknown []string) ([]*pluginv1.Diagnostic, error) {
	var resp *pluginv1.ConfigureResponse
	err := m.checkCall(ctx, t, "Configure", func(ctx context.Context, p *process, _ string, _ int64) error {
		var err error
		resp, err = p.provider.Configure(ctx, &pluginv1.ConfigureRequest{Config: config, UnknownPaths: unknown})
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp.Diagnostics, nil
}

// ValidateInput checks a task's input at plan time.
func (m *Manager) ValidateInput(ctx context.Context, t Target, task string, input, config []byte, unknown []string) ([]*pluginv1.Diagnostic, error) {
	var resp *pluginv1.ValidateInputResponse
	err := m.checkCall(ctx, t, "ValidateInput", func(ctx context.Context, p *process, _ string, _ int64) error {
		var err error
		resp, err = p.provider.ValidateInput(ctx, &pluginv1.ValidateInputRequest{Task: task, Input: input, Config: config, UnknownPaths: unknown})
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp.Diagnostics, nil
}

// checkCall is call for a plan-time RPC, within Options.CheckTimeout: past it the error says
// the plugin did not answer in time (and the process is killed after the grace period, as
// after any deadline).
func (m *Manager) checkCall(ctx context.Context, t Target, what string, rpc func(ctx context.Context, p *process, id string, deadline int64) error) error {
	bounded, cancel := context.WithTimeout(ctx, m.opts.CheckTimeout)
	defer cancel()
	err := m.call(bounded, t, what, nil, rpc)
	var pe *Error
	if err != nil && ctx.Err() == nil && errors.As(err, &pe) && pe.Kind == Timeout {
		return &Error{Kind: Timeout, Message: fmt.Sprintf("%s did not answer %s within %s: a plugin answers its schema and plan-time checks promptly; fix or replace it", t, what, m.opts.CheckTimeout)}
	}
	return err
}

// call runs one RPC on t's process and classifies what went wrong: a dead process is Crashed
// (and forgotten, so the next call restarts it), the caller's deadline is Timeout, its
// cancellation Cancelled. A call given up on is watched: if the plugin is still running it a
// grace period later, the process is killed.
func (m *Manager) call(ctx context.Context, t Target, what string, env *CallEnv, rpc func(ctx context.Context, p *process, id string, deadline int64) error) (err error) {
	// Under a span that records (the engine's attempt span, when tracing is on), the RPC is a
	// span of its own, the process's start included.
	if parent := trace.SpanFromContext(ctx); parent.IsRecording() {
		var span trace.Span
		ctx, span = parent.TracerProvider().Tracer(tracerName).Start(ctx, "plugin "+what, trace.WithAttributes(
			attribute.String("fuscia.plugin", t.Name), attribute.String("rpc.system", "grpc"),
			attribute.String("rpc.service", "fuscia.plugin.v1.Provider")), trace.WithSpanKind(trace.SpanKindClient))
		defer func() {
			if err != nil {
				span.SetStatus(otelcodes.Error, err.Error())
			}
			span.End()
		}()
	}
	p, err := m.process(ctx, t)
	if err != nil {
		if ctx.Err() != nil {
			return ctxError(ctx, t, what)
		}
		return &Error{Kind: Fatal, Message: err.Error()}
	}
	if env == nil {
		env = &CallEnv{}
	}
	id, done := p.host.register(env)
	defer done()
	var deadline int64
	if d, ok := ctx.Deadline(); ok {
		deadline = d.UnixNano()
	}
	err = rpc(ctx, p, id, deadline)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded || nearDeadline(ctx) {
		m.watch(p, id)
		return ctxError(ctx, t, what)
	}
	if status.Code(err) == codes.Unavailable || p.exited() {
		m.forget(p)
		if why := p.killed(); why != "" {
			// Not the plugin's own crash: what it last wrote to stderr is about something else.
			return &Error{Kind: Crashed, Message: fmt.Sprintf("%s: %s was stopped: %s; the next attempt starts the plugin again", t, what, why)}
		}
		msg := fmt.Sprintf("%s crashed during %s: the plugin process exited; the next attempt starts it again", t, what)
		if s := p.stderr.String(); s != "" {
			msg += " (its stderr: " + s + ")"
		}
		return &Error{Kind: Crashed, Message: msg}
	}
	return &Error{Kind: Fatal, Message: fmt.Sprintf("%s: %s: %s", t, what, status.Convert(err).Message())}
}

// tracerName names the spans of plugin calls.
const tracerName = "github.com/fuscia/fuscia/plugin"

// nearDeadline reports whether ctx's deadline has (all but) passed. The plugin's gRPC server
// gets the same deadline and resets the stream when it passes, which can reach us a moment
// before our own timer fires: that is a timeout too, not a broken plugin.
func nearDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < 50*time.Millisecond
}

func ctxError(ctx context.Context, t Target, what string) error {
	if !errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Kind: Timeout, Message: fmt.Sprintf("%s: %s did not finish before its deadline", t, what)}
	}
	return &Error{Kind: Cancelled, Message: fmt.Sprintf("%s: %s was cancelled", t, what)}
}

// runningTimeout bounds the Running question: a plugin too wedged to answer it is killed.
const runningTimeout = 2 * time.Second

// watch kills p unless the call id has returned a grace period from now (docs/reference/plugin-protocol.md: "a
// plugin that does not return within a grace period after its deadline is killed").
func (m *Manager) watch(p *process, id string) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.watchers.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.watchers.Done()
		timer := time.NewTimer(m.opts.GracePeriod)
		defer timer.Stop()
		select {
		case <-m.done:
			return
		case <-timer.C:
		}
		if p.exited() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), runningTimeout)
		defer cancel()
		resp, err := p.provider.Running(ctx, &pluginv1.RunningRequest{CallIds: []string{id}})
		if err == nil && !slices.Contains(resp.CallIds, id) {
			return
		}
		m.opts.Logger.Warn("killing a plugin that did not return from a call within the grace period after its deadline",
			"plugin", p.target.Name, "path", p.target.Path, "grace", m.opts.GracePeriod.String())
		why := fmt.Sprintf("Fuscia killed the plugin process, which also ran a call that did not return within the grace period (%s) after its deadline", m.opts.GracePeriod)
		p.killedFor.Store(&why)
		m.forget(p)
	}()
}
