package dag

import (
	"bufio"
	"io"
	"strings"
)

// WriteDOT writes the graph to w in Graphviz DOT format, for rendering with
// `dot -Tsvg` and similar. Nodes are boxes labelled with their Label (or ID);
// nodes sharing a Cluster are drawn inside a box named after it, emitted as
// `subgraph "cluster_<name>"` because Graphviz only draws subgraphs whose
// name starts with "cluster". Edge labels are joined with ", ". A non-empty
// title names the digraph and is shown above it.
//
// Nodes outside clusters come first, then clusters in order of their first
// member, then edges in [Graph.Edges] order, so the output is byte-for-byte
// deterministic and suitable for golden files. The only error returned is
// one from w.
func (g *Graph) WriteDOT(w io.Writer, title string) error {
	bw := bufio.NewWriter(w)
	if title == "" {
		bw.WriteString("digraph {\n")
	} else {
		bw.WriteString("digraph " + dotQuote(title) + " {\n")
		bw.WriteString("\tlabel = " + dotQuote(title) + ";\n")
		bw.WriteString("\tlabelloc = \"t\";\n")
	}
	bw.WriteString("\tnode [shape = \"box\"];\n")

	top, groups := g.clusters()
	if len(top) > 0 || len(groups) > 0 {
		bw.WriteString("\n")
	}
	for _, v := range top {
		g.writeDOTNode(bw, "\t", v)
	}
	for _, c := range groups {
		bw.WriteString("\tsubgraph " + dotQuote("cluster_"+c.name) + " {\n")
		bw.WriteString("\t\tlabel = " + dotQuote(c.name) + ";\n")
		for _, v := range c.nodes {
			g.writeDOTNode(bw, "\t\t", v)
		}
		bw.WriteString("\t}\n")
	}

	if len(g.edges) > 0 {
		bw.WriteString("\n")
	}
	for f := range g.ids {
		for _, e := range g.out[f] {
			ed := g.edges[e]
			bw.WriteString("\t" + dotQuote(g.ids[ed.from]) + " -> " + dotQuote(g.ids[ed.to]))
			if len(ed.labels) > 0 {
				bw.WriteString(" [label=" + dotQuote(strings.Join(ed.labels, ", ")) + "]")
			}
			bw.WriteString(";\n")
		}
	}
	bw.WriteString("}\n")
	// bufio.Writer errors are sticky, so Flush reports the first failure.
	return bw.Flush()
}

func (g *Graph) writeDOTNode(bw *bufio.Writer, indent string, v int) {
	bw.WriteString(indent + dotQuote(g.ids[v]) + " [label=" + dotQuote(g.label(v)) + "];\n")
}

// dotQuote makes any string safe as a DOT double-quoted string.
// Backslashes are doubled so that text like `\l` or `\N` in a label is shown
// literally instead of being taken as a Graphviz escape; newlines become
// `\n`, Graphviz's centred line break. Carriage returns are dropped so CRLF
// text breaks lines once.
func dotQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			// dropped
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
