package local

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
)

// followPoll is how often a follow looks for new log lines.
const followPoll = 150 * time.Millisecond

// logBatch bounds the lines read in one store read: they are delivered after the read, so that
// a slow reader (a client on the socket, a terminal) never holds a store transaction open.
const logBatch = 512

// errStopping ends a follow when the owner shuts down.
var errStopping = errors.New("the fuscia process that owns the state store is shutting down")

// ops are the Backend operations on a store: the direct backend calls them in the command's
// process, the owner's API handlers in the owner's. A nil st is a home without a store.
type ops struct {
	st        *journal.Store
	artifacts artifact.Store
	forget    func(ctx context.Context, ids ...string) error

	engOnce sync.Once
	eng     *engine.Engine // the owner's engine; else built on first Cancel
	// stop, when not nil, ends follows: it is closed when the owner shuts down.
	stop <-chan struct{}
	// signaled, when not nil, is told about a signal journaled for a run nobody runs (serve
	// resumes it).
	signaled func(id string)
}

func (o *ops) List(_ context.Context, f journal.Filter) ([]journal.Summary, error) {
	if o.st == nil {
		return []journal.Summary{}, nil
	}
	return o.st.List(f)
}

// resolve turns an id or unique prefix into the id.
func (o *ops) resolve(ref string) (string, error) {
	if o.st == nil {
		return "", fmt.Errorf("execution %q: %w", ref, journal.ErrNotFound)
	}
	return o.st.ResolveID(ref)
}

func (o *ops) Execution(_ context.Context, ref string) (*journal.Execution, error) {
	id, err := o.resolve(ref)
	if err != nil {
		return nil, err
	}
	return o.st.Execution(id)
}

// logs delivers the lines of run id after seq after that node selects; with follow it polls
// for more until the run has finished, ctx ends or the owner stops (errStopping). It returns
// the seq of the last line it read.
func (o *ops) logs(ctx context.Context, id string, after uint64, node string, follow bool, fn func(journal.LogLine) error) (uint64, error) {
	err := o.poll(ctx, follow, func() (finished bool, err error) {
		after, finished, err = o.catchUp(id, after, node, fn)
		return finished, err
	})
	return after, err
}

// poll calls catchUp, and with follow again every followPoll until it reports the run finished,
// fails, ctx ends or the owner stops (errStopping).
func (o *ops) poll(ctx context.Context, follow bool, catchUp func() (finished bool, err error)) error {
	var tick *time.Ticker
	for {
		finished, err := catchUp()
		if err != nil || !follow || finished {
			return err
		}
		if tick == nil {
			tick = time.NewTicker(followPoll)
			defer tick.Stop()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-o.stop: // nil when not an owner: never ready
			return errStopping
		case <-tick.C:
		}
	}
}

// catchUp delivers the lines of run id after seq after that node selects, and reports whether
// the run had finished before the first of them was read: then there will be no more.
func (o *ops) catchUp(id string, after uint64, node string, fn func(journal.LogLine) error) (uint64, bool, error) {
	// The status is read before the lines: every line journaled before the run finished is
	// then read by the pass that saw the final status.
	sum, err := o.st.Summary(id)
	if err != nil {
		return after, false, err
	}
	for {
		batch, err := o.readLogs(id, after)
		if err != nil {
			return after, false, err
		}
		for _, l := range batch {
			after = l.Seq
			if !MatchNode(node, l.Node) {
				continue
			}
			if err := fn(l); err != nil {
				return after, false, err
			}
		}
		if len(batch) < logBatch {
			return after, journal.Finished(sum.Status), nil
		}
	}
}

var errBatchFull = errors.New("batch full")

// readLogs reads up to logBatch lines of run id after seq after.
func (o *ops) readLogs(id string, after uint64) ([]journal.LogLine, error) {
	return readBatch(o.st.Logs, id, after)
}

// readBatch reads up to logBatch items of run id after seq after with read (the store's Logs
// or Entries).
func readBatch[T any](read func(id string, after uint64, fn func(T) error) error, id string, after uint64) ([]T, error) {
	var batch []T
	err := read(id, after, func(v T) error {
		batch = append(batch, v)
		if len(batch) == logBatch {
			return errBatchFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errBatchFull) {
		return nil, err
	}
	return batch, nil
}

func (o *ops) engine() *engine.Engine {
	o.engOnce.Do(func() {
		if o.eng == nil {
			// Cancel needs no dispatcher: it only journals the cancellation of a run nobody runs.
			o.eng = engine.New(engine.Config{Store: o.st})
		}
	})
	return o.eng
}

func (o *ops) Cancel(ctx context.Context, ref string) (string, error) {
	id, err := o.resolve(ref)
	if err != nil {
		return "", err
	}
	sum, err := o.st.Summary(id)
	if err != nil {
		return "", err
	}
	if journal.Finished(sum.Status) {
		return sum.Status, fmt.Errorf("execution %s: %w: %s", id, ErrFinished, sum.Status)
	}
	if err := o.engine().Cancel(ctx, id); err != nil {
		// The run may have ended between the look and the cancel.
		if sum, serr := o.st.Summary(id); serr == nil && journal.Finished(sum.Status) {
			return sum.Status, fmt.Errorf("execution %s: %w: %s", id, ErrFinished, sum.Status)
		}
		return "", fmt.Errorf("cancel execution %s: %w", id, err)
	}
	sum, err = o.st.Summary(id)
	if err != nil {
		return "", err
	}
	return sum.Status, nil
}
