package hostabi

// The world of hostabi/wit/fuscia.wit in Go: its records and variants as Go types, how a
// request of docs/reference/abi-v1.md becomes the world's `request`, and how the world's
// `response` becomes the JSON response the engine reads. So the engine speaks one language to
// both kinds of component, and a component and a core module that compute the same thing
// answer the same bytes.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fuscia/fuscia/lang/schema"
)

// The world's names. They never change: a component built against fuscia:host@1.0.0 must run
// on every later host. Additions go into a new minor version whose host still defines these.
const (
	World          = "fuscia:host/component@1.0.0"
	HostInterface  = "fuscia:host/host@1.0.0"
	TypesInterface = "fuscia:host/types@1.0.0"
)

// Request is the world's `request`.
type Request struct {
	Name    string
	Target  Target
	Context CallContext
	// State is the JSON of the last continue result; nil on a first call.
	State json.RawMessage
}

// Target is the `target` variant: Task set for a task (its input JSON), Trigger for a trigger.
type Target struct {
	Task    json.RawMessage
	Trigger *Event
}

// Event is the `event` variant: Webhook nil for a poll.
type Event struct {
	Webhook *WebhookRequest
}

// WebhookRequest is the `webhook-request` record.
type WebhookRequest struct {
	Method, Path   string
	Query, Headers [][2]string
	Body           []byte
}

// CallContext is the `call-context` record.
type CallContext struct {
	ExecutionID, Workflow, Node, TaskID string
	Attempt                             uint32
	Iteration                           *uint32
}

// Response is the world's `response` as the JSON document of docs/reference/abi-v1.md
// ({"type": …}); Trigger says which of its two cases the guest answered.
type Response struct {
	Trigger bool
	JSON    json.RawMessage
}

// abiRequest is docs/reference/abi-v1.md's request document.
type abiRequest struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Context struct {
		ExecutionID string  `json:"execution_id"`
		Workflow    string  `json:"workflow"`
		Node        string  `json:"node"`
		TaskID      string  `json:"task_id"`
		Attempt     uint32  `json:"attempt"`
		Iteration   *uint32 `json:"iteration"`
	} `json:"context"`
	Input json.RawMessage `json:"input"`
	Event *struct {
		Type    string `json:"type"`
		Request *struct {
			Method     string            `json:"method"`
			Path       string            `json:"path"`
			Query      map[string]string `json:"query"`
			Headers    map[string]string `json:"headers"`
			BodyBase64 string            `json:"body_base64"`
		} `json:"request"`
	} `json:"event"`
	State json.RawMessage `json:"state"`
}

