package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/hashicorp/hcl/v2"
)

// Error codes of the API's error bodies ({"error": "message", "code": "…"}): the client turns
// them back into the package's and the journal's sentinel errors.
const (
	codeNotFound  = "not_found"
	codeAmbiguous = "ambiguous"
	codeFinished  = "finished"
	codeInvalid   = "invalid"
	codeInternal  = "internal"
	// codeNotWaiting: a signal for a wait that is not waiting; codeInvalidSignal: for a node
	// that is no wait; codeNoEndpoint: this owner has no such endpoint (an apply has no resume).
	codeNotWaiting    = "not_waiting"
	codeInvalidSignal = "invalid_signal"
	codeNoEndpoint    = "no_endpoint"
	// codeNotFinished: the run has not ended (deleting its artifacts); codeNoArtifact: the run
	// has no such artifact; codeArtifactDeleted: it had, until its artifacts were deleted.
	codeNotFinished     = "not_finished"
	codeNoArtifact      = "no_artifact"
	codeArtifactDeleted = "artifact_deleted"
)

// CodeSecret is the code of serve's answer to a plan whose run could not read a secret
// (engine.SecretError): its body holds the secret block's range, and the client gives the
// error back as an engine.SecretError.
const CodeSecret = "secret"

// SecretErrorBody is the body of a CodeSecret answer.
func SecretErrorBody(e *engine.SecretError) any {
	return errorBody{Error: e.Err.Error(), Code: CodeSecret, Range: &e.Range}
}

// streamErrorTrailer is the HTTP trailer a follow sets when its stream ended early (the owner
// is stopping, or the store failed), so that the client does not mistake it for the run's end.
const streamErrorTrailer = "Fuscia-Stream-Error"

// server is the owner's API on the store's ops.
type server struct {
	ops    *ops
	logger *slog.Logger
	extend func(*http.ServeMux)

	// Close sets closing, then waits for the handlers under way: none runs on a closed store.
	mu       sync.Mutex
	closing  bool
	handlers sync.WaitGroup
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/executions", s.list)
	mux.HandleFunc("GET /v1/executions/{id}", s.show)
	mux.HandleFunc("GET /v1/executions/{id}/logs", s.logs)
	mux.HandleFunc("GET /v1/executions/{id}/events", s.eventsHandler)
	mux.HandleFunc("GET /v1/executions/{id}/timeline", s.timeline)
	mux.HandleFunc("GET /v1/executions/{id}/nodes/{node...}", s.nodeDetail)
	mux.HandleFunc("POST /v1/executions/{id}/cancel", s.cancel)
	mux.HandleFunc("POST /v1/prune", s.prune)
	mux.HandleFunc("POST /v1/executions/{id}/signal", s.signal)
	mux.HandleFunc("GET /v1/executions/{id}/artifacts", s.artifacts)
	mux.HandleFunc("DELETE /v1/executions/{id}/artifacts", s.deleteArtifacts)
	mux.HandleFunc("GET /v1/executions/{id}/artifacts/{artifact}", s.artifact)
	mux.HandleFunc("POST /v1/tokens", s.createToken)
	mux.HandleFunc("GET /v1/tokens", s.listTokens)
	mux.HandleFunc("DELETE /v1/tokens/{name}", s.revokeToken)
	if s.extend != nil {
		s.extend(mux)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, codeNoEndpoint, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			writeError(w, http.StatusServiceUnavailable, codeInternal, errStopping.Error())
			return
		}
		s.handlers.Add(1)
		s.mu.Unlock()
		defer s.handlers.Done()
		mux.ServeHTTP(w, r)
	})
}

// drain refuses new requests and waits for the handlers under way.
func (s *server) drain() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.handlers.Wait()
}

type errorBody struct {
	Error  string     `json:"error"`
	Code   string     `json:"code,omitempty"`
	Status string     `json:"status,omitempty"` // a finished run's status (cancel)
	Range  *hcl.Range `json:"range,omitempty"`  // where in the workflow (CodeSecret)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Error: msg, Code: code})
}

// fail answers with the status and code err calls for.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, journal.ErrNotFound):
		writeError(w, http.StatusNotFound, codeNotFound, err.Error())
	case errors.Is(err, journal.ErrAmbiguous):
		writeError(w, http.StatusBadRequest, codeAmbiguous, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, codeInternal, InternalError(s.logger, r, "the request failed", err))
	}
}

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := journal.Filter{Workflow: q.Get("workflow"), Status: q.Get("status"), Parent: q.Get("parent")}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"completed_before", &f.CompletedBefore}, {"started_after", &f.StartedAfter}, {"started_before", &f.StartedBefore}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("%s %q is not an RFC 3339 time (2026-01-02T15:04:05Z)", p.name, v))
				return
			}
			*p.to = t
		}
	}
	// Without limit and cursor the answer is every run, as before pages existed (scripts rely
	// on it), read and written a page at a time (listAll); a page is asked for with either.
	if q.Get("limit") == "" && q.Get("cursor") == "" {
		s.listAll(w, r, f)
		return
	}
	limit := defaultPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("limit %q is not a count", v))
			return
		}
		if n > 0 {
			limit = min(n, maxPage)
		}
	}
	if v := q.Get("cursor"); v != "" {
		id, err := decodeCursor(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
			return
		}
		f.BeforeID = id
	}
	// One more than the page: whether it exists says whether there is a next page.
	f.Limit = limit + 1
	runs, err := s.ops.List(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	next := ""
	if len(runs) > limit {
		runs = runs[:limit]
		next = encodeCursor(runs[limit-1].ID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"executions": runs, "next_cursor": next})
}

