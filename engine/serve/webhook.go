package serve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/bounds"
	"github.com/fuscia/fuscia/internal/jsonenc"
	"github.com/fuscia/fuscia/internal/stackgrow"
	"github.com/fuscia/fuscia/lang"
)

// hook is a webhook route: the trigger and the loaded workflow version it starts.
type hook struct {
	l *loaded
	t *lang.Trigger
}

// reservedPrefixes are the API's paths: a webhook cannot take them.
var reservedPrefixes = []string{"/v1/", "/metrics"}

// hookConflictsLocked lists the webhook paths of l that another workflow or the API holds;
// the routes of moved (a version l replaces from a file that is gone; may be nil) are l's to take.
func (s *Server) hookConflictsLocked(l, moved *loaded) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range l.prog.Workflow.Triggers {
		if t.Type != lang.TriggerWebhook {
			continue
		}
		for _, p := range reservedPrefixes {
			if strings.HasPrefix(t.Path, p) || t.Path == strings.TrimSuffix(p, "/") {
				out = append(out, fmt.Sprintf("trigger %q: the path %s is the API's; choose another", t.Name, t.Path))
			}
		}
		if isUIPath(t.Path) {
			out = append(out, fmt.Sprintf("trigger %q: the path %s is the web UI's; choose another", t.Name, t.Path))
		}
		if seen[t.Path] {
			out = append(out, fmt.Sprintf("trigger %q: the path %s is used by another webhook of the same workflow", t.Name, t.Path))
		}
		seen[t.Path] = true
		if h := s.hooks[t.Path]; h != nil && h.l.file != l.file && h.l != moved {
			out = append(out, fmt.Sprintf("trigger %q: the path %s is already served for workflow %s (%s)", t.Name, t.Path, h.l.prog.Workflow.Name, h.l.file))
		}
	}
	return out
}

// routeHooksLocked replaces the webhook routes of the versions replaced with l's (l may be nil),
// under one lock: a request finds the old route or the new one, never none.
func (s *Server) routeHooksLocked(l *loaded, replaced ...*loaded) {
	for path, h := range s.hooks {
		for _, old := range replaced {
			if old != nil && h.l == old {
				delete(s.hooks, path)
			}
		}
	}
	if l == nil {
		return
	}
	for _, t := range l.prog.Workflow.Triggers {
		if t.Type == lang.TriggerWebhook {
			s.hooks[t.Path] = &hook{l: l, t: t}
		}
	}
}