// ParseRequest reads an ABI v1 request document.
func ParseRequest(doc []byte) (Request, error) {
	var a abiRequest
	if err := json.Unmarshal(doc, &a); err != nil {
		return Request{}, fmt.Errorf("the request is not an ABI v1 request document: %w", err)
	}
	r := Request{Name: a.Name, Context: CallContext{
		ExecutionID: a.Context.ExecutionID, Workflow: a.Context.Workflow, Node: a.Context.Node,
		TaskID: a.Context.TaskID, Attempt: a.Context.Attempt, Iteration: a.Context.Iteration,
	}}
	if !isNull(a.State) {
		r.State = a.State
	}
	switch a.Kind {
	case "task":
		r.Target.Task = a.Input
		if isNull(r.Target.Task) {
			r.Target.Task = json.RawMessage("null")
		}
	case "trigger":
		ev := &Event{}
		if a.Event != nil && a.Event.Type == "webhook" {
			if a.Event.Request == nil {
				return Request{}, fmt.Errorf("the webhook event has no request")
			}
			q := a.Event.Request
			body, err := base64.StdEncoding.DecodeString(q.BodyBase64)
			if err != nil {
				return Request{}, fmt.Errorf("the webhook request's body_base64: %w", err)
			}
			if len(body) > maxComponentBytes {
				// A list<u8> costs the host about 70 bytes a byte as it crosses (component_imports.go).
				return Request{}, fmt.Errorf("the webhook request's body is %s; a component trigger takes at most %s: lower the trigger's max_body_bytes",
					schema.FormatSize(int64(len(body))), schema.FormatSize(maxComponentBytes))
			}
			ev.Webhook = &WebhookRequest{Method: q.Method, Path: q.Path, Query: pairs(q.Query), Headers: pairs(q.Headers), Body: body}
		} else if a.Event == nil || a.Event.Type != "poll" {
			return Request{}, fmt.Errorf("the trigger request's event is neither a poll nor a webhook")
		}
		r.Target.Trigger = ev
	default:
		return Request{}, fmt.Errorf("the request's kind is %q, not task or trigger", a.Kind)
	}
	return r, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// pairs is m as a list sorted by key, so that a guest sees the same order every time.
func pairs(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// lower writes r into v as the world's `request` record. Field order is the WIT's: wasmtime
// checks a record's fields by name in order.
func (r *Request) lower(v *cval) {
	f := setRecord(v, "name", "target", "context", "state")
	setString(f[0], r.Name)
	var payload cval
	if r.Target.Trigger != nil {
		var ev cval
		if w := r.Target.Trigger.Webhook; w != nil {
			var req cval
			wf := setRecord(&req, "method", "path", "query", "headers", "body")
			setString(wf[0], w.Method)
			setString(wf[1], w.Path)
			setPairs(wf[2], w.Query)
			setPairs(wf[3], w.Headers)
			setBytes(wf[4], w.Body)
			setCase(&ev, "webhook", &req)
		} else {
			setCase(&ev, "poll", nil)
		}
		payload = ev
		setCase(f[1], "trigger", &payload)
	} else {
		setString(&payload, validUTF8(string(r.Target.Task)))
		setCase(f[1], "task", &payload)
	}
	cf := setRecord(f[2], "execution-id", "workflow", "node", "task-id", "attempt", "iteration")
	setString(cf[0], r.Context.ExecutionID)
	setString(cf[1], r.Context.Workflow)
	setString(cf[2], r.Context.Node)
	setString(cf[3], r.Context.TaskID)
	setU32(cf[4], r.Context.Attempt)
	if r.Context.Iteration != nil {
		var it cval
		setU32(&it, *r.Context.Iteration)
		setOption(cf[5], &it)
	} else {
		setOption(cf[5], nil)
	}
	if r.State != nil {
		var st cval
		setString(&st, validUTF8(string(r.State)))
		setOption(f[3], &st)
	} else {
		setOption(f[3], nil)
	}
}

func setPairs(v *cval, ps [][2]string) {
	list := setList(v, len(ps))
	for i, p := range ps {
		t := setTuple(&list[i], 2)
		setString(&t[0], validUTF8(p[0]))
		setString(&t[1], validUTF8(p[1]))
	}
}

func getPairs(v *cval, where string) (map[string]string, error) {
	list, err := getList(v, kindList, where)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list))
	for i := range list {
		t, err := getList(&list[i], kindTuple, where)
		if err != nil {
			return nil, err
		}
		if len(t) != 2 {
			return nil, fmt.Errorf("%s: a tuple of %d values, not a (name, value) pair", where, len(t))
		}
		k, err := getString(&t[0], where)
		if err != nil {
			return nil, err
		}
		val, err := getString(&t[1], where)
		if err != nil {
			return nil, err
		}
		out[k] = val
	}
	return out, nil
}

