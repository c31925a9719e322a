package serve

import (
	"net/http"

	"github.com/fuscia/fuscia/internal/version"
)

// Readiness: what serve's TCP listener answers before it serves its workflows and while it
// stops (docs/serve.md, "Readiness"). A webhook sender reads 404 as "no such hook" and most
// give up; a load balancer reads a refused connection as "down". A (re)start or a drain is
// neither: it is "come back in a moment", which HTTP says with 503 and Retry-After. So the
// listener is bound before the store is opened, and until Start has loaded the workflows and
// resumed the unfinished runs every webhook (known yet or not), the manual-start API and the
// health check answer 503 with Retry-After; 404 only comes once every file has been loaded.

// retryAfter is the Retry-After, in seconds, of every 503 that readiness answers: loading the
// workflows and resuming the runs takes about that, and a sender that honours it costs one
// cheap answer a second.
const retryAfter = "1"

// The status of a 503 body, and of the health answer.
const (
	statusStarting = "starting"
	statusStopping = "stopping"
)

// Handler is what serve's TCP listener answers, from the moment it is bound. Until ServeAPI
// gives it the API (the store is not open yet) every request is answered 503 "starting" with
// Retry-After; then /v1/… goes to the API and every other path to the webhooks.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.front.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/v1/health" {
			// The engine does not exist yet: nothing to count.
			w.Header().Set("Retry-After", retryAfter)
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": statusStarting, "version": version.Fuscia})
			return
		}
		unavailable(w, statusStarting)
	})
}

// ServeAPI hands Handler over to api (the owner's API on the open store, engine/local) for
// /v1/…, behind the API token check (auth.go), and to the webhooks for every other path. Call
// it once, after Attach and SetLogger.
func (s *Server) ServeAPI(api http.Handler) {
	mux := http.NewServeMux()
	mux.Handle("/v1/", s.requireToken(api))
	mux.HandleFunc("/", s.serveWebhook)
	var h http.Handler = mux
	s.front.Store(&h)
}

// readiness is "" when serve takes requests that start runs, else statusStarting or
// statusStopping.
func (s *Server) readiness() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readinessLocked()
}

func (s *Server) readinessLocked() string {
	switch {
	case s.stopped:
		return statusStopping
	case !s.started:
		return statusStarting
	}
	return ""
}

// unavailable answers 503 with Retry-After: serve is starting or stopping.
func unavailable(w http.ResponseWriter, status string) {
	msg := "fuscia is starting: its workflows are not loaded yet; retry shortly"
	if status == statusStopping {
		msg = "fuscia is shutting down"
	}
	w.Header().Set("Retry-After", retryAfter)
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": msg, "status": status})
}
