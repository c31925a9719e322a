package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/addrs"
)

// NodeDetail is one instance of a run's node as the web UI's node panel shows it: its attempts,
// the last attempt's input, its output and error, and a page of its items (a for_each task's
// items, a loop's iterations, a loop body's node in each iteration), rebuilt from the journal.
// GET /v1/executions/{id}/nodes/{node} answers it.
type NodeDetail struct {
	// Node is the instance's address (`task.fetch`, `task.each[3]`, `loop.l/task.a[1]`).
	Node       string        `json:"node"`
	Status     string        `json:"status"`
	StartedAt  *time.Time    `json:"started_at"`
	FinishedAt *time.Time    `json:"finished_at"`
	Attempts   []AttemptSpan `json:"attempts"`
	// Input is the last attempt's input (Entry.Input): null for a node that is no task, and
	// for runs journaled before inputs were.
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
	Error  *outcome.Error  `json:"error"`
	Reason string          `json:"reason,omitempty"`
	// ChildID is a call's child run; AnsweredBy who answered a wait; Deadline a waiting wait's.
	ChildID    string     `json:"child_execution_id,omitempty"`
	AnsweredBy string     `json:"answered_by,omitempty"`
	Deadline   *time.Time `json:"deadline,omitempty"`
	// Items are the page of items asked for; ItemsTotal how many there are.
	Items      []ItemSummary `json:"items"`
	ItemsTotal int           `json:"items_total"`
}

