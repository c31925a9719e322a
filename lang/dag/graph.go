package dag

import "fmt"

// NodeAttrs are the display attributes of a node.
type NodeAttrs struct {
	Label   string // shown in pictures, e.g. "task.fetch\n(builtin.http)"; ID if empty
	Cluster string // non-empty: the node is drawn inside this cluster/subgraph (e.g. "loop.notify")
}

// Edge is a directed dependency between two nodes, as reported by
// [Graph.Edges] and [Graph.Edge]. Its Labels slice is a copy: changing it
// does not change the graph.
type Edge struct {
	From, To string   // From is upstream, To is downstream (From must finish before To)
	Labels   []string // branch keys etc.; empty for plain edges. Deduplicated, in insertion order.
}

// Graph is a directed graph of string-identified nodes. The zero value is
// not usable; create graphs with [New].
type Graph struct {
	// index interns IDs once so that all algorithms work on dense ints
	// and slices, which is what keeps them linear and allocation-light.
	index map[string]int
	ids   []string
	attrs []NodeAttrs

	// out and in hold edge numbers (indices into edges) rather than node
	// numbers so that labels are reachable from either direction and
	// neighbour order is edge insertion order.
	out [][]int
	in  [][]int

	edges []edge
	// pairs makes merging a repeated AddEdge O(1) instead of a scan of
	// the source's out list, which would be quadratic for wide fans.
	pairs map[pair]int
	// labelSeen makes label deduplication O(1) even for edges carrying
	// many branch keys. Allocated on the first labelled edge.
	labelSeen map[edgeLabel]struct{}
}

type edge struct {
	from, to int
	labels   []string
}

type pair struct{ from, to int }

type edgeLabel struct {
	edge  int
	label string
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{
		index: make(map[string]int),
		pairs: make(map[pair]int),
	}
}

// AddNode adds the node id with the given display attributes. Adding an id
// that already exists replaces its attributes but keeps its position in
// every ordering, so callers may declare nodes first and decorate them
// later without disturbing the output.
func (g *Graph) AddNode(id string, attrs NodeAttrs) {
	if i, ok := g.index[id]; ok {
		g.attrs[i] = attrs
		return
	}
	g.index[id] = len(g.ids)
	g.ids = append(g.ids, id)
	g.attrs = append(g.attrs, attrs)
	g.out = append(g.out, nil)
	g.in = append(g.in, nil)
}

// Has reports whether id is a node of the graph.
func (g *Graph) Has(id string) bool {
	_, ok := g.index[id]
	return ok
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.ids) }

// AddEdge adds the edge from -> to, meaning from must finish before to.
//
// Adding a pair that already exists merges into the existing edge rather
// than creating a parallel one: a non-empty label is appended to its
// Labels unless already present, and an empty label changes nothing (a
// plain dependency adds no information to a labelled one). The edge keeps
// the position of its first insertion.
//
// Both nodes must already exist; AddEdge panics otherwise, because
// referring to an undeclared node is a bug in the caller, not a property of
// the workflow being compiled.
func (g *Graph) AddEdge(from, to, label string) {
	f, ok := g.index[from]
	if !ok {
		panic(fmt.Sprintf("dag: AddEdge(%q, %q): unknown node %q", from, to, from))
	}
	t, ok := g.index[to]
	if !ok {
		panic(fmt.Sprintf("dag: AddEdge(%q, %q): unknown node %q", from, to, to))
	}
	e, ok := g.pairs[pair{f, t}]
	if !ok {
		e = len(g.edges)
		g.edges = append(g.edges, edge{from: f, to: t})
		g.pairs[pair{f, t}] = e
		g.out[f] = append(g.out[f], e)
		g.in[t] = append(g.in[t], e)
	}
	if label == "" {
		return
	}
	if g.labelSeen == nil {
		g.labelSeen = make(map[edgeLabel]struct{})
	}
	k := edgeLabel{e, label}
	if _, dup := g.labelSeen[k]; dup {
		return
	}
	g.labelSeen[k] = struct{}{}
	g.edges[e].labels = append(g.edges[e].labels, label)
}

// Nodes returns the IDs of all nodes in the order they were first added.
// The slice is a fresh copy the caller may keep or modify.
func (g *Graph) Nodes() []string {
	return append([]string(nil), g.ids...)
}

// Attrs returns the display attributes of id, or the zero NodeAttrs if id is
// not a node.
func (g *Graph) Attrs(id string) NodeAttrs {
	i, ok := g.index[id]
	if !ok {
		return NodeAttrs{}
	}
	return g.attrs[i]
}

// Upstream returns the direct predecessors of id (the nodes that must finish
// before it), in the order their edges were first added. It returns nil if
// id has none or is not a node.
func (g *Graph) Upstream(id string) []string {
	i, ok := g.index[id]
	if !ok || len(g.in[i]) == 0 {
		return nil
	}
	res := make([]string, len(g.in[i]))
	for k, e := range g.in[i] {
		res[k] = g.ids[g.edges[e].from]
	}
	return res
}

// Downstream returns the direct successors of id (the nodes that wait for
// it), in the order their edges were first added. It returns nil if id has
// none or is not a node.
func (g *Graph) Downstream(id string) []string {
	i, ok := g.index[id]
	if !ok || len(g.out[i]) == 0 {
		return nil
	}
	res := make([]string, len(g.out[i]))
	for k, e := range g.out[i] {
		res[k] = g.ids[g.edges[e].to]
	}
	return res
}

// Edges returns every edge, grouped by source in node insertion order and,
// within a source, in edge insertion order. Grouping by source keeps each
// node's outgoing edges together, which is how listings and pictures read
// best; the pictures use the same order.
func (g *Graph) Edges() []Edge {
	res := make([]Edge, 0, len(g.edges))
	for f := range g.ids {
		for _, e := range g.out[f] {
			res = append(res, g.export(e))
		}
	}
	return res
}

// Edge returns the edge from -> to and whether it exists.
func (g *Graph) Edge(from, to string) (Edge, bool) {
	f, ok := g.index[from]
	if !ok {
		return Edge{}, false
	}
	t, ok := g.index[to]
	if !ok {
		return Edge{}, false
	}
	e, ok := g.pairs[pair{f, t}]
	if !ok {
		return Edge{}, false
	}
	return g.export(e), true
}

// export converts an internal edge to the public form, copying the labels
// so callers cannot corrupt the graph or the dedup index through them.
func (g *Graph) export(e int) Edge {
	ed := g.edges[e]
	var labels []string
	if len(ed.labels) > 0 {
		labels = append([]string(nil), ed.labels...)
	}
	return Edge{From: g.ids[ed.from], To: g.ids[ed.to], Labels: labels}
}

// label returns the text shown for node i in pictures.
func (g *Graph) label(i int) string {
	if l := g.attrs[i].Label; l != "" {
		return l
	}
	return g.ids[i]
}