func (s *server) show(w http.ResponseWriter, r *http.Request) {
	x, err := s.ops.Execution(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, x)
}

// logs streams the run's lines as NDJSON; with follow=1, until the run has finished.
func (s *server) logs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, ok := seqParam(w, q, "after")
	if !ok {
		return
	}
	s.streamRun(w, r, func(id string, follow bool, emit func(any) error) error {
		_, err := s.ops.logs(r.Context(), id, after, q.Get("node"), follow, func(l journal.LogLine) error { return emit(l) })
		return err
	})
}

// seqParam reads the sequence number in query parameter name (0 when absent); on a bad one it
// answers 400 and reports false.
func seqParam(w http.ResponseWriter, q url.Values, name string) (uint64, bool) {
	v := q.Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("%s %q is not a sequence number", name, v))
		return 0, false
	}
	return n, true
}

// streamRun answers an NDJSON stream of the run the path's id names: run emits its lines, and
// with follow=1 goes on until the run has finished. An error once lines were sent goes in the
// Fuscia-Stream-Error trailer.
func (s *server) streamRun(w http.ResponseWriter, r *http.Request, run func(id string, follow bool, emit func(any) error) error) {
	follow := r.URL.Query().Get("follow") == "1" || r.URL.Query().Get("follow") == "true"
	id, err := s.ops.resolve(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Trailer", streamErrorTrailer)
	w.Header().Set("Content-Type", "application/x-ndjson")
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	started := false
	start := func() {
		if !started {
			started = true
			w.WriteHeader(http.StatusOK)
		}
	}
	if follow {
		// What reads the connection during a follow is the server's watch for the client going
		// away, which a listener's read deadline (serve's -listen: 30 s) would end as if it
		// had, cancelling the follow: a follow lasts as long as its run.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	if follow && flusher != nil {
		// A follow may wait long for its first line: answer at once so that the client knows
		// the request was accepted. Without follow, nothing is written before the first batch,
		// so a run deleted since the resolve still answers 404.
		start()
		flusher.Flush()
	}
	err = run(id, follow, func(v any) error {
		start()
		if err := enc.Encode(v); err != nil {
			return err
		}
		if follow && flusher != nil {
			flusher.Flush()
		}
		return nil
	})
	if err != nil && !started {
		if r.Context().Err() == nil {
			s.fail(w, r, err)
		}
		return
	}
	start()
	if err != nil && r.Context().Err() == nil {
		w.Header().Set(streamErrorTrailer, err.Error())
	}
}

type cancelResponse struct {
	ExecutionID string `json:"execution_id"`
	Status      string `json:"status"`
}

func (s *server) cancel(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("id")
	id, err := s.ops.resolve(ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status, err := s.ops.Cancel(r.Context(), id)
	if errors.Is(err, ErrFinished) {
		writeJSON(w, http.StatusConflict, errorBody{Error: err.Error(), Code: codeFinished, Status: status})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, cancelResponse{ExecutionID: id, Status: status})
}

type pruneRequest struct {
	CompletedBefore string `json:"completed_before"`
}

type pruneResponse struct {
	Deleted      int      `json:"deleted"`
	ExecutionIDs []string `json:"execution_ids"`
	// What deleting their artifacts freed.
	ArtifactsDeleted int   `json:"artifacts_deleted"`
	BytesFreed       int64 `json:"bytes_freed"`
}

func (s *server) prune(w http.ResponseWriter, r *http.Request) {
	var req pruneRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "the body is not a JSON object with completed_before: "+err.Error())
		return
	}
	before, err := time.Parse(time.RFC3339Nano, req.CompletedBefore)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("completed_before %q is not an RFC 3339 time", req.CompletedBefore))
		return
	}
	// Pruning must not stop half-way because the client went away.
	p, err := s.ops.prune(context.WithoutCancel(r.Context()), before)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pruneResponse{Deleted: len(p.ExecutionIDs), ExecutionIDs: p.ExecutionIDs,
		ArtifactsDeleted: p.Artifacts.Artifacts, BytesFreed: p.Artifacts.Bytes})
}
