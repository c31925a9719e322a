package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// wireABI is the version of the messages below; the coordinator publishes it and a worker of
// another one refuses to join.
const wireABI = 2

// Headers in clear on every message; the body is sealed with the cluster key, with the
// attempt's id as its additional data.
const (
	hdrAttempt = "Fuscia-Attempt"
	hdrKey     = "Fuscia-Key"
	hdrWorker  = "Fuscia-Worker"
)

// cancelAAD is the additional data of a sealed cancel, whose plaintext is the attempt's id: a
// cancel opens only as a cancel, and only one the coordinator sealed stops an attempt.
var cancelAAD = []byte("fuscia-cancel")

// componentAAD is the additional data of a sealed component package in the object store: the
// object's name (its digest) under a label, so a package opens only under its own digest.
func componentAAD(digest string) []byte { return []byte("fuscia-component\x00" + digest) }

// attemptID names one call of one attempt: the task's instance (TaskID holds the execution
// and the instance's address), the attempt and the call within it. It is stable across a
// coordinator's restart, so a re-attached call finds its result and a second publication
// of it is recognized.
func attemptID(c task.Call) string {
	h := sha256.New()
	h.Write([]byte(c.TaskID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(c.Attempt)))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(c.Seq)))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// blockSpec is what a worker needs to bind a component or plugin block without the workflow:
// the block as written, the version and digest it runs (the plan's lock, or what the
// coordinator resolved), and its config evaluated by the coordinator (variables and secrets
// included; sealed in transit).
type blockSpec struct {
	Kind         lang.UsesKind   `json:"kind"`
	Local        string          `json:"local"`
	Source       string          `json:"source"`
	Constraint   string          `json:"constraint,omitempty"`
	Version      string          `json:"version,omitempty"`
	Digest       string          `json:"digest,omitempty"`
	Config       json.RawMessage `json:"config,omitempty"`
	AllowedHosts []string        `json:"allowed_hosts"`
	AllowedPaths []string        `json:"allowed_paths"`
	MaxMemory    int64           `json:"max_memory,omitempty"`
	MaxFuel      uint64          `json:"max_fuel,omitempty"`
	// WorkflowFile is the coordinator's path of the workflow: a worker on the same machine
	// (the coordinator's own) also looks for plugins in ./plugins beside it, as the
	// coordinator's plan did.
	WorkflowFile string `json:"workflow_file,omitempty"`
	// Secrets are the config's sensitive string values, for the worker to scrub from its log.
	Secrets []string `json:"secrets,omitempty"`
}

// attemptMsg is a work message: one call of a task.
type attemptMsg struct {
	ID          string          `json:"id"`
	Version     string          `json:"version"`
	Kind        lang.UsesKind   `json:"kind"`
	Local       string          `json:"local,omitempty"`
	Name        string          `json:"name"`
	Block       *blockSpec      `json:"block,omitempty"`
	ExecutionID string          `json:"execution_id"`
	Workflow    string          `json:"workflow"`
	Node        string          `json:"node"`
	TaskID      string          `json:"task_id"`
	Attempt     int             `json:"attempt"`
	Seq         int             `json:"seq"`
	Iteration   *int            `json:"iteration,omitempty"`
	Input       json.RawMessage `json:"input"`
	State       json.RawMessage `json:"state,omitempty"`
	Sensitive   []string        `json:"sensitive,omitempty"`
	// TimeoutMs is what remained of the attempt's timeout when it was sent: the worker stops
	// the attempt a little after it, should the coordinator's cancel not reach it.
	TimeoutMs int64 `json:"timeout_ms"`
	// Reattach: a coordinator that restarted sent the call again; a worker first looks for its
	// stored result.
	Reattach bool   `json:"reattach,omitempty"`
	Pool     string `json:"pool"`
	// SentAt is when the coordinator sent the message (Unix milliseconds): a worker drops one
	// older than maxAttemptAge, whose result would no longer be stored to show that it ran.
	SentAt int64 `json:"sent_at"`
	// Secrets are the input's sensitive string values (task.Call.Sensitive), for the worker
	// to scrub from its own log.
	Secrets []string `json:"secrets,omitempty"`
}

func (a *attemptMsg) uses() lang.Uses { return lang.Uses{Kind: a.Kind, Local: a.Local, Name: a.Name} }

// logLine is a line a task logged on its worker; it travels with the result.
type logLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// resultMsg is a worker's answer to one attempt call.
type resultMsg struct {
	ID     string         `json:"id"`
	Worker string         `json:"worker"`
	Result outcome.Result `json:"result"`
	Logs   []logLine      `json:"logs,omitempty"`
	// Delivery is the work message's delivery count when the worker answered.
	Delivery uint64 `json:"delivery"`
	// Clean marks an attempt_interrupted answer of a worker that stopped cleanly (its
	// shutdown): it does not count towards worker_lost.
	Clean bool `json:"clean,omitempty"`
}
