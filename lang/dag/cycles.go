package dag

// Cycles returns every cycle (one per strongly connected component with more than one node, or a
// self-loop), each as a path of IDs that starts and ends with the same ID, e.g.
// ["task.a", "task.b", "task.a"]. The path is an actual cycle through edges of the graph, starting
// at the component member that was inserted first, and is a shortest such cycle through that member
// (ties broken by edge insertion order). Components are ordered by the insertion index of that first
// member. A graph without cycles returns nil.
//
// One cycle per component is enough to report the problem without
// flooding the user: breaking any edge of the reported cycle changes the
// component, and the next call reports what is left. For a component of
// several nodes whose first member also has a self-loop, the reported
// path goes through other members, because naming more of the
// component is more useful than naming the self-loop alone.
//
// Cycles runs in O(nodes + edges) time and uses no recursion, so chains of
// any length are safe.
func (g *Graph) Cycles() [][]string {
	n := len(g.ids)
	if n == 0 {
		return nil
	}
	comp, size := g.components()

	var (
		res      [][]string
		reported = make([]bool, len(size))
		// seen and parent are shared by all BFS runs; seen stores the
		// component number + 1 so no reset between components is needed,
		// keeping the total work linear. They are allocated on the first
		// multi-node component, so acyclic graphs do not pay for them.
		seen, parent, queue []int
	)
	for v := range n {
		c := comp[v]
		if reported[c] {
			continue
		}
		reported[c] = true
		if size[c] == 1 {
			if g.hasSelfLoop(v) {
				res = append(res, []string{g.ids[v], g.ids[v]})
			}
			continue
		}
		if seen == nil {
			seen, parent = make([]int, n), make([]int, n)
		}
		res = append(res, g.cyclePath(v, c, comp, seen, parent, &queue))
	}
	return res
}

// components labels every node with its strongly connected component using
// an iterative version of Tarjan's algorithm and returns the label of each
// node and the size of each component.
func (g *Graph) components() (comp, size []int) {
	n := len(g.ids)
	var (
		// order is the 1-based DFS discovery number; 0 means unvisited.
		order   = make([]int, n)
		low     = make([]int, n)
		onStack = make([]bool, n)
		stack   = make([]int, 0, n)
		// frames replaces the call stack: next is the position in
		// out[v] to resume from when the child returns.
		frames  []struct{ v, next int }
		counter int
	)
	comp = make([]int, n)

	visit := func(v int) {
		counter++
		order[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		frames = append(frames, struct{ v, next int }{v, 0})
	}

	for root := range n {
		if order[root] != 0 {
			continue
		}
		visit(root)
		for len(frames) > 0 {
			top := len(frames) - 1
			v := frames[top].v
			if k := frames[top].next; k < len(g.out[v]) {
				frames[top].next++
				w := g.edges[g.out[v][k]].to
				switch {
				case order[w] == 0:
					visit(w)
				case onStack[w] && order[w] < low[v]:
					low[v] = order[w]
				}
				continue
			}
			// All successors of v are done.
			frames = frames[:top]
			if low[v] == order[v] {
				c, members := len(size), 0
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = c
					members++
					if w == v {
						break
					}
				}
				size = append(size, members)
			}
			if top > 0 {
				if u := frames[top-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	return comp, size
}

// cyclePath finds a shortest cycle through start that stays inside
// component c, by breadth-first search from start until an edge leads back
// to it. Staying inside the component guarantees the search succeeds and
// bounds its cost by the component's edges.
//
// scratch is queue space reused across components to avoid reallocating.
func (g *Graph) cyclePath(start, c int, comp, seen, parent []int, scratch *[]int) []string {
	stamp := c + 1
	seen[start] = stamp
	queue := append((*scratch)[:0], start)
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for _, e := range g.out[u] {
			w := g.edges[e].to
			if comp[w] != c {
				continue
			}
			if w == start {
				if u == start {
					continue // self-loop on start; see Cycles
				}
				*scratch = queue
				return g.pathTo(start, u, parent)
			}
			if seen[w] == stamp {
				continue
			}
			seen[w] = stamp
			parent[w] = u
			queue = append(queue, w)
		}
	}
	// Unreachable: every member of a multi-node component lies on a cycle
	// through every other member.
	panic("dag: internal error: no cycle found in strongly connected component")
}

// pathTo returns start, ..., last, start following parent links back from
// last.
func (g *Graph) pathTo(start, last int, parent []int) []string {
	length := 2
	for v := last; v != start; v = parent[v] {
		length++
	}
	path := make([]string, length)
	path[0], path[length-1] = g.ids[start], g.ids[start]
	for v, k := last, length-2; v != start; v, k = parent[v], k-1 {
		path[k] = g.ids[v]
	}
	return path
}

// hasSelfLoop scans v's out-edges rather than probing the pair index:
// across all nodes that is one pass over the edges, cheaper than a hash
// lookup per node.
func (g *Graph) hasSelfLoop(v int) bool {
	for _, e := range g.out[v] {
		if g.edges[e].to == v {
			return true
		}
	}
	return false
}
