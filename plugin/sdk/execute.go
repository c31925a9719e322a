package sdk

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Execute runs one call of a task attempt. Whatever goes wrong, including a panic, is an error
// response; the RPC itself fails only when gRPC does. The response echoes the request's call
// id, by which the host tells a stream's answers apart.
func (p *provider) Execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	resp := p.execute(ctx, req)
	resp.CallId = req.CallId
	return resp, nil
}

// execute is Execute without the call id.
func (p *provider) execute(ctx context.Context, req *pluginv1.ExecuteRequest) *pluginv1.ExecuteResponse {
	t, ok := p.tasks[req.Task]
	if !ok {
		return errorResponse(&Error{Kind: KindValidation, Message: unknownName("task", req.Task, p.tasks)})
	}
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return fatalResponse("task " + strconv.Quote(req.Task) + ": " + err.Error())
	}
	ctx, cancel := withDeadline(ctx, req.DeadlineUnixNano)
	defer cancel()
	deadline, _ := ctx.Deadline()
	host := p.hosts.ref(req.HostBrokerId, req.CallId)
	if req.LogsInResponse {
		host.batch = newLogBatch(p.logWindow, deadline, host.send)
	}
	call := callFromRequest(req.Context, cfg, deadline, host)
	if !isNull(req.State) {
		call.State = req.State
	}

	defer p.running.start(req.CallId)()
	res, err := protect("task "+strconv.Quote(req.Task), func() (Result, error) { return t.run(ctx, call, req.Input) })
	var resp *pluginv1.ExecuteResponse
	if err != nil {
		resp = errorResponse(err)
	} else {
		resp = response(res)
	}
	resp.Logs = host.batch.take()
	return resp
}

// HandleTrigger runs one invocation of a trigger, as Execute runs a task.
func (p *provider) HandleTrigger(ctx context.Context, req *pluginv1.HandleTriggerRequest) (*pluginv1.HandleTriggerResponse, error) {
	t, ok := p.triggers[req.Trigger]
	if !ok {
		return triggerErrorResponse(&Error{Kind: KindValidation, Message: unknownName("trigger", req.Trigger, p.triggers)}), nil
	}
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return triggerErrorResponse(Fatal("trigger %s: %v", strconv.Quote(req.Trigger), err)), nil
	}
	ev, err := parseEvent(req.Event)
	if err != nil {
		return triggerErrorResponse(Fatal("trigger %s: %v", strconv.Quote(req.Trigger), err)), nil
	}
	ctx, cancel := withDeadline(ctx, req.DeadlineUnixNano)
	defer cancel()
	deadline, _ := ctx.Deadline()
	call := callFromRequest(req.Context, cfg, deadline, p.hosts.ref(req.HostBrokerId, req.CallId))

	defer p.running.start(req.CallId)()
	res, err := protect("trigger "+strconv.Quote(req.Trigger), func() (TriggerResult, error) { return t.run(ctx, call, ev) })
	if err != nil {
		return triggerErrorResponse(err), nil
	}
	return triggerResponse(res), nil
}

// withDeadline adds the request's deadline to ctx. gRPC carries it too, but rounded and only
// when the host set one on the RPC; the request's field is the attempt's own.
func withDeadline(ctx context.Context, unixNano int64) (context.Context, context.CancelFunc) {
	if unixNano == 0 {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, time.Unix(0, unixNano))
}

// ExecuteStream serves Execute's calls one after another on one stream, each request answered
// by one response, until the host closes the stream (or cancels it, which cancels the call it
// carries). A call on a stream costs no new stream, goroutine or HTTP/2 headers: about half of
// a unary call's round trip over the local socket (docs/performance.md, issue 20, session 25).
func (p *provider) ExecuteStream(s grpc.BidiStreamingServer[pluginv1.ExecuteRequest, pluginv1.ExecuteResponse]) error {
	for {
		req, err := s.Recv()
		if err != nil {
			// io.EOF: the host closed the stream; anything else: it cancelled it or went away.
			return nil
		}
		resp, err := p.Execute(s.Context(), req)
		if err != nil {
			return err
		}
		if err := s.Send(resp); err != nil {
			return err
		}
	}
}
