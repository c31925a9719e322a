package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
)

// RegisterAPI adds serve's endpoints to the owner's API (docs/reference/api.md): start a run, resume,
// workflows, health, a cluster's workers. The same mux answers on the unix socket and on -listen.
func (s *Server) RegisterAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("GET /v1/workflows", s.listWorkflows)
	mux.HandleFunc("POST /v1/workflows/{name}/runs", s.startRun)
	mux.HandleFunc("POST /v1/executions/{id}/resume", s.resumeRun)
	mux.HandleFunc("POST /v1/apply", s.applyPlan)
	mux.HandleFunc("GET /v1/workers", s.listWorkers)
}

// health is 200 "ok" once Start has loaded the workflows and resumed the runs; before, and
// from the start of a shutdown, 503 "starting" or "stopping" with Retry-After, as the
// webhooks answer then (readiness.go).
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	n := len(s.workflows)
	unready := s.readinessLocked()
	s.mu.Unlock()
	status, code := "ok", http.StatusOK
	if unready != "" {
		status, code = unready, http.StatusServiceUnavailable
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, code, map[string]any{
		"status": status, "version": version.Fuscia, "workflows": n,
		"active_runs": s.eng.ActiveCount(), "parked_runs": s.parked.len(), "webhooks": s.sortedPaths(),
	})
}

type workflowInfo struct {
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Triggers []triggerInfo `json:"triggers"`
}

type triggerInfo struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Method   string `json:"method,omitempty"`
	Path     string `json:"path,omitempty"`
	Cron     string `json:"cron,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	Interval string `json:"interval,omitempty"`
}

func (s *Server) listWorkflows(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := make([]workflowInfo, 0, len(s.workflows))
	for _, l := range s.workflows {
		wf := l.prog.Workflow
		info := workflowInfo{Name: wf.Name, File: l.file, Triggers: []triggerInfo{}}
		for _, t := range wf.Triggers {
			ti := triggerInfo{Type: t.Type, Name: t.Name}
			switch t.Type {
			case lang.TriggerWebhook:
				ti.Method, ti.Path = t.Method, t.Path
			case lang.TriggerSchedule:
				ti.Cron, ti.Timezone = t.Cron, t.Timezone
			case lang.TriggerPoll:
				ti.Interval = t.Interval.String()
			}
			info.Triggers = append(info.Triggers, ti)
		}
		out = append(out, info)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b workflowInfo) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, map[string]any{"workflows": out})
}

type startRequest struct {
	Payload json.RawMessage `json:"payload"`
	Trigger string          `json:"trigger"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	// While starting, the workflow may not be loaded yet: not a 404.
	if unready := s.readiness(); unready != "" {
		unavailable(w, unready)
		return
	}
	var req startRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body is not a JSON object {\"payload\": …, \"trigger\": …}: " + err.Error(), "code": "invalid"})
			return
		}
	}
	st, err := s.startManual(r.PathValue("name"), req.Trigger, req.Payload)
	switch {
	case refuseStart(w, st, err):
	case errors.Is(err, errUnknownWorkflow), errors.Is(err, errNoTrigger):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error(), "code": "not_found"})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error(), "code": "internal"})
	default:
		s.answerStarted(w, r, st)
	}
}

func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) {
	id, err := s.store.ResolveID(r.PathValue("id"))
	if err != nil {
		code, status := "internal", http.StatusInternalServerError
		switch {
		case errors.Is(err, journal.ErrNotFound):
			code, status = "not_found", http.StatusNotFound
		case errors.Is(err, journal.ErrAmbiguous):
			code, status = "ambiguous", http.StatusBadRequest
		}
		writeJSON(w, status, map[string]string{"error": err.Error(), "code": code})
		return
	}
	if err := s.Resume(id); err != nil {
		if errors.Is(err, engine.ErrFinished) {
			sum, _ := s.store.Summary(id)
			writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error(), "code": "finished", "status": sum.Status})
			return
		}
		writeJSON(w, http.StatusConflict, map[string]string{"error": fmt.Sprint(err), "code": "invalid"})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"execution_id": id, "status": journal.StatusRunning})
}
