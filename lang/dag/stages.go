package dag

import (
	"errors"
	"fmt"
	"strings"
)

// Stages groups the nodes into stages: stage 0 holds nodes with no upstream; a node is in stage k when
// all of its upstream are in earlier stages and at least one is in stage k-1 (longest-path layering,
// Kahn's algorithm). Within a stage, nodes keep insertion order. Returns an error listing a cycle if the
// graph has one.
//
// Each node sits in the earliest stage its dependencies allow: one past
// the longest chain of upstream nodes leading to it. Running the stages in
// order, each as one parallel batch, therefore respects every edge, and the
// number of stages is the length of the graph's critical path.
//
// An empty graph has no stages and no error. The returned slices share one
// backing array but each has its capacity clipped, so appending to one
// stage cannot overwrite another. Stages runs in O(nodes + edges) time.
func (g *Graph) Stages() ([][]string, error) {
	n := len(g.ids)
	if n == 0 {
		return nil, nil
	}

	// Kahn's algorithm computes each node's stage as one more than the
	// largest stage among its upstream; the queue order does not affect the
	// result, so insertion order is restored afterwards by bucketing rather
	// than by sorting each stage.
	pending := make([]int, n)
	stage := make([]int, n)
	queue := make([]int, 0, n)
	for v := range n {
		pending[v] = len(g.in[v])
		if pending[v] == 0 {
			queue = append(queue, v)
		}
	}
	depth := 0
	for head := 0; head < len(queue); head++ {
		v := queue[head]
		next := stage[v] + 1
		for _, e := range g.out[v] {
			w := g.edges[e].to
			if next > stage[w] {
				stage[w] = next
			}
			pending[w]--
			if pending[w] == 0 {
				queue = append(queue, w)
				if stage[w] > depth {
					depth = stage[w]
				}
			}
		}
	}
	if len(queue) < n {
		return nil, g.cycleError()
	}

	// Bucket by stage in insertion order: count, prefix-sum into offsets,
	// then fill one shared backing array.
	offset := make([]int, depth+2)
	for v := range n {
		offset[stage[v]+1]++
	}
	for k := 1; k < len(offset); k++ {
		offset[k] += offset[k-1]
	}
	flat := make([]string, n)
	fill := append([]int(nil), offset[:depth+1]...)
	for v := range n {
		s := stage[v]
		flat[fill[s]] = g.ids[v]
		fill[s]++
	}
	res := make([][]string, depth+1)
	for k := range res {
		res[k] = flat[offset[k]:offset[k+1]:offset[k+1]]
	}
	return res, nil
}

// cycleError describes the first cycle of the graph. Only one is spelled
// out because a single path is what a user needs to start fixing the
// workflow; the count tells them more remain.
func (g *Graph) cycleError() error {
	cycles := g.Cycles()
	if len(cycles) == 0 {
		// Unreachable: Kahn's algorithm only stalls on a cycle.
		return errors.New("dag: graph has a cycle")
	}
	msg := "dag: graph has a cycle: " + strings.Join(cycles[0], " -> ")
	switch extra := len(cycles) - 1; extra {
	case 0:
	case 1:
		msg += " (and 1 more cycle)"
	default:
		msg += fmt.Sprintf(" (and %d more cycles)", extra)
	}
	return errors.New(msg)
}
