package dag

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteMermaid writes the graph to w as a Mermaid `flowchart TD`, for
// embedding in Markdown that GitHub, GitLab and most doc sites render.
//
// Mermaid node IDs may only use a restricted alphabet, so each node gets an
// ID made from its address with every character outside [A-Za-z0-9_]
// replaced by "_" ("loop.notify/task.send" becomes "loop_notify_task_send");
// collisions and Mermaid keywords such as "end" get a numeric or "_" suffix.
// IDs are assigned in node insertion order, so they are stable for a given
// graph. The visible text is the node's Label (or ID), quoted, with
// characters Mermaid would interpret written as entity codes (" as #quot;)
// and newlines as <br/>. Clusters become
// `subgraph cluster_<name>["name"] ... end` blocks, their IDs drawn from the
// same namespace as the nodes'; edges with labels are written
// `a -->|"x, y"| b`.
//
// Like [Graph.WriteDOT], the output is deterministic. The only error
// returned is one from w.
func (g *Graph) WriteMermaid(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("flowchart TD\n")

	top, groups := g.clusters()
	// Nodes get IDs before clusters so that adding or renaming a cluster
	// never changes a node's ID.
	ids := newMermaidIDs(len(g.ids) + len(groups))
	nodeID := make([]string, len(g.ids))
	for v, id := range g.ids {
		nodeID[v] = ids.assign(id)
	}

	for _, v := range top {
		bw.WriteString("    " + nodeID[v] + mermaidQuote(g.label(v)) + "\n")
	}
	for _, c := range groups {
		bw.WriteString("    subgraph " + ids.assign("cluster_"+c.name) + mermaidQuote(c.name) + "\n")
		for _, v := range c.nodes {
			bw.WriteString("        " + nodeID[v] + mermaidQuote(g.label(v)) + "\n")
		}
		bw.WriteString("    end\n")
	}

	for f := range g.ids {
		for _, e := range g.out[f] {
			ed := g.edges[e]
			bw.WriteString("    " + nodeID[ed.from] + " -->")
			if len(ed.labels) > 0 {
				bw.WriteString(`|"` + mermaidEscape(strings.Join(ed.labels, ", ")) + `"|`)
			}
			bw.WriteString(" " + nodeID[ed.to] + "\n")
		}
	}
	// bufio.Writer errors are sticky, so Flush reports the first failure.
	return bw.Flush()
}

// mermaidIDs hands out unique Mermaid identifiers. Nodes and subgraphs share
// one namespace in Mermaid, so both are allocated here.
type mermaidIDs struct {
	used map[string]bool
	// next remembers, per sanitised base, the first suffix worth trying, so
	// that many addresses sanitising to the same base cost linear time in
	// total rather than rescanning suffixes 2, 3, ... for each.
	next map[string]int
}

func newMermaidIDs(n int) *mermaidIDs {
	return &mermaidIDs{used: make(map[string]bool, n), next: make(map[string]int)}
}

func (m *mermaidIDs) assign(s string) string {
	base := mermaidSanitize(s)
	if !m.used[base] {
		m.used[base] = true
		return base
	}
	k := max(m.next[base], 2)
	for {
		id := base + "_" + strconv.Itoa(k)
		k++
		if !m.used[id] {
			m.used[id] = true
			m.next[base] = k
			return id
		}
	}
}

// mermaidSanitize maps s onto [A-Za-z0-9_]+, one "_" per invalid
// character. The result only has to be a stable, readable identifier;
// uniqueness is handled by mermaidIDs.
func mermaidSanitize(s string) string {
	id := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if id == "" || mermaidKeyword(id) {
		// A bare keyword at the start of a line changes the meaning of
		// the statement ("end" closes a subgraph), so make it ordinary.
		id += "_"
	}
	return id
}

// mermaidKeyword reports whether s is a flowchart keyword that cannot be
// used as a node ID. Mermaid's lexer is case-insensitive.
func mermaidKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "end", "subgraph", "graph", "flowchart", "direction",
		"style", "linkstyle", "classdef", "class", "click", "call", "href",
		"default", "interpolate", "acctitle", "accdescr":
		return true
	}
	return false
}

// mermaidQuote returns s as the bracketed, quoted text of a Mermaid node.
func mermaidQuote(s string) string {
	return `["` + mermaidEscape(s) + `"]`
}

// mermaidEscape makes s safe inside a Mermaid quoted string. Quotes would end
// the string; '#' would start an entity code; '<', '>' and '&' would be
// taken as HTML; '`' starts a Markdown string; '|' would end an edge label.
// All of these become Mermaid entity codes (#name; or #number;), which
// Mermaid turns back into the literal character. Newlines become <br/>,
// Mermaid's line break; carriage returns are dropped.
func mermaidEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '&':
			b.WriteString("#amp;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '`':
			b.WriteString("#96;")
		case '|':
			b.WriteString("#124;")
		case '\n':
			b.WriteString("<br/>")
		case '\r':
			// dropped
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