// ItemSummary is one item of a NodeDetail: a for_each item, a loop iteration, or a loop body
// node's instance in one iteration. Its address is the node's with Index.
type ItemSummary struct {
	Index      []int           `json:"index"`
	Key        json.RawMessage `json:"key"`
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts"`
	Error      *outcome.Error  `json:"error"`
	StartedAt  *time.Time      `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
}

// NodeDetail rebuilds instance inst of run id, with its items from offset, at most limit of
// them. A loop body's node without an index (`loop.l/task.a`) has no instance of its own: it
// stands for its latest iteration's, and its items are its instances in every iteration.
// ErrNotFound when there is no such run, or the run has no such node.
func (s *Store) NodeDetail(id string, inst addrs.Instance, offset, limit int) (*NodeDetail, error) {
	node := inst.Node.String()
	var out *NodeDetail
	err := s.view(func(txn *badger.Txn) error {
		if _, err := s.getSummary(txn, id); err != nil {
			return err
		}
		nb := newNodeBuild(inst, offset, limit)
		// Only entries that name the node (or its loop, for a body node's iterations) are
		// decoded: a run with a 100,000-item for_each has as many entries of other nodes.
		needles := [][]byte{[]byte(`"node":` + jsonString(node))}
		if inst.Node.Loop != "" {
			needles = append(needles, []byte(`"node":`+jsonString(inst.Node.LoopAddr().String())))
		}
		err := s.eachValue(txn, runJournalPrefix(id), 0, func(v []byte) error {
			run := bytes.Contains(v, []byte(`"type":"`+string(RunStarted)+`"`))
			if !run && !slices.ContainsFunc(needles, func(n []byte) bool { return bytes.Contains(v, n) }) {
				return nil
			}
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("execution %s: decode entry: %w", id, err)
			}
			nb.apply(&e)
			return nil
		})
		if err != nil {
			return err
		}
		if !nb.known {
			return fmt.Errorf("execution %s has no node %s: %w", id, node, ErrNotFound)
		}
		out = nb.result()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// nodeBuild gathers a NodeDetail from the run's entries in one pass, keeping only the items of
// the page asked for.
type nodeBuild struct {
	inst          addrs.Instance
	node, loop    string
	offset, limit int

	known bool // the run has the node: in its run_started's nodes or in an entry
	own   *instSpans
	// latest is a loop body's node's latest instance, standing for inst without an index.
	latest   *instSpans
	items    map[int]*instSpans // the page's, by the item's last index
	maxItem  int                // the largest item index seen, -1 for none
	total    int                // what an aggregate's or a loop's node_started says
	bodyNode bool               // inst is a loop body's node without an index
}

func newNodeBuild(inst addrs.Instance, offset, limit int) *nodeBuild {
	nb := &nodeBuild{inst: inst, node: inst.Node.String(), offset: offset, limit: limit, items: map[int]*instSpans{}, maxItem: -1}
	if inst.Node.Loop != "" {
		nb.loop = inst.Node.LoopAddr().String()
		nb.bodyNode = len(inst.Index) == 0
	}
	return nb
}

// itemOf reports whether index is inst's own index followed by one more, and that one.
func (nb *nodeBuild) itemOf(index []int) (int, bool) {
	own := nb.inst.Index
	if len(index) != len(own)+1 || !slices.Equal(index[:len(own)], own) {
		return 0, false
	}
	return index[len(own)], true
}

func (nb *nodeBuild) apply(e *Entry) {
	switch {
	case e.Type == RunStarted:
		if e.Run == nil {
			return
		}
		if slices.Contains(e.Run.Nodes, nb.node) {
			nb.known = true
		}
		if nb.loop != "" && slices.Contains(e.Run.Bodies[nb.loop], nb.inst.Node.Local()) {
			nb.known = true
		}
	case e.Node == nb.loop && nb.loop != "":
		// The loop's own node_started says how many iterations, hence instances of a body node.
		if nb.bodyNode && len(e.Index) == 0 && e.Type == NodeStarted && e.Total > 0 {
			nb.total = e.Total
		}
	case e.Node != nb.node:
	case slices.Equal(e.Index, nb.inst.Index) && !nb.bodyNode:
		nb.known = true
		if nb.own == nil {
			nb.own = newInstSpans(e.Node, e.Index)
		}
		nb.own.apply(e)
		if e.Type == NodeStarted && e.Total > 0 {
			nb.total = e.Total
		}
	default:
		i, ok := nb.itemOf(e.Index)
		if !ok {
			return
		}
		nb.known = true
		nb.maxItem = max(nb.maxItem, i)
		if nb.bodyNode {
			if nb.latest == nil || nb.latest.Index[len(nb.latest.Index)-1] < i {
				nb.latest = newInstSpans(e.Node, e.Index)
			}
			if nb.latest.Index[len(nb.latest.Index)-1] == i {
				nb.latest.apply(e)
			}
		}
		if i < nb.offset || i >= nb.offset+nb.limit {
			return
		}
		it := nb.items[i]
		if it == nil {
			it = newInstSpans(e.Node, e.Index)
			nb.items[i] = it
		}
		it.apply(e)
	}
}

func (nb *nodeBuild) result() *NodeDetail {
	self := nb.own
	if nb.bodyNode {
		self = nb.latest
	}
	d := &NodeDetail{Node: nb.inst.String(), Status: StatusPending, Attempts: []AttemptSpan{}, Items: []ItemSummary{}}
	if self != nil {
		d.Status, d.StartedAt, d.FinishedAt, d.Attempts = self.Status, self.StartedAt, self.FinishedAt, self.Attempts
		d.Input, d.Output, d.Error, d.Reason = self.input, self.output, self.err, self.reason
		d.ChildID, d.AnsweredBy, d.Deadline = self.childID, self.answeredBy, self.deadline
		if nb.bodyNode {
			d.Node = addrs.Instance{Node: nb.inst.Node, Index: self.Index}.String()
		}
	}
	d.ItemsTotal = max(nb.total, nb.maxItem+1)
	for i := nb.offset; i < min(nb.offset+nb.limit, d.ItemsTotal); i++ {
		index := append(slices.Clone(nb.inst.Index), i)
		item := ItemSummary{Index: index, Status: StatusPending}
		if it := nb.items[i]; it != nil {
			item.Key, item.Status, item.Error = it.Key, it.Status, it.err
			item.Attempts, item.StartedAt, item.FinishedAt = len(it.Attempts), it.StartedAt, it.FinishedAt
		}
		d.Items = append(d.Items, item)
	}
	return d
}
