package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/fuscia/fuscia/engine"
)

// ErrStreamCut is returned by ApplyRemote when serve's event stream ended before the run did:
// serve is shutting down, and the run resumes at its next start.
var ErrStreamCut = errors.New("fuscia serve stopped reporting before the run ended")

// applyRequest is engine/serve's ApplyRequest (POST /v1/apply).
type applyRequest struct {
	Plan        []byte          `json:"plan"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Parallelism int             `json:"parallelism,omitempty"`
}

// ApplyRemote asks the `fuscia serve` that owns home's store to run plan (plan.Encode's bytes)
// and calls fn with each event of the run, as `apply -json` prints them, until
// execution_finished. It returns ErrNoServer when no process answers on the socket or the one
// that does cannot run plans (an apply), and ErrStreamCut when the stream ends early. Ending
// ctx cancels the run in serve, like Ctrl-C cancels a local apply, and the events go on to its
// end.
func ApplyRemote(ctx context.Context, home string, plan []byte, payload json.RawMessage, parallelism int, fn func(engine.Event)) error {
	if !answers(ctx, filepath.Join(home, SocketName)) {
		return ErrNoServer
	}
	c := newClient(home, nil)
	defer c.Close()
	// The stream outlives ctx: ending ctx asks serve to cancel the run, whose last events are
	// still wanted. Dropping the stream would cancel it too, without them.
	streamCtx, dropStream := context.WithCancel(context.WithoutCancel(ctx))
	defer dropStream()
	var mu sync.Mutex
	id := ""
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		mu.Lock()
		runID := id
		mu.Unlock()
		if runID == "" {
			dropStream()
			return
		}
		var out cancelResponse
		if err := c.doJSON(streamCtx, http.MethodPost, "/v1/executions/"+url.PathEscape(runID)+"/cancel", struct{}{}, &out); err != nil {
			var fe *finishedError
			if !errors.As(err, &fe) {
				dropStream()
			}
		}
	}()

	finished := false
	err := c.stream(streamCtx, http.MethodPost, "/v1/apply", applyRequest{Plan: plan, Payload: payload, Parallelism: parallelism}, func(line []byte) error {
		var ev engine.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("decode an event of the run: %w", err)
		}
		mu.Lock()
		if id == "" {
			id = ev.ExecutionID
		}
		mu.Unlock()
		fn(ev)
		if ev.Type == engine.EventExecutionFinished {
			finished = true
			return errFinished
		}
		return nil
	})
	var ae *apiError
	switch {
	case finished:
		return nil
	case errors.As(err, &ae) && ae.noEndpoint:
		return ErrNoServer
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil:
		return ErrStreamCut
	case errors.Is(err, errOwnerGone) && id != "":
		return fmt.Errorf("%w: %w", ErrStreamCut, err)
	}
	return err
}

// errFinished stops reading a stream at its last event.
var errFinished = errors.New("finished")
