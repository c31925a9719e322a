// Package builtin is the builtin tasks of docs/reference/language.md: builtin.http,
// builtin.transform, builtin.sleep and builtin.fail. Its table (Lookup, Names) lists each
// one's name, input schema, purity and implementation, and is read by lang (uses and input
// checks) and by the engine. Each attempt is one Runner.Run call that answers with an
// outcome.Result; the engine alone decides what the result means for the graph.
package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

// Request is one attempt of a builtin task.
type Request struct {
	// Name is the builtin's short name: "http", "transform", "sleep" or "fail". The
	// "builtin." prefix is accepted too.
	Name string
	// Input is the task's inputs as a JSON object, already coerced to and validated against
	// the builtin's input schema. Defaults of the schema are not applied yet; Run applies them.
	Input json.RawMessage
	// TaskID and Attempt identify the attempt. No builtin sends them anywhere: a request
	// carries only what the user wrote.
	TaskID  string
	Attempt int
	// Log receives the attempt's log lines (level "debug", "info", "warn" or "error"); nil
	// drops them.
	Log func(level, message string)
	// Sensitive are the JSON Pointers of the parts of Input derived from secrets ("" for the
	// whole input); everything under one is sensitive. builtin.http does not quote a sensitive
	// URL in its messages.
	Sensitive []string
}

// sensitive reports whether the input's member at pointer is sensitive: a pointer of
// q.Sensitive is it, or one of its parents.
func (q Request) sensitive(pointer string) bool {
	for _, p := range q.Sensitive {
		if p == pointer || strings.HasPrefix(pointer, p+"/") || p == "" {
			return true
		}
	}
	return false
}

func (q Request) logf(level, format string, args ...any) {
	if q.Log != nil {
		q.Log(level, fmt.Sprintf(format, args...))
	}
}

// Options configure a Runner.
type Options struct {
	// Transport, when set, answers builtin.http's requests instead of the network (`fuscia
	// test`'s mock_http): no connection is made and the SSRF guard, which guards dials, does
	// not apply. Redirects, status classification, body limits and decoding are as usual.
	Transport http.RoundTripper
	// dial and lookup replace the network for tests. dial is only ever given an "ip:port"
	// that the SSRF guard has checked, so a test can count connection attempts.
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Runner runs builtins. It holds one HTTP client whose connections are reused across
// attempts. The zero value is not usable; use New. A Runner is safe for concurrent use.
type Runner struct {
	guard     *guard
	transport *http.Transport
	client    *http.Client
	replaced  bool // Options.Transport answers requests
}

// New returns a Runner. Call Close when done with it.
func New(opts Options) *Runner {
	g := &guard{dial: opts.dial, lookup: opts.lookup}
	if g.dial == nil {
		// The timeout bounds a dial the transport lets finish after its request gave up (it
		// keeps the connection for a later request).
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		g.dial = d.DialContext
	}
	if g.lookup == nil {
		g.lookup = net.DefaultResolver.LookupNetIP
	}
	t := newTransport(g)
	if opts.Transport != nil {
		return &Runner{guard: g, transport: t, client: newClient(opts.Transport), replaced: true}
	}
	return &Runner{guard: g, transport: t, client: newClient(t)}
}

// Close closes the idle connections of the Runner's HTTP client. Requests still running are
// not interrupted; cancel their contexts for that.
func (r *Runner) Close() { r.transport.CloseIdleConnections() }

// Run runs one attempt. ctx carries the attempt's deadline (the node's timeout) and the run's
// cancellation: when it ends during the attempt, the result is a timeout error for a deadline
// and a cancelled error otherwise.
func (r *Runner) Run(ctx context.Context, req Request) outcome.Result {
	name := strings.TrimPrefix(req.Name, "builtin.")
	if ctx.Err() != nil {
		return ended(ctx, "builtin."+name+": not started: the attempt's deadline had passed",
			"builtin."+name+": not started: cancelled")
	}
	b, ok := Lookup(name)
	if !ok {
		return outcome.Fail(outcome.Fatal, "unknown builtin %q (the builtins are %s)", req.Name, strings.Join(Names(), ", "))
	}
	return b.run(r, ctx, req)
}

// transform outputs its input as it is. The output shares the input's bytes: JSON documents
// are not modified once made.
func transform(req Request) outcome.Result {
	if len(req.Input) == 0 {
		return outcome.OK(json.RawMessage(`{}`))
	}
	return outcome.OK(req.Input)
}

// decodeInput decodes a builtin's input. The engine validated it, so an error here is a bug
// upstream; it is reported as a validation error naming the builtin.
func decodeInput(name string, input json.RawMessage, v any) *outcome.Result {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(input, v); err != nil {
		r := outcome.Fail(outcome.Validation, "builtin.%s: invalid input: %v", name, err)
		return &r
	}
	return nil
}

// ended is the result of an attempt whose ctx ended: a timeout error with the deadline
// message when its deadline passed, a cancelled error with the other message otherwise.
func ended(ctx context.Context, deadline, cancelled string) outcome.Result {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return outcome.Fail(outcome.Timeout, "%s", deadline)
	}
	return outcome.Fail(outcome.Cancelled, "%s", cancelled)
}

// round makes a duration readable in messages: "1.2s", "350ms".
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
