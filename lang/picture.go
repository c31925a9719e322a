package lang

import "github.com/fuscia/fuscia/lang/dag"

// Picture returns the whole workflow as one graph for `fuscia graph`: top-level nodes, and each
// loop's body nodes in a cluster named after the loop. Edges are labelled with branch keys.
func (w *Workflow) Picture() *dag.Graph {
	g := dag.New()
	if w.Graph == nil {
		return g
	}
	add := func(src *dag.Graph, cluster string) {
		for _, id := range src.Nodes() {
			attrs := src.Attrs(id)
			attrs.Cluster = cluster
			g.AddNode(id, attrs)
		}
	}
	add(w.Graph.Top, "")
	for _, n := range w.Nodes {
		if n.Loop != nil {
			if body := w.Graph.Bodies[n.Addr.Name]; body != nil {
				add(body, n.Addr.String())
			}
		}
	}
	edges := func(src *dag.Graph) {
		for _, e := range src.Edges() {
			if len(e.Labels) == 0 {
				g.AddEdge(e.From, e.To, "")
			}
			for _, l := range e.Labels {
				g.AddEdge(e.From, e.To, l)
			}
		}
	}
	edges(w.Graph.Top)
	for _, n := range w.Nodes {
		if n.Loop != nil {
			if body := w.Graph.Bodies[n.Addr.Name]; body != nil {
				edges(body)
				// The loop starts each iteration at its body's first nodes.
				for _, id := range body.Nodes() {
					if len(body.Upstream(id)) == 0 {
						g.AddEdge(n.Addr.String(), id, "each")
					}
				}
			}
		}
	}
	return g
}
