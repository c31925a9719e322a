package plugin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// maxIdleStreams bounds the ExecuteStream streams a process keeps open between calls: as many
// as its calls ran at once lately, up to this; a stream beyond it is closed when its call ends.
const maxIdleStreams = 16

// errNoAnswer is a stream the plugin ended without answering the call it carried.
var errNoAnswer = status.Error(codes.Internal, "the plugin ended the call's ExecuteStream stream without an answer")

// execStreams are a process's ExecuteStream streams that wait for a call. A task call goes on
// one of them rather than on a unary Execute: it then needs no new HTTP/2 stream, no headers
// and trailers, and no new goroutine in the plugin, which halves the round trip over the
// local socket (docs/performance.md, issue 20, session 25). A stream carries one call at a
// time; a call whose context ends cancels its stream, which is then never reused.
//
// Streams are used only with a plugin that says it serves them (GetSchemaResponse's
// execute_stream): Fuscia never guesses it from an error, since an error may come after the
// task ran, and a guess that sent the request again would run the task twice.
type execStreams struct {
	mu     sync.Mutex // guards the fields below
	idle   []*execStream
	closed bool
	// ok: the plugin serves ExecuteStream; otherwise calls use Execute.
	ok bool
	// opened counts the streams opened, for tests.
	opened int
	// log takes the warnings about a plugin's stray answers; nil drops them.
	log *slog.Logger
}

// execStream is one open stream, what cancels it, and how many calls it has answered.
type execStream struct {
	s      grpc.BidiStreamingClient[pluginv1.ExecuteRequest, pluginv1.ExecuteResponse]
	cancel context.CancelFunc
	calls  int
}

// errStopping is a call that found its process being stopped.
var errStopping = status.Error(codes.Unavailable, "the plugin process is being stopped")

// errEnded is a reused stream the plugin had ended, with an OK status, while it was idle: the
// request was not read.
var errEnded = errors.New("the plugin ended an idle ExecuteStream stream")

// execute makes one Execute call of p: on an idle stream, on a new one, or unary when the
// plugin has no streams. The errors are those of a unary call: ctx's end is a cancelled
// stream (codes.Canceled), a dead process codes.Unavailable.
func (p *process) execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	// A unary call refuses a context that has ended; so does a stream, before anything is
	// sent (the cancellation below would race with the request and could lose).
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	if !p.streams.allowed() {
		return p.provider.Execute(ctx, req)
	}
	resp, err := p.streams.call(ctx, p.provider, req, false)
	if errors.Is(err, errEnded) {
		// The plugin had ended the stream while it was idle (it did not read the request);
		// once more on a new stream (another idle one may have ended too).
		resp, err = p.streams.call(ctx, p.provider, req, true)
	}
	return resp, err
}

// call sends req on an idle stream (unless fresh) or a new one, and reads its answer.
func (e *execStreams) call(ctx context.Context, provider pluginv1.ProviderClient, req *pluginv1.ExecuteRequest, fresh bool) (*pluginv1.ExecuteResponse, error) {
	st, err := e.take(ctx, provider, fresh)
	if err != nil {
		return nil, err
	}
	// The stream outlives the call, so the call's context reaches it through this: ctx's end
	// (its deadline or the run's cancellation) cancels the stream, as it would a unary call.
	stop := context.AfterFunc(ctx, st.cancel)
	resp, err := st.roundTrip(req, e.log)
	if !stop() {
		// ctx ended during the call: the stream is cancelled, or about to be.
		st.cancel()
		if errors.Is(err, errEnded) {
			err = status.FromContextError(ctx.Err()).Err()
		}
		return resp, err
	}
	if err != nil {
		st.cancel()
		return nil, err
	}
	st.calls++
	e.put(st)
	return resp, nil
}

// maxStrayAnswers bounds the answers for other calls one call drops before it gives up on its
// stream: a plugin that answered a call twice sends one; a plugin that keeps sending them is
// broken, and its stream is not waited on for ever.
const maxStrayAnswers = 16