// serveWebhook serves the webhook triggers (ServeAPI routes every path outside /v1/ here):
// docs/engine.md's table of answers. While serve starts or stops, every path answers 503 with
// Retry-After (readiness.go): a path is only unknown (404) once every file has been loaded.
func (s *Server) serveWebhook(w http.ResponseWriter, r *http.Request) {
	// Starting the run decodes the payload into cty, whose names go through x/text's norm,
	// deep enough to grow a connection goroutine's stack mid-call: a new connection's, or one
	// a collection shrank. Growing it here copies a dozen frames instead of thirty.
	stackgrow.Reserve8K()
	s.mu.Lock()
	h := s.hooks[r.URL.Path]
	unready := s.readinessLocked()
	s.mu.Unlock()
	if unready != "" {
		if h != nil {
			s.cfg.Metrics.TriggerFired(s.ctx, h.l.prog.Workflow.Name, h.t.Name, h.t.Type, "refused")
		}
		unavailable(w, unready)
		return
	}
	if h == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no webhook at %s", r.URL.Path)})
		return
	}
	wf, t := h.l.prog.Workflow, h.t
	refuse := func(status int, body map[string]any) {
		s.cfg.Metrics.TriggerFired(s.ctx, wf.Name, t.Name, t.Type, "refused")
		writeJSON(w, status, body)
	}
	if r.Method != t.Method {
		w.Header().Set("Allow", t.Method)
		refuse(http.StatusMethodNotAllowed, map[string]any{"error": fmt.Sprintf("%s takes %s requests, not %s", t.Path, t.Method, r.Method)})
		return
	}
	// max_body_bytes bounds the body; the query and headers, which go into the run's payload
	// too, are held to the same number, but never to less than minHeaderRoom: a hook with a
	// small body limit still takes ordinary headers (docs/reference/api.md, "Webhooks").
	if n, most := queryAndHeaderBytes(r), max(t.MaxBodyBytes, minHeaderRoom); n > most {
		refuse(http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("the query and headers (%d bytes) are over %d bytes (max_body_bytes, and at least %d)", n, most, minHeaderRoom)})
		return
	}
	tooLarge := func() map[string]any {
		return map[string]any{"error": fmt.Sprintf("the body is over max_body_bytes (%d bytes)", t.MaxBodyBytes)}
	}
	if r.ContentLength > t.MaxBodyBytes {
		refuse(http.StatusRequestEntityTooLarge, tooLarge())
		return
	}
	// What the body may cost: its announced length, else the hook's bound. Bodies being read
	// are held in memory before the signature is checked, so their sum is bounded (a thousand
	// senders that announce 1 MiB and stall held 1.3 GB), and each must keep coming: past a
	// few seconds, at no less than bodyMinRate.
	need := t.MaxBodyBytes
	if r.ContentLength >= 0 {
		need = r.ContentLength
	}
	if !s.takeBodyBudget(need) {
		w.Header().Set("Retry-After", "1")
		refuse(http.StatusServiceUnavailable, map[string]any{"error": "too many webhook bodies are arriving at once; retry in a second", "code": "busy"})
		return
	}
	if limit := readTimeoutOf(r); limit > 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(min(bodyDeadline(need), limit)))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, t.MaxBodyBytes))
	s.bodies.Add(-need)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			refuse(http.StatusRequestEntityTooLarge, tooLarge())
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The listener's read timeout (listen.go): the sender stalled mid-body.
			w.Header().Set("Connection", "close")
			refuse(http.StatusRequestTimeout, map[string]any{"error": "the body did not arrive in time"})
		default:
			refuse(http.StatusBadRequest, map[string]any{"error": "cannot read the body: " + err.Error()})
		}
		return
	}
	if t.HMAC != nil {
		secret, err := s.eng.Secret(wf, t.HMAC.Secret)
		if err == nil && strings.TrimSpace(secret) == "" {
			err = errors.New("the secret is empty, and a key of nothing would let anyone sign")
		}
		if err != nil {
			s.logger.Error("webhook refused: its HMAC secret cannot be read", "workflow", wf.Name, "trigger", t.Name, "error", err)
			refuse(http.StatusInternalServerError, map[string]any{"error": "the webhook's secret is not available on the server"})
			return
		}
		// One signature, and it must hold: with two, a proxy and the handler could each read
		// another one (a valid copy next to a forged header).
		if sigs := r.Header.Values(t.HMAC.Header); len(sigs) != 1 || !validSignature(body, []byte(secret), sigs[0]) {
			why := "missing or bad signature in " + t.HMAC.Header
			if len(sigs) > 1 {
				why = fmt.Sprintf("%d %s headers; send one signature", len(sigs), t.HMAC.Header)
			}
			refuse(http.StatusUnauthorized, map[string]any{"error": why})
			return
		}
	}
	payload, err := webhookPayload(r, body)
	if err != nil {
		refuse(http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	if t.Uses != nil {
		// Bounded, and ended by serve's stop: a trigger that never answers held the request
		// (and a stopping serve's answer) for as long as the sender waited.
		tctx, cancel := context.WithTimeout(r.Context(), s.cfg.WebhookTriggerTimeout)
		stopCall := context.AfterFunc(s.ctx, cancel)
		res := s.eng.InvokeTrigger(tctx, h.l.prog, t, task.TriggerEvent{Type: "webhook", Request: webhookEvent(r, body)},
			triggerLog(s.logger.With("workflow", wf.Name, "trigger", t.Type+"."+t.Name)))
		stopCall()
		expired := errors.Is(tctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case s.ctx.Err() != nil:
			unavailable(w, statusStopping)
			return
		case expired && r.Context().Err() == nil:
			refuse(http.StatusGatewayTimeout, map[string]any{"error": fmt.Sprintf("the webhook's trigger %s did not answer within %s; no run was started", t.Type+"."+t.Name, s.cfg.WebhookTriggerTimeout)})
			return
		}
		switch res.Type {
		case "completed":
			if len(res.Payload) > 0 {
				payload = res.Payload
			}
		case "pending":
			s.cfg.Metrics.TriggerFired(s.ctx, wf.Name, t.Name, t.Type, "pending")
			writeJSON(w, http.StatusOK, map[string]any{"started": false, "reason": "the trigger answered pending"})
			return
		default:
			if res.Kind == "validation" {
				refuse(http.StatusUnprocessableEntity, map[string]any{"error": res.Message})
				return
			}
			// The sender is not told why: the message may say what the component was refused
			// (a host, a path) or how it broke. The log has it, under the answer's ref.
			refuse(http.StatusInternalServerError, map[string]any{"error": local.InternalError(s.logger, r,
				"the webhook's trigger failed; no run was started", errors.New(res.Message),
				"workflow", wf.Name, "trigger", t.Type+"."+t.Name, "kind", res.Kind)})
			return
		}
	}
	st, err := s.start(h.l, journal.Trigger{Type: lang.TriggerWebhook, Name: t.Name, Payload: payload}, "")
	switch {
	case refuseStart(w, st, err):
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": local.InternalError(s.logger, r, "the webhook could not start a run", err, "workflow", wf.Name, "trigger", t.Name)})
	default:
		s.answerStarted(w, r, st)
	}
}

// refuseStart answers what any trigger's request can meet when its run does not start: 409 when
// on_overlap = "skip" refused it, 503 while serve drains. It reports whether it answered.
func refuseStart(w http.ResponseWriter, st Started, err error) bool {
	switch {
	case errors.Is(err, ErrSkipped):
		writeJSON(w, http.StatusConflict, map[string]any{"skipped": true, "reason": st.Skip})
	case errors.Is(err, engine.ErrDraining):
		// Stop began after the request passed the readiness check.
		unavailable(w, statusStopping)
	default:
		return false
	}
	return true
}

// answerStarted answers the request that started run st: with ?wait=true the run's end, else
// 202 with its id.
func (s *Server) answerStarted(w http.ResponseWriter, r *http.Request, st Started) {
	if wantWait(r) {
		s.answerWhenDone(w, r, st.ID, s.cfg.WebhookWait)
		return
	}
	var buf [96]byte
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(appendStartedAnswer(buf[:0], st))
}

// appendStartedAnswer appends the body of a 202, as writeJSON would encode it:
// {"execution_id": ID}, with "queued": true when the run is held back, and a newline. It is
// written by hand because it is written once per webhook run (docs/performance.md, item 4,
// session 18); TestStartedAnswerJSON holds it to encoding/json.
func appendStartedAnswer(b []byte, st Started) []byte {
	b = jsonenc.String(append(b, `{"execution_id":`...), st.ID)
	if st.Queued {
		b = append(b, `,"queued":true`...)
	}
	return append(b, "}\n"...)
}

func wantWait(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false // the usual webhook: no query to parse
	}
	v := r.URL.Query().Get("wait")
	return v == "true" || v == "1"
}

