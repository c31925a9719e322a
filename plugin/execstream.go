package plugin

import (
	"context"
	"errors"
	"io"
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
type execStreams struct {
	mu     sync.Mutex // guards the fields below
	idle   []*execStream
	closed bool
	// unary: the plugin does not serve ExecuteStream (it answered UNIMPLEMENTED; a plugin of an
	// older protocol build or another toolchain), so calls use Execute.
	unary bool
	// opened counts the streams opened, for tests.
	opened int
}

// execStream is one open stream, what cancels it, and how many calls it has answered.
type execStream struct {
	s      grpc.BidiStreamingClient[pluginv1.ExecuteRequest, pluginv1.ExecuteResponse]
	cancel context.CancelFunc
	calls  int
}

// execute makes one Execute call of p: on an idle stream, on a new one, or unary when the
// plugin has no streams. The errors are those of a unary call: ctx's end is a cancelled
// stream (codes.Canceled), a dead process codes.Unavailable.
func (p *process) execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	st, err := p.streams.take(p.provider)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.provider.Execute(ctx, req)
	}
	// The stream outlives the call, so the call's context reaches it through this: ctx's end
	// (its deadline or the run's cancellation) cancels the stream, as it would a unary call.
	stop := context.AfterFunc(ctx, st.cancel)
	resp, err := st.roundTrip(req)
	if !stop() {
		// ctx ended during the call: the stream is cancelled, or about to be.
		st.cancel()
		return resp, err
	}
	if err != nil {
		st.cancel()
		if status.Code(err) == codes.Unimplemented && st.calls == 0 {
			// The plugin refused the stream, so nothing ran.
			p.streams.setUnary()
			return p.provider.Execute(ctx, req)
		}
		return nil, err
	}
	st.calls++
	p.streams.put(st)
	return resp, nil
}

// roundTrip sends req and reads its answer.
func (st *execStream) roundTrip(req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	// Send reports io.EOF when the stream has ended; Recv then says why.
	if err := st.s.Send(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	resp, err := st.s.Recv()
	if errors.Is(err, io.EOF) {
		return nil, errNoAnswer
	}
	return resp, err
}

// take returns an idle stream, or a new one; nil when the plugin has none (then the call is
// unary).
func (e *execStreams) take(provider pluginv1.ProviderClient) (*execStream, error) {
	e.mu.Lock()
	if e.unary {
		e.mu.Unlock()
		return nil, nil
	}
	if n := len(e.idle); n > 0 {
		st := e.idle[n-1]
		e.idle[n-1] = nil
		e.idle = e.idle[:n-1]
		e.mu.Unlock()
		return st, nil
	}
	e.opened++
	e.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := provider.ExecuteStream(ctx)
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

// setUnary records that the plugin does not serve ExecuteStream.
func (e *execStreams) setUnary() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unary = true
	for _, st := range e.idle {
		st.cancel()
	}
	e.idle = nil
}

// close cancels the idle streams; the calls running keep theirs until they end.
func (e *execStreams) close() {
	e.mu.Lock()
	idle := e.idle
	e.idle, e.closed = nil, true
	e.mu.Unlock()
	for _, st := range idle {
		st.cancel()
	}
}
