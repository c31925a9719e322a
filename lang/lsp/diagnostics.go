package lsp

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// checks run the diagnostics of the open documents in the background, so that the handlers
// answer at once while a large workflow is checked.
//
// A document has at most one check in flight. A change while it runs cancels it (its context;
// the plugins it asks stop waiting) and queues the new text, which is checked as soon as the
// cancelled check returns; more changes meanwhile replace the queued text. So a burst of typing
// costs one check of the text in flight and one of the newest text, and only the newest text's
// diagnostics are published. Closing a document publishes an empty list, and a check that
// was in flight for it publishes nothing.
type checks struct {
	// ctx ends when the server stops; every check's context derives from it.
	ctx context.Context
	// run returns a document's diagnostics (Server.check).
	run func(context.Context, *document) hcl.Diagnostics
	// delay is how long a check waits for the typing to pause before it starts (settle).
	delay time.Duration
	// wg counts the goroutines of loop, which stop waits for.
	wg sync.WaitGroup
	// slots bounds the checks that run at once to the CPUs: a save checks every open document
	// again, and 300 open workflows checked at once took 3.5 GB.
	slots chan struct{}

	mu sync.Mutex
	// byURI is the state of each document with a check in flight. Guarded by mu, which is also
	// held while publishing, so that a stale list can never follow a newer one.
	byURI map[protocol.DocumentUri]*checkState
}

// checkState is one document's check in flight. Its fields are guarded by checks.mu.
type checkState struct {
	cancel context.CancelFunc // the context of the check in flight
	next   *document          // the newest text, to check when the one in flight returns; nil when none
	notify glsp.NotifyFunc    // sends the notification to the client
}

func newChecks(ctx context.Context, run func(context.Context, *document) hcl.Diagnostics, delay time.Duration) *checks {
	return &checks{ctx: ctx, run: run, delay: delay, byURI: map[protocol.DocumentUri]*checkState{},
		slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// settle waits c.delay before a check starts, and reports whether the check should run: false
// when a newer change (or a close, or the server's end) cancelled it meanwhile. While someone
// types, a completion request then does not share the CPU with a check of a text that is
// already stale (a check of 1,000 nodes takes ~100 ms of CPU).
func (c *checks) settle(ctx context.Context) bool {
	if c.delay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(c.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// acquire takes a slot to run a check in, and reports false when ctx ended first.
func (c *checks) acquire(ctx context.Context) bool {
	select {
	case c.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// schedule checks d, now or when the check in flight for its document returns.
func (c *checks) schedule(d *document, notify glsp.NotifyFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return
	}
	if st, ok := c.byURI[d.uri]; ok {
		st.cancel()
		st.next, st.notify = d, notify
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	st := &checkState{cancel: cancel, notify: notify}
	c.byURI[d.uri] = st
	c.wg.Add(1)
	go c.loop(ctx, st, d)
}

// loop checks d, then the texts queued meanwhile, and publishes the diagnostics of the last
// one unless its document was closed or the server stops. It is the only goroutine checking
// d's document.
func (c *checks) loop(ctx context.Context, st *checkState, d *document) {
	defer c.wg.Done()
	for {
		var diags hcl.Diagnostics
		if c.settle(ctx) && c.acquire(ctx) {
			diags = c.run(ctx, d)
			<-c.slots
		}
		c.mu.Lock()
		st.cancel()
		if st.next != nil && c.ctx.Err() == nil {
			d, st.next = st.next, nil
			ctx, st.cancel = context.WithCancel(c.ctx)
			c.mu.Unlock()
			continue
		}
		if c.byURI[d.uri] == st {
			delete(c.byURI, d.uri)
			if c.ctx.Err() == nil {
				publish(st.notify, d.uri, &d.version, toDiagnostics(d, diags))
			}
		}
		c.mu.Unlock()
		return
	}
}

// closed drops the check of a closed document, and publishes an empty list for it, which
// clears what the editor shows.
func (c *checks) closed(uri protocol.DocumentUri, notify glsp.NotifyFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.byURI[uri]; ok {
		st.cancel()
		st.next = nil
		delete(c.byURI, uri)
	}
	publish(notify, uri, nil, []protocol.Diagnostic{})
}

// stop cancels the checks in flight and waits for their goroutines to return, or for stopWait.
//
// It waits for the running checks at most stopWait: a check cancelled in the middle of an
// expression's evaluation goes on until the evaluation ends (HCL's functions take no context),
// which a hostile file can make hours. Shutdown is answered and the process exits without it;
// the exit is what ends such a check.
func (c *checks) stop(cancel context.CancelFunc) {
	c.mu.Lock()
	cancel() // under mu: no check is scheduled after
	c.mu.Unlock()
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopWait):
	}
}

// stopWait is how long shutdown and the end of the connection wait for the running checks.
const stopWait = 2 * time.Second

func publish(notify glsp.NotifyFunc, uri protocol.DocumentUri, version *protocol.Integer, diags []protocol.Diagnostic) {
	p := protocol.PublishDiagnosticsParams{URI: uri, Diagnostics: diags}
	if version != nil && *version >= 0 {
		v := protocol.UInteger(*version)
		p.Version = &v
	}
	notify(protocol.ServerTextDocumentPublishDiagnostics, p)
}

// diagnosticData is the Data of each published diagnostic: the summary and detail as `fuscia
// validate -json` gives them, which the message joins.
type diagnosticData struct {
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"`
}

// source names the server as the origin of its diagnostics.
const source = "fuscia"

// toDiagnostics converts the diagnostics about d's file to the protocol's; those about other
// files (the workflows it calls, which have their own checks when open) are left out. One
// without a range (none that validate reports about a file it could read) is put at the start.
func toDiagnostics(d *document, diags hcl.Diagnostics) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, 0, len(diags))
	for _, hd := range diags {
		if hd == nil || hd.Subject != nil && hd.Subject.Filename != d.path {
			continue
		}
		var rng protocol.Range
		if hd.Subject != nil {
			rng = d.text.rangeOf(*hd.Subject)
		}
		sev := protocol.DiagnosticSeverityError
		if hd.Severity == hcl.DiagWarning {
			sev = protocol.DiagnosticSeverityWarning
		}
		msg := hd.Summary
		if hd.Detail != "" {
			msg += ": " + hd.Detail
		}
		src := source
		out = append(out, protocol.Diagnostic{
			Range: rng, Severity: &sev, Source: &src, Message: msg,
			Data: diagnosticData{Summary: hd.Summary, Detail: hd.Detail},
		})
	}
	return out
}