// roundTrip sends req and reads its answer.
//
// An answer that names another call (ExecuteResponse.call_id) is not this call's: a plugin
// that answered an earlier call on the stream twice left it there. It is dropped and logged
// (log, which may be nil), so that it never becomes this call's result.
//
// A stream the plugin ends with an OK status after answering its last call is the plugin
// saying it takes no more calls on it. Send cannot tell whether that end came before req went
// out: Send reports io.EOF only once the end has arrived, and a plugin may end the stream
// while req is on its way (the plugin then never reads it). So on a stream that has carried
// calls, an OK end without an answer is the end of an idle stream (errEnded: the call goes on a
// new stream), which the protocol makes so by requiring a plugin to answer every request it
// reads or end the stream with an error (docs/reference/plugin-protocol.md, "ExecuteStream").
// A stream ended with an error is never that: its call fails and is not sent again.
func (st *execStream) roundTrip(req *pluginv1.ExecuteRequest, log *slog.Logger) (*pluginv1.ExecuteResponse, error) {
	// Send reports io.EOF when the stream has ended, before req went out; Recv then says why.
	if err := st.s.Send(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	for stray := 0; ; stray++ {
		resp, err := st.s.Recv()
		if errors.Is(err, io.EOF) {
			if st.calls > 0 {
				return nil, errEnded
			}
			// A new stream ended without an answer: the plugin refused the call, and a retry
			// would meet the same.
			return nil, errNoAnswer
		}
		if err != nil || resp.CallId == "" || resp.CallId == req.CallId {
			return resp, err
		}
		if stray == maxStrayAnswers {
			return nil, status.Errorf(codes.Internal, "the plugin sent more than %d answers for other calls on the ExecuteStream stream of call %s", maxStrayAnswers, req.CallId)
		}
		if log != nil {
			log.Warn("plugin answered a call it had answered already; the answer is dropped",
				"call_id", resp.CallId, "waiting_for", req.CallId, "task", req.Task)
		}
	}
}

// take returns an idle stream (unless fresh), or a new one. Opening one gives up when ctx
// ends.
func (e *execStreams) take(ctx context.Context, provider pluginv1.ProviderClient, fresh bool) (*execStream, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errStopping
	}
	if n := len(e.idle); n > 0 && !fresh {
		st := e.idle[n-1]
		e.idle[n-1] = nil
		e.idle = e.idle[:n-1]
		e.mu.Unlock()
		return st, nil
	}
	e.opened++
	e.mu.Unlock()
	sctx, cancel := context.WithCancel(context.Background())
	// Opening waits while the connection is (re)connecting: the call's end cancels that.
	stop := context.AfterFunc(ctx, cancel)
	s, err := provider.ExecuteStream(sctx)
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	return &execStream{s: s, cancel: cancel}, nil
}

// put keeps st for the next call, unless enough streams are idle or the process is stopping.
func (e *execStreams) put(st *execStream) {
	e.mu.Lock()
	if e.closed || len(e.idle) >= maxIdleStreams {
		e.mu.Unlock()
		st.cancel()
		return
	}
	e.idle = append(e.idle, st)
	e.mu.Unlock()
}

// allow records whether the plugin serves ExecuteStream (its schema says so).
func (e *execStreams) allow(ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ok = ok
	if !ok {
		for _, st := range e.idle {
			st.cancel()
		}
		e.idle = nil
	}
}

// allowed reports whether calls go on streams.
func (e *execStreams) allowed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ok
}

// close cancels the idle streams; the calls running keep theirs until they end, and later
// calls fail (errStopping).
func (e *execStreams) close() {
	e.mu.Lock()
	idle := e.idle
	e.idle, e.closed = nil, true
	e.mu.Unlock()
	for _, st := range idle {
		st.cancel()
	}
}