// answerWhenDone answers 200 with the execution object once run id ends, or 504 with its id
// after limit.
func (s *Server) answerWhenDone(w http.ResponseWriter, r *http.Request, id string, limit time.Duration) {
	// The request was read whole; what reads the connection now is the server's watch for the
	// client going away, which a read deadline would end as if it had: the request's context
	// was cancelled, and the client got an empty 200, after the body's deadline (5 s) or the
	// listener's read timeout (30 s, less than -webhook-wait). limit bounds the wait instead.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	done, stop := s.awaitEnd(id)
	defer stop()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		writeJSON(w, http.StatusGatewayTimeout, map[string]any{"execution_id": id,
			"error": fmt.Sprintf("the run did not end within %s; it goes on: fuscia show %s", limit, id)})
		return
	case <-r.Context().Done():
		return
	case <-s.ctx.Done():
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"execution_id": id, "error": "fuscia is shutting down; the run resumes at the next start"})
		return
	}
	ex, err := s.store.Execution(id)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"execution_id": id, "error": local.InternalError(s.logger, r, "cannot read the run", err, "execution_id", id)})
		return
	}
	writeJSON(w, http.StatusOK, ex)
}

// defaultWebhookTriggerTimeout bounds the call of a webhook's `uses` trigger (its validation of
// the request), as plan-time plugin calls are bounded.
const defaultWebhookTriggerTimeout = 30 * time.Second

// minHeaderRoom is the least a webhook's query and header lines together may hold, whatever
// its max_body_bytes.
const minHeaderRoom = 16 << 10

// The bounds on webhook bodies being read (docs/security.md, "HTTP listener").
const (
	// bodyBudget is how many bytes of webhook bodies may be read at once, all hooks together;
	// a body that would go past it is answered 503 with Retry-After, unless none is being read
	// (a hook's max_body_bytes may be larger).
	bodyBudget = 64 << 20
	// bodyGrace and bodyMinRate bound how long a body may take to arrive: bodyGrace, plus its
	// length at bodyMinRate bytes a second, at most the listener's read timeout.
	bodyGrace   = 5 * time.Second
	bodyMinRate = 64 << 10
)

