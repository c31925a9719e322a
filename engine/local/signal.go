package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/bounds"
)

// What a signal came to (SignalResult.Status).
const (
	// SignalResolved: the process running the run applied it.
	SignalResolved = "resolved"
	// SignalResumed: the run was parked; the owner (serve) journaled the answer and resumed it.
	SignalResumed = "resumed"
	// SignalRecorded: nobody runs the run; the answer is journaled and applies when it is
	// resumed (fuscia resume, or fuscia serve).
	SignalRecorded = "recorded"
)

var (
	// ErrNotWaiting is returned by Signal for a wait that is not waiting for an answer.
	ErrNotWaiting = engine.ErrNotWaiting
	// ErrInvalidSignal is returned by Signal for a node that is no wait of the run.
	ErrInvalidSignal = engine.ErrInvalidSignal
)

// SignalResult is the API's answer to a signal.
type SignalResult struct {
	ExecutionID string `json:"execution_id"`
	Node        string `json:"node"`
	Status      string `json:"status"`
}

type signalRequest struct {
	Node   string          `json:"node"`
	Data   json.RawMessage `json:"data,omitempty"`
	Reject bool            `json:"reject,omitempty"`
}

// Signal answers an approval or callback wait of run ref, as Caller(ctx): the journal records
// who answered.
func (o *ops) Signal(ctx context.Context, ref, node string, data json.RawMessage, reject bool) (SignalResult, error) {
	// What a run could not keep (nesting past encoding/json's reading it back, a number go-cty
	// writes out in millions of digits) is refused before it reaches the journal.
	if err := bounds.CheckJSON(data); err != nil {
		return SignalResult{}, fmt.Errorf("%w: the data is JSON that Fuscia does not take: %s", ErrInvalidSignal, err)
	}
	id, err := o.resolve(ref)
	if err != nil {
		return SignalResult{}, err
	}
	queued, err := o.engine().Signal(engine.WithAnsweredBy(ctx, Caller(ctx)), id, node, data, reject)
	if errors.Is(err, engine.ErrFinished) {
		sum, _ := o.st.Summary(id)
		return SignalResult{}, fmt.Errorf("execution %s: %w: %s", id, ErrFinished, sum.Status)
	}
	if err != nil {
		return SignalResult{}, err
	}
	res := SignalResult{ExecutionID: id, Node: node, Status: SignalResolved}
	if queued {
		res.Status = SignalRecorded
		if o.signaled != nil {
			o.signaled(id)
			res.Status = SignalResumed
		}
	}
	return res, nil
}

func (s *server) signal(w http.ResponseWriter, r *http.Request) {
	var req signalRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(&req); err != nil || req.Node == "" {
		writeError(w, http.StatusBadRequest, codeInvalid, `the body is not a JSON object {"node": "wait.NAME", "data": …, "reject": false}`)
		return
	}
	res, err := s.ops.Signal(r.Context(), r.PathValue("id"), req.Node, req.Data, req.Reject)
	switch {
	case errors.Is(err, ErrFinished):
		writeError(w, http.StatusConflict, codeFinished, err.Error())
	case errors.Is(err, ErrNotWaiting):
		writeError(w, http.StatusConflict, codeNotWaiting, err.Error())
	case errors.Is(err, ErrInvalidSignal):
		writeError(w, http.StatusBadRequest, codeInvalidSignal, err.Error())
	case err != nil:
		s.fail(w, r, err)
	default:
		writeJSON(w, http.StatusOK, res)
	}
}

func (c *client) Signal(ctx context.Context, ref, node string, data json.RawMessage, reject bool) (SignalResult, error) {
	var out SignalResult
	err := c.doJSON(ctx, http.MethodPost, "/v1/executions/"+url.PathEscape(ref)+"/signal", signalRequest{Node: node, Data: data, Reject: reject}, &out)
	var fe *finishedError
	if errors.As(err, &fe) {
		return out, fe.apiError
	}
	return out, err
}

func (d *direct) Signal(ctx context.Context, ref, node string, data json.RawMessage, reject bool) (SignalResult, error) {
	if err := d.acquire(ctx); err != nil {
		return SignalResult{}, err
	}
	if d.remote != nil {
		return d.remote.Signal(ctx, ref, node, data, reject)
	}
	if d.ops.st == nil {
		return SignalResult{}, fmt.Errorf("execution %q: %w", ref, journal.ErrNotFound)
	}
	return d.ops.Signal(ctx, ref, node, data, reject)
}

// ErrNoServer is returned by ResumeRemote when no `fuscia serve` owns the store: the caller
// resumes the run itself.
var ErrNoServer = errors.New("no fuscia serve owns the state store")

// ResumeRemote asks the `fuscia serve` that owns home's store to resume run ref. It returns
// ErrNoServer when no process answers on the socket or the one that does cannot resume runs
// (an apply).
func ResumeRemote(ctx context.Context, home, ref string) (string, error) {
	if !answers(ctx, filepath.Join(home, SocketName)) {
		return "", ErrNoServer
	}
	c := newClient(home, nil)
	defer c.Close()
	var out struct {
		ExecutionID string `json:"execution_id"`
	}
	err := c.doJSON(ctx, http.MethodPost, "/v1/executions/"+url.PathEscape(ref)+"/resume", struct{}{}, &out)
	var ae *apiError
	if errors.As(err, &ae) && ae.noEndpoint {
		return "", ErrNoServer
	}
	var fe *finishedError
	if errors.As(err, &fe) {
		return "", fe.apiError
	}
	return out.ExecutionID, err
}
