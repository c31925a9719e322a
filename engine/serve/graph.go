package serve

import (
	"net/http"

	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/lang"
)

// workflowGraph is GET /v1/workflows/{name}/graph's answer: the graph `fuscia graph` draws
// (lang.Workflow.Picture), as data for the web UI to lay out.
type workflowGraph struct {
	Workflow string       `json:"workflow"`
	Nodes    []graphNode  `json:"nodes"`
	Edges    []graphEdge  `json:"edges"`
	Groups   []graphGroup `json:"groups"`
}

// graphNode is one node: its address (the id the run's nodes go by), its kind and name, and
// for a task what it uses.
type graphNode struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
	Uses  string `json:"uses,omitempty"`
	// ForEach: a task with for_each (it runs as items).
	ForEach bool `json:"for_each,omitempty"`
	// Calls is the name of the workflow a call node runs.
	Calls string `json:"calls,omitempty"`
	// Group is the id of the group (a loop's body) the node is drawn in; "" at the top.
	Group string `json:"group"`
}

// graphEdge is one dependency, From before To; Label is the branch key of a switch's or a
// task's branch ("" for a plain edge). An edge with several keys is given once per key.
type graphEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
}

// graphGroup is a loop's body.
type graphGroup struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
}

func (s *Server) graph(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	l := s.workflows[name]
	unready := s.readinessLocked()
	s.mu.Unlock()
	if l == nil {
		if unready != "" {
			unavailable(w, unready) // the workflow may not be loaded yet
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no workflow named " + name + " is served", "code": "not_found"})
		return
	}
	writeJSON(w, http.StatusOK, graphOf(l.prog.Workflow))
}

// runGraph answers GET /v1/executions/{id}/graph: the graph of the workflow as run id started
// it (its journaled plan), which the workflow's current file may no longer have.
func (s *Server) runGraph(w http.ResponseWriter, r *http.Request) {
	id, err := s.store.ResolveID(r.PathValue("id"))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no run " + r.PathValue("id"), "code": "not_found"})
		return
	}
	wf, err := s.eng.RunWorkflow(id)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": local.InternalError(s.logger, r, "cannot rebuild the run's workflow", err, "execution_id", id)})
		return
	}
	writeJSON(w, http.StatusOK, graphOf(wf))
}

// graphOf turns the workflow's picture into the API's graph. Nodes, edges and groups come in
// the picture's order (file order, then each loop's body), so the answer is deterministic.
func graphOf(wf *lang.Workflow) workflowGraph {
	pic := wf.Picture()
	out := workflowGraph{Workflow: wf.Name, Nodes: []graphNode{}, Edges: []graphEdge{}, Groups: []graphGroup{}}
	groups := map[string]bool{}
	for _, id := range pic.Nodes() {
		gn := graphNode{ID: id, Label: id, Group: pic.Attrs(id).Cluster}
		if addr, ok := lang.ParseAddr(id); ok {
			gn.Kind, gn.Label = string(addr.Kind), addr.Name
			if n := wf.Node(addr); n != nil {
				switch {
				case n.Task != nil:
					gn.Uses, gn.ForEach = n.Task.Uses.String(), n.Task.ForEach != nil
				case n.Call != nil:
					if callee := wf.Calls[addr.Name]; callee != nil {
						gn.Calls = callee.Name
					}
				}
			}
		}
		if g := gn.Group; g != "" && !groups[g] {
			groups[g] = true
			gg := graphGroup{ID: g, Kind: "loop", Label: g}
			if addr, ok := lang.ParseAddr(g); ok {
				gg.Kind, gg.Label = string(addr.Kind), addr.Name
			}
			out.Groups = append(out.Groups, gg)
		}
		out.Nodes = append(out.Nodes, gn)
	}
	for _, e := range pic.Edges() {
		if len(e.Labels) == 0 {
			out.Edges = append(out.Edges, graphEdge{From: e.From, To: e.To})
		}
		for _, label := range e.Labels {
			out.Edges = append(out.Edges, graphEdge{From: e.From, To: e.To, Label: label})
		}
	}
	return out
}