// bodyDeadline is how long a body of n bytes may take to arrive (the listener's read timeout
// bounds it too).
func bodyDeadline(n int64) time.Duration {
	if n >= int64(time.Hour/time.Second)*bodyMinRate {
		return time.Hour
	}
	return bodyGrace + time.Duration(n)*time.Second/bodyMinRate
}

// takeBodyBudget reserves n bytes of bodyBudget for a body about to be read; false when they
// are not free.
func (s *Server) takeBodyBudget(n int64) bool {
	for {
		cur := s.bodies.Load()
		if cur > 0 && cur+n > bodyBudget {
			return false
		}
		if s.bodies.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// validSignature checks an HMAC-SHA256 of body with secret, sent hex encoded with or without
// a "sha256=" prefix, in constant time.
func validSignature(body, secret []byte, header string) bool {
	sig := strings.TrimSpace(header)
	sig = strings.TrimPrefix(sig, "sha256=")
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// webhookPayload is the run's trigger.payload: method, path, query, headers and the body,
// parsed when its media type is JSON. A body that is not UTF-8 (binary, or text in another
// charset) cannot be a JSON string without losing bytes (encoding/json would replace them with
// U+FFFD, and the run would see other bytes than the ones signed): it goes, exactly, as
// body_base64 (standard alphabet, padded), with body null.
func webhookPayload(r *http.Request, body []byte) (json.RawMessage, error) {
	// The bytes are encoding/json's for the struct {method, path, query, headers, body,
	// body_base64 (omitempty)}, appended by hand: encoding/json's reflection over it was ≈ 2.5%
	// of serve's CPU per run (docs/performance.md, item 4, session 18). TestWebhookPayloadJSON
	// holds it to encoding/json.
	b := make([]byte, 0, 256+len(body))
	b = jsonenc.String(append(b, `{"method":`...), r.Method)
	b = jsonenc.String(append(b, `,"path":`...), r.URL.Path)
	b = jsonenc.StringMap(append(b, `,"query":`...), joinValues(r.URL.Query()))
	b = jsonenc.StringMap(append(b, `,"headers":`...), requestHeaders(r))
	b = append(b, `,"body":`...)
	jsonType := isJSON(r.Header.Get("Content-Type"))
	switch {
	case jsonType && len(bytes.TrimSpace(body)) == 0:
		b = append(b, "null"...)
	case jsonType && utf8.Valid(body):
		var err error
		if b, err = jsonenc.Raw(b, body); err != nil {
			return nil, errNotJSON
		}
		// What a run could not keep, or would pay for without end: 400, not a run started.
		if err := bounds.CheckJSON(body); err != nil {
			return nil, fmt.Errorf("the body is JSON that Fuscia does not take: %w", err)
		}
	case jsonType && !json.Valid(body):
		return nil, errNotJSON
	case !utf8.Valid(body): // JSON too, when its strings hold bytes that are not UTF-8
		b = append(b, `null,"body_base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, body)
		b = append(b, '"')
	default:
		b = jsonenc.String(b, string(body))
	}
	return append(b, '}'), nil
}

var errNotJSON = errors.New("the body is not valid JSON although its Content-Type says JSON")

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// queryAndHeaderBytes is the size of r's query and of its header lines ("Name: value\r\n",
// Host among them): what a webhook puts into the run's payload besides the body.
func queryAndHeaderBytes(r *http.Request) int64 {
	n := int64(len(r.URL.RawQuery))
	if r.Host != "" {
		n += int64(len("Host: \r\n") + len(r.Host))
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += int64(len(k) + len(": \r\n") + len(v))
		}
	}
	return n
}

// requestHeaders is every header the sender sent, Host among them (net/http moves it out of
// r.Header), with repeated ones joined.
func requestHeaders(r *http.Request) map[string]string {
	h := joinValues(r.Header)
	if r.Host != "" {
		h["Host"] = r.Host
	}
	return h
}

// joinValues turns a header or query map into name → values joined with ", ".
func joinValues(m map[string][]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, vs := range m {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// webhookEvent is the request as a webhook trigger component or plugin sees it.
func webhookEvent(r *http.Request, body []byte) *task.WebhookRequest {
	return &task.WebhookRequest{
		Method: r.Method, Path: r.URL.Path,
		Query: joinValues(r.URL.Query()), Headers: requestHeaders(r),
		BodyBase64: base64.StdEncoding.EncodeToString(body),
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sortedPaths lists the webhook paths, for the health answer.
func (s *Server) sortedPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.hooks))
	for p := range s.hooks {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
