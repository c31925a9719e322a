package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/internal/bounds"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schedule"
)

// RegisterAPI adds serve's endpoints to the owner's API (docs/reference/api.md): start a run, resume,
// workflows, health, a cluster's workers. The same mux answers on the unix socket and on -listen.
func (s *Server) RegisterAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("GET /v1/workflows", s.listWorkflows)
	mux.HandleFunc("GET /v1/workflows/{name}/graph", s.graph)
	mux.HandleFunc("GET /v1/executions/{id}/graph", s.runGraph)
	mux.HandleFunc("POST /v1/workflows/{name}/runs", s.startRun)
	mux.HandleFunc("POST /v1/executions/{id}/resume", s.resumeRun)
	mux.HandleFunc("POST /v1/apply", s.applyPlan)
	mux.HandleFunc("GET /v1/workers", s.listWorkers)
}

// health is 200 "ok" once Start has loaded the workflows and resumed the runs; before, and
// from the start of a shutdown, 503 "starting" or "stopping" with Retry-After, as the
// webhooks answer then (readiness.go).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.workflows)
	unready := s.readinessLocked()
	s.mu.Unlock()
	status, code := "ok", http.StatusOK
	if unready != "" {
		status, code = unready, http.StatusServiceUnavailable
		w.Header().Set("Retry-After", retryAfter)
	}
	body := map[string]any{
		"status": status, "version": version.Fuscia, "workflows": n,
		"active_runs": s.eng.ActiveCount(), "parked_runs": s.parked.len(),
	}
	// The webhook paths are a map of what starts runs (an unsigned hook's path is all it
	// takes): given on the socket and to a caller with a valid token, not to anyone who
	// reaches the listener.
	if !anonymousOnListen(r) {
		body["webhooks"] = s.sortedPaths()
	}
	writeJSON(w, code, body)
}

type workflowInfo struct {
	Name        string        `json:"name"`
	File        string        `json:"file"`
	Description string        `json:"description"`
	Triggers    []triggerInfo `json:"triggers"`
	// Runs counts the workflow's last recentRuns runs by status; LastRun is the newest.
	Runs    map[string]int `json:"runs"`
	LastRun *lastRun       `json:"last_run"`
}

type triggerInfo struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Method   string `json:"method,omitempty"`
	Path     string `json:"path,omitempty"`
	Cron     string `json:"cron,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	Interval string `json:"interval,omitempty"`
	// Next is a schedule's next occurrence after now, by the schedules' clock.
	Next *time.Time `json:"next,omitempty"`
}

type lastRun struct {
	ExecutionID string     `json:"execution_id"`
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
}

// recentRuns is how many of a workflow's newest runs GET /v1/workflows counts by status.
const recentRuns = 100

func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	s.mu.Lock()
	out := make([]workflowInfo, 0, len(s.workflows))
	for _, l := range s.workflows {
		wf := l.prog.Workflow
		info := workflowInfo{Name: wf.Name, File: l.file, Description: wf.Settings.Description, Triggers: []triggerInfo{}}
		for _, t := range wf.Triggers {
			ti := triggerInfo{Type: t.Type, Name: t.Name}
			switch t.Type {
			case lang.TriggerWebhook:
				ti.Method, ti.Path = t.Method, t.Path
			case lang.TriggerSchedule:
				ti.Cron, ti.Timezone = t.Cron, t.Timezone
				// The same parser and clock as the schedule's goroutine (schedule.go).
				if sch, err := schedule.Parse(t.Cron, t.Timezone); err == nil {
					if next := sch.Next(now); !next.IsZero() {
						next = next.UTC()
						ti.Next = &next
					}
				}
			case lang.TriggerPoll:
				ti.Interval = t.Interval.String()
			}
			info.Triggers = append(info.Triggers, ti)
		}
		out = append(out, info)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b workflowInfo) int { return strings.Compare(a.Name, b.Name) })
	// The counts are read outside s.mu: the store's reads must not hold up the triggers.
	for i := range out {
		runs, err := s.recentRunsOf(out[i].Name)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": local.InternalError(s.logger, r, "cannot count the workflow's runs", err), "code": "internal"})
			return
		}
		out[i].Runs = map[string]int{}
		for _, sum := range runs {
			out[i].Runs[sum.Status]++
		}
		if len(runs) > 0 {
			last := runs[0]
			out[i].LastRun = &lastRun{ExecutionID: last.ID, Status: last.Status, StartedAt: last.StartedAt, FinishedAt: last.FinishedAt}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"workflows": out, "errors": s.loadErrorList()})
}

// recentRunsOf returns the newest recentRuns runs of workflow name, newest first.
func (s *Server) recentRunsOf(name string) ([]journal.Summary, error) {
	if s.store == nil {
		return nil, nil
	}
	return s.store.List(journal.Filter{Workflow: name, Limit: recentRuns})
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
	if err := bounds.CheckJSON(req.Payload); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the payload is JSON that Fuscia does not take: " + err.Error(), "code": "invalid"})
		return
	}
	st, err := s.startManual(r.PathValue("name"), req.Trigger, req.Payload)
	switch {
	case refuseStart(w, st, err):
	case errors.Is(err, errUnknownWorkflow), errors.Is(err, errNoTrigger):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error(), "code": "not_found"})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": local.InternalError(s.logger, r, "cannot start the run", err), "code": "internal"})
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
