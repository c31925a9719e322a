package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/addrs"
)

// maxViewItems bounds the instances or iterations a replay allocates for one node, so that a
// corrupt index cannot exhaust memory; entries beyond it are not shown.
const maxViewItems = 1 << 22

// Execution rebuilds run id from its summary and its journal (ErrNotFound when there is none).
func (s *Store) Execution(id string) (*Execution, error) {
	var x *Execution
	err := s.view(func(txn *badger.Txn) error {
		sum, err := s.getSummary(txn, id)
		if err != nil {
			return err
		}
		r := newReplay(sum)
		err = s.eachValue(txn, runJournalPrefix(id), 0, func(v []byte) error {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("execution %s: decode entry: %w", id, err)
			}
			r.apply(&e)
			return nil
		})
		composeForEachOutputs(r.x.Nodes)
		for _, n := range r.x.Nodes {
			for _, it := range n.Iterations {
				composeForEachOutputs(it.Nodes)
			}
		}
		x = r.x
		return err
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

var emptyObject = json.RawMessage(`{}`)

// replay applies journal entries to an Execution.
type replay struct {
	x      *Execution
	bodies map[string][]string // loop address → local addresses of its body (RunInfo.Bodies)
}

// newReplay starts from the summary, which stands in for a missing RunStarted entry.
func newReplay(sum *Summary) *replay {
	return &replay{x: &Execution{
		ID:         sum.ID,
		Workflow:   sum.Workflow,
		Status:     sum.Status,
		Trigger:    Trigger{Type: sum.Trigger.Type, Name: sum.Trigger.Name, Payload: emptyObject},
		StartedAt:  sum.StartedAt,
		FinishedAt: sum.FinishedAt,
		Parent:     sum.Parent,
		Outputs:    emptyObject,
		Nodes:      map[string]*NodeView{},
	}}
}

func (r *replay) apply(e *Entry) {
	x := r.x
	switch e.Type {
	case RunStarted:
		if e.Run == nil {
			return
		}
		x.Workflow, x.Status, x.StartedAt = e.Run.Workflow, StatusRunning, e.Time
		x.Trigger = e.Run.Trigger
		if len(x.Trigger.Payload) == 0 {
			x.Trigger.Payload = emptyObject
		}
		x.Parent = nil
		if e.Run.Parent != "" {
			p := e.Run.Parent
			x.Parent = &p
		}
		x.Outputs = emptyObject
		r.bodies = e.Run.Bodies
		for _, addr := range e.Run.Nodes {
			if x.Nodes[addr] == nil {
				x.Nodes[addr] = &NodeView{Status: StatusPending}
			}
		}
	case RunStatus:
		if e.Status != "" {
			x.Status = e.Status
		}
	case RunFinished:
		if e.Status != "" {
			x.Status = e.Status
		}
		if len(e.Outputs) > 0 {
			x.Outputs = e.Outputs
		}
		x.Error = e.Error
		x.FinishedAt = timePtr(e.Time)
	case NodeStarted, AttemptStarted, AttemptContinued, AttemptFailed, AttemptInterrupted, NodeWaiting, WaitResolved, NodeFinished:
		if t := r.locate(e); t != nil {
			r.update(t, e)
		}
	}
	// Unknown entry types come from a newer writer: ignore them.
}

// target points at the fields of the view (node, instance or iteration) an entry addresses;
// nil pointers are fields that view does not have.
type target struct {
	status                      *string
	attempts                    *int
	output                      *json.RawMessage
	err                         **outcome.Error
	reason                      *string
	started, finished, deadline **time.Time
	childID                     *string
	answeredBy                  *string
	node                        *NodeView // a node view: NodeStarted's Total preallocates in it
	loop                        string    // the node's address when it is a loop
}

func nodeTarget(n *NodeView, loop string) *target {
	return &target{status: &n.Status, attempts: &n.Attempts, output: &n.Output, err: &n.Error,
		reason: &n.Reason, started: &n.StartedAt, finished: &n.FinishedAt, deadline: &n.Deadline,
		childID: &n.ChildID, answeredBy: &n.AnsweredBy, node: n, loop: loop}
}

func instanceTarget(in *InstanceView) *target {
	return &target{status: &in.Status, attempts: &in.Attempts, output: &in.Output, err: &in.Error,
		reason: &in.Reason, started: &in.StartedAt, finished: &in.FinishedAt}
}

func iterationTarget(it *IterationView) *target {
	return &target{status: &it.Status, output: &it.Output, err: &it.Error,
		started: &it.StartedAt, finished: &it.FinishedAt}
}

// locate finds (creating it as pending when needed) the view an entry addresses. An entry whose
// node is not an address (none that fuscia writes) has no view to go in and is not shown.
func (r *replay) locate(e *Entry) *target {
	if e.Node == "" {
		return nil
	}
	inst, err := e.Instance()
	if err != nil {
		return nil
	}
	for _, i := range inst.Index {
		if i >= maxViewItems {
			return nil
		}
	}
	if inst.Node.Loop == "" {
		addr := inst.Node.String()
		n := nodeIn(r.x.Nodes, addr)
		loop := ""
		if inst.Node.Kind == addrs.KindLoop {
			loop = addr
		}
		switch {
		case len(inst.Index) == 0:
			return nodeTarget(n, loop)
		case len(inst.Index) == 1 && loop != "":
			it := r.iteration(n, loop, inst.Index[0])
			setKey(&it.Key, e.Key)
			return iterationTarget(it)
		case len(inst.Index) == 1:
			in := instance(n, inst.Index[0])
			setKey(&in.Key, e.Key)
			return instanceTarget(in)
		}
		return nil
	}
	// A body node: its instance in iteration Index[0], or item Index[1] of it.
	if len(inst.Index) == 0 || len(inst.Index) > 2 {
		return nil
	}
	loopAddr := inst.Node.LoopAddr().String()
	it := r.iteration(nodeIn(r.x.Nodes, loopAddr), loopAddr, inst.Index[0])
	n := nodeIn(it.Nodes, inst.Node.Local())
	if len(inst.Index) == 1 {
		setKey(&it.Key, e.Key)
		return nodeTarget(n, "")
	}
	in := instance(n, inst.Index[1])
	setKey(&in.Key, e.Key)
	return instanceTarget(in)
}

// update applies a node entry to the view t.
func (r *replay) update(t *target, e *Entry) {
	switch e.Type {
	case NodeStarted:
		*t.status = StatusRunning
		setStarted(t, e.Time)
		if e.ChildID != "" && t.childID != nil {
			*t.childID = e.ChildID
		}
		if e.Total > 0 && t.node != nil {
			r.preallocate(t.node, t.loop, e.Total)
		}
	case AttemptStarted:
		*t.status = StatusRunning
		if t.attempts != nil {
			*t.attempts = e.Attempt
		}
		setStarted(t, e.Time)
	case AttemptFailed:
		*t.status = StatusRunning
		*t.err = e.Error
	case AttemptContinued:
		*t.status = StatusRunning
	case AttemptInterrupted:
		// Nobody runs it until the run is resumed.
		*t.status = StatusPending
	case NodeWaiting:
		*t.status = StatusWaiting
		// A wait journals no start of its own: it began when it first waited.
		setStarted(t, e.Time)
		if t.deadline != nil {
			*t.deadline = nil
			if !e.Deadline.IsZero() {
				*t.deadline = timePtr(e.Deadline)
			}
		}
	case WaitResolved:
		if t.answeredBy != nil && e.AnsweredBy != "" {
			*t.answeredBy = e.AnsweredBy
		}
	case NodeFinished:
		if e.Status != "" {
			*t.status = e.Status
		}
		*t.output = e.Output
		*t.err = e.Error
		if t.reason != nil {
			*t.reason = e.Reason
		}
		*t.finished = timePtr(e.Time)
		if t.deadline != nil {
			*t.deadline = nil
		}
	}
}

func setStarted(t *target, at time.Time) {
	if *t.started == nil {
		*t.started = timePtr(at)
	}
}

func setKey(dst *json.RawMessage, key json.RawMessage) {
	if len(key) > 0 {
		*dst = key
	}
}

func timePtr(t time.Time) *time.Time { return &t }

// nodeIn returns nodes[addr], adding it as pending when absent.
func nodeIn(nodes map[string]*NodeView, addr string) *NodeView {
	n := nodes[addr]
	if n == nil {
		n = &NodeView{Status: StatusPending}
		nodes[addr] = n
	}
	return n
}

// instance returns n.Instances[i], growing the slice with pending items.
func instance(n *NodeView, i int) *InstanceView {
	for len(n.Instances) <= i {
		n.Instances = append(n.Instances, &InstanceView{Status: StatusPending})
	}
	return n.Instances[i]
}

// iteration returns n.Iterations[i] of loop loopAddr, growing the slice with pending
// iterations whose body nodes are pending.
func (r *replay) iteration(n *NodeView, loopAddr string, i int) *IterationView {
	for len(n.Iterations) <= i {
		it := &IterationView{Status: StatusPending, Nodes: make(map[string]*NodeView, len(r.bodies[loopAddr]))}
		for _, local := range r.bodies[loopAddr] {
			it.Nodes[local] = &NodeView{Status: StatusPending}
		}
		n.Iterations = append(n.Iterations, it)
	}
	return n.Iterations[i]
}

// preallocate makes room for total items (or iterations, for a loop) of n.
func (r *replay) preallocate(n *NodeView, loop string, total int) {
	total = min(total, maxViewItems)
	if loop != "" {
		r.iteration(n, loop, total-1)
		return
	}
	instance(n, total-1)
}

// composeForEachOutputs fills in the output of finished for_each tasks: the engine does not
// journal it (it repeats every item's output, which the items' entries hold), so it is built
// here from the instances: a list in item order, or an object by key when the keys are strings.
func composeForEachOutputs(nodes map[string]*NodeView) {
	for _, n := range nodes {
		if len(n.Output) > 0 || n.Instances == nil || (n.Status != StatusSucceeded && n.Status != StatusCompletedWithErrors) {
			continue
		}
		byKey := len(n.Instances) > 0 && len(n.Instances[0].Key) > 0 && n.Instances[0].Key[0] == '"'
		var b bytes.Buffer
		if byKey {
			b.WriteByte('{')
		} else {
			b.WriteByte('[')
		}
		for i, in := range n.Instances {
			if i > 0 {
				b.WriteByte(',')
			}
			if byKey {
				b.Write(in.Key)
				b.WriteByte(':')
			}
			if in.Status == StatusSucceeded && len(in.Output) > 0 {
				b.Write(in.Output)
			} else {
				b.WriteString("null")
			}
		}
		if byKey {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
		n.Output = b.Bytes()
	}
}
