package query

import (
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Symbols returns the document outline, in file order: the workflow, its variables, secrets,
// components, plugins, triggers, nodes (a loop with its body nodes, a switch with its cases)
// and outputs; for a test file, its runs with their mocks and asserts, and the file-level
// blocks.
func Symbols(d Doc) []Symbol {
	a := d.analyse()
	if a.body == nil {
		return nil
	}
	var out []Symbol
	for _, b := range a.body.Blocks {
		out = append(out, a.symbol(b))
	}
	return out
}

// symbol describes a block and the blocks it holds that the outline shows.
func (a *analysis) symbol(b *hclsyntax.Block) Symbol {
	s := Symbol{Name: b.Type, Detail: b.Type, Kind: SymbolBlock, Range: b.Range(), SelectionRange: b.TypeRange}
	if n := len(b.Labels); n > 0 {
		s.Name, s.SelectionRange = b.Labels[n-1], a.labelText(b.LabelRanges[n-1])
	}
	if a.test {
		for _, bb := range b.Body.Blocks {
			s.Children = append(s.Children, a.symbol(bb))
		}
		return s
	}
	switch b.Type {
	case "workflow":
		s.Kind = SymbolWorkflow
	case "variable":
		s.Kind, s.Detail = SymbolVariable, "variable"
		if attr := b.Body.Attributes["type"]; attr != nil {
			s.Detail += ": " + strings.Join(strings.Fields(a.text(attr.Expr.Range())), " ")
		}
	case "secret":
		s.Kind = SymbolSecret
	case "component", "plugin":
		s.Kind = SymbolComponent
		if b.Type == "plugin" {
			s.Kind = SymbolPlugin
		}
		if src, ok := staticString(b.Body, "source"); ok {
			s.Detail += " " + src
		}
	case "trigger":
		s.Kind = SymbolTrigger
		s.Detail = "trigger " + strings.Join(b.Labels[:max(len(b.Labels)-1, 0)], " ")
	case "output":
		s.Kind = SymbolOutput
	case "case", "default":
		s.Detail = b.Type
	default:
		if !isNodeKind(b.Type) || len(b.Labels) == 0 {
			return s
		}
		s.Kind = SymbolNode
		if d := a.nodeDecl(b); d != nil {
			s.Detail = a.nodeDetail(d)
			if d.loop != nil {
				s.Detail = strings.TrimSuffix(s.Detail, " · in loop."+d.loop.name)
			}
		}
		for _, bb := range b.Body.Blocks {
			if (b.Type == "loop" && isNodeKind(bb.Type)) || (b.Type == "switch" && (bb.Type == "case" || bb.Type == "default")) {
				s.Children = append(s.Children, a.symbol(bb))
			}
		}
	}
	return s
}