// validUTF8 is s with invalid UTF-8 replaced: a component-model string must be valid UTF-8.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// liftResponse reads the world's `response` into its ABI v1 JSON document.
func liftResponse(v *cval) (Response, error) {
	side, payload, err := getCase(v, "the response")
	if err != nil {
		return Response{}, err
	}
	if payload == nil {
		return Response{}, fmt.Errorf("the response case %s has no payload", side)
	}
	kind, inner, err := getCase(payload, "the "+side+" response")
	if err != nil {
		return Response{}, err
	}
	doc := map[string]any{"type": kind}
	jsonField := func(name, key string, v *cval) error {
		s, err := getString(v, name)
		if err != nil {
			return err
		}
		if !json.Valid([]byte(s)) {
			return fmt.Errorf("%s is not valid JSON: %.80q", name, s)
		}
		doc[key] = json.RawMessage(s)
		return nil
	}
	need := func() error {
		if inner == nil {
			return fmt.Errorf("the %s response %s has no payload", side, kind)
		}
		return nil
	}
	switch side + "." + kind {
	case "task.success":
		if err := need(); err != nil {
			return Response{}, err
		}
		err = jsonField("the success output", "output", inner)
	case "task.skip":
		if err := need(); err != nil {
			return Response{}, err
		}
		var reason string
		reason, err = getString(inner, "the skip reason")
		doc["reason"] = reason
	case "task.branch":
		if err := need(); err != nil {
			return Response{}, err
		}
		err = liftRecord(inner, "the branch result", func(f map[string]*cval) error {
			sel, err := getString(field(f, "selected"), "branch-result.selected")
			if err != nil {
				return err
			}
			doc["selected"] = sel
			return jsonField("branch-result.output", "output", field(f, "output"))
		})
	case "task.continue":
		if err := need(); err != nil {
			return Response{}, err
		}
		err = liftRecord(inner, "the continue result", func(f map[string]*cval) error {
			if err := jsonField("continue-result.state", "state", field(f, "state")); err != nil {
				return err
			}
			if err := jsonField("continue-result.output", "output", field(f, "output")); err != nil {
				return err
			}
			p, err := getF64(field(f, "progress"), "continue-result.progress")
			if err != nil {
				return err
			}
			if math.IsNaN(p) || math.IsInf(p, 0) {
				return fmt.Errorf("continue-result.progress is %v; give a number (0 to 1 says how far the task is)", p)
			}
			d, err := getU64(field(f, "delay-ms"), "continue-result.delay-ms")
			if err != nil {
				return err
			}
			doc["progress"], doc["delay_ms"] = p, clampMillis(d)
			return nil
		})
	case "task.error", "trigger.error":
		if err := need(); err != nil {
			return Response{}, err
		}
		err = liftCallError(inner, doc)
	case "trigger.completed":
		if err := need(); err != nil {
			return Response{}, err
		}
		err = jsonField("the completed payload", "payload", inner)
	case "trigger.pending":
	default:
		return Response{}, fmt.Errorf("the response is %s.%s, which world %s does not have", side, kind, World)
	}
	if err != nil {
		return Response{}, err
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return Response{}, err
	}
	return Response{Trigger: side == "trigger", JSON: out}, nil
}

// clampMillis is a u64 of milliseconds the world allows, within what a Go duration (and the
// result's int64) holds: about 292 years, which is as good as forever for a delay.
func clampMillis(ms uint64) uint64 {
	return min(ms, uint64(math.MaxInt64/int64(time.Millisecond)))
}

// field is f[name], or an empty value that fails every getter's kind check.
func field(f map[string]*cval, name string) *cval {
	if v, ok := f[name]; ok {
		return v
	}
	return &cval{kind: kindMissing}
}

func liftRecord(v *cval, where string, read func(map[string]*cval) error) error {
	f, err := getRecord(v, where)
	if err != nil {
		return err
	}
	return read(f)
}

func liftCallError(v *cval, doc map[string]any) error {
	return liftRecord(v, "the call error", func(f map[string]*cval) error {
		kind, err := getEnum(field(f, "kind"), "call-error.kind")
		if err != nil {
			return err
		}
		msg, err := getString(field(f, "message"), "call-error.message")
		if err != nil {
			return err
		}
		if strings.TrimSpace(msg) == "" {
			// "task.a failed: ." says nothing; this at least says whose silence it is.
			msg = fmt.Sprintf("the component answered a %s error without a message", kind)
		}
		doc["kind"], doc["message"] = kind, msg
		hint, err := getOption(field(f, "backoff-hint-ms"), "call-error.backoff-hint-ms")
		if err != nil {
			return err
		}
		if hint != nil {
			ms, err := getU64(hint, "call-error.backoff-hint-ms")
			if err != nil {
				return err
			}
			doc["backoff_hint_ms"] = clampMillis(ms)
		}
		partial, err := getOption(field(f, "partial-output"), "call-error.partial-output")
		if err != nil {
			return err
		}
		if partial != nil {
			s, err := getString(partial, "call-error.partial-output")
			if err != nil {
				return err
			}
			if !json.Valid([]byte(s)) {
				return fmt.Errorf("call-error.partial-output is not valid JSON: %.80q", s)
			}
			doc["partial_output"] = json.RawMessage(s)
		}
		return nil
	})
}
