package redact

import (
	"slices"
)

// matcher is an Aho-Corasick automaton over a fixed set of byte patterns. It reports, at each
// position of a text, the longest pattern that ends there: for redaction that is all that
// matters, because every shorter pattern ending at the same position lies inside it.
//
// The trie's edges are kept sparse (a sorted slice per state) except at the root, whose
// transitions are a full table: text that matches nothing stays at the root and costs one
// table lookup per byte. A matcher is immutable once built and safe for concurrent use.
type matcher struct {
	root  [256]int32 // the root's transition on every byte (0: stay at the root)
	edges [][]edge   // the trie's edges of each state, sorted by byte; the root's are in root
	fail  []int32    // the longest proper suffix of each state's string that is a trie state
	out   []int32    // length of the longest pattern that is a suffix of the state's string
}

type edge struct {
	b  byte
	to int32
}

// newMatcher builds the automaton of patterns; empty patterns are ignored.
func newMatcher(patterns []string) *matcher {
	m := &matcher{edges: [][]edge{nil}, fail: []int32{0}, out: []int32{0}}
	for _, p := range patterns {
		if p == "" {
			continue
		}
		s := int32(0)
		for i := 0; i < len(p); i++ {
			next, ok := m.child(s, p[i])
			if !ok {
				next = int32(len(m.edges))
				m.edges = append(m.edges, nil)
				m.fail = append(m.fail, 0)
				m.out = append(m.out, 0)
				m.addEdge(s, p[i], next)
			}
			s = next
		}
		m.out[s] = max(m.out[s], int32(len(p)))
	}
	// Failure links, breadth first: a state's link is found from its parent's.
	queue := make([]int32, 0, len(m.edges))
	for b := 0; b < 256; b++ {
		if t := m.root[b]; t != 0 {
			queue = append(queue, t) // fail = root
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, e := range m.edges[s] {
			m.fail[e.to] = m.step(m.fail[s], e.b)
			m.out[e.to] = max(m.out[e.to], m.out[m.fail[e.to]])
			queue = append(queue, e.to)
		}
	}
	return m
}

func (m *matcher) addEdge(s int32, b byte, to int32) {
	if s == 0 {
		m.root[b] = to
		return
	}
	es := m.edges[s]
	i, _ := slices.BinarySearchFunc(es, b, func(e edge, b byte) int { return int(e.b) - int(b) })
	m.edges[s] = slices.Insert(es, i, edge{b, to})
}

// child is the trie edge of s on b.
func (m *matcher) child(s int32, b byte) (int32, bool) {
	if s == 0 {
		t := m.root[b]
		return t, t != 0
	}
	for _, e := range m.edges[s] {
		if e.b == b {
			return e.to, true
		}
		if e.b > b {
			break
		}
	}
	return 0, false
}

// step is the automaton's transition: the trie edge, or the failure links' until one has it.
func (m *matcher) step(s int32, b byte) int32 {
	for s != 0 {
		if t, ok := m.child(s, b); ok {
			return t
		}
		s = m.fail[s]
	}
	return m.root[b]
}

// span is a half-open byte range [start, end) of a text.
type span struct{ start, end int }

// find appends to spans the ranges of text covered by patterns, merged so that overlapping and
// touching ranges are one, in order. It returns spans unchanged (nil stays nil) when nothing
// matches.
func find[T ~string | ~[]byte](m *matcher, text T, spans []span) []span {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		if s == 0 {
			s = m.root[text[i]]
		} else {
			s = m.step(s, text[i])
		}
		if n := m.out[s]; n > 0 {
			spans = addSpan(spans, span{i + 1 - int(n), i + 1})
		}
	}
	return spans
}

// addSpan appends sp to spans, whose ends do not exceed sp's, merging it with the ranges it
// overlaps or touches.
func addSpan(spans []span, sp span) []span {
	for len(spans) > 0 && spans[len(spans)-1].end >= sp.start {
		last := spans[len(spans)-1]
		sp.start = min(sp.start, last.start)
		sp.end = max(sp.end, last.end)
		spans = spans[:len(spans)-1]
	}
	return append(spans, sp)
}

// mergeSpans merges two ordered, merged lists into one.
func mergeSpans(a, b []span) []span {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	all := append(append(make([]span, 0, len(a)+len(b)), a...), b...)
	slices.SortFunc(all, func(x, y span) int { return x.start - y.start })
	out := all[:1]
	for _, sp := range all[1:] {
		last := &out[len(out)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}
