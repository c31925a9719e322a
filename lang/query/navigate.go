package query

import (
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang"
)

// Definition returns where the thing at offset is declared: the label of the node, variable,
// secret, component or plugin block a reference (task.fetch, var.region, component.images…)
// names, or of the switch case a branch edge (switch.tier.vip) names. At a declaration's own
// label it returns that label.
func Definition(d Doc, offset int) []hcl.Range {
	a := d.analyse()
	if r := a.refAt(offset, true); r != nil {
		if r.target == nil {
			return nil
		}
		if rng, ok := a.caseAt(r, offset); ok {
			return []hcl.Range{rng}
		}
		return []hcl.Range{r.target.nameRange}
	}
	if t := a.declAt(offset); t != nil {
		return []hcl.Range{t.nameRange}
	}
	return nil
}

// caseAt returns the label of the case a branch edge names, when off is on its key.
func (a *analysis) caseAt(r *ref, off int) (hcl.Range, bool) {
	if r.target.kind != lang.KindSwitch || r.target.block == nil || len(r.tr) != 3 {
		return hcl.Range{}, false
	}
	s, ok := r.tr[2].(hcl.TraverseAttr)
	if !ok || !contains(nameOfStep(s), off) {
		return hcl.Range{}, false
	}
	for _, b := range r.target.block.Body.Blocks {
		if (b.Type == "case" || b.Type == "default") && len(b.Labels) == 1 && b.Labels[0] == s.Name {
			return a.labelText(b.LabelRanges[0]), true
		}
	}
	return hcl.Range{}, false
}

// References returns the places that name the thing at offset (a declaration's label, or a
// reference to it): every reference's name, in file order, with the declaration's label first
// when includeDecl is set. A join's keyed output (join.j.output.NAME) and a loop's default
// output (loop.l.output[i].NAME) name their branch and body nodes too, and are included.
func References(d Doc, offset int, includeDecl bool) []hcl.Range {
	a := d.analyse()
	t := a.targetAt(offset)
	if t == nil {
		return nil
	}
	var out []hcl.Range
	if includeDecl {
		out = append(out, t.nameRange)
	}
	return append(out, a.occurrences(t)...)
}

// targetAt returns the declaration whose name is at off: a reference's target, or the
// declaration whose label it is.
func (a *analysis) targetAt(off int) *decl {
	if r := a.refAt(off, false); r != nil {
		return r.target
	}
	return a.declAt(off)
}

// occurrences returns the ranges of every name in an expression that stands for t, in file
// order: references (task.t, var.t, …), and the attributes named after a node of a join's
// keyed output and of a loop's default output.
func (a *analysis) occurrences(t *decl) []hcl.Range {
	var out []hcl.Range
	for _, r := range a.refs {
		if r.target == t {
			out = append(out, r.nameRange)
			continue
		}
		if t.space != spaceNode || r.target == nil || r.space != spaceNode {
			continue
		}
		if rng, ok := a.outputAttrNaming(r, t); ok {
			out = append(out, rng)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Byte < out[j].Start.Byte })
	return out
}

// outputAttrNaming returns the range of the attribute of r that names node t: the t in
// join.j.output.t when j merges keyed and t is one of its branches, and in
// loop.l.output[i].t when l has no `output` and t is one of its last body nodes.
func (a *analysis) outputAttrNaming(r *ref, t *decl) (hcl.Range, bool) {
	j := r.target
	if j.block == nil || len(r.tr) < 4 {
		return hcl.Range{}, false
	}
	out, ok := r.tr[2].(hcl.TraverseAttr)
	if !ok || out.Name != "output" {
		return hcl.Range{}, false
	}
	at := 3
	switch j.kind {
	case lang.KindJoin:
		if merge, ok := staticString(j.block.Body, "merge"); ok && merge != lang.MergeKeyed {
			return hcl.Range{}, false
		}
		found := false
		for _, name := range a.joinBranches(j.block.Body) {
			found = found || name == t.name
		}
		if !found {
			return hcl.Range{}, false
		}
	case lang.KindLoop:
		if j.block.Body.Attributes["output"] != nil || t.loop != j {
			return hcl.Range{}, false
		}
		switch r.tr[3].(type) {
		case hcl.TraverseIndex, hcl.TraverseSplat:
			at = 4
		}
		if len(r.tr) <= at {
			return hcl.Range{}, false
		}
		sink := false
		for _, s := range a.loopSinks(j) {
			sink = sink || s == t
		}
		if !sink {
			return hcl.Range{}, false
		}
	default:
		return hcl.Range{}, false
	}
	s, ok := r.tr[at].(hcl.TraverseAttr)
	if !ok || s.Name != t.name {
		return hcl.Range{}, false
	}
	return nameOfStep(s), true
}

// nodeBlocks returns the node blocks of a body, in order.
func nodeBlocks(body *hclsyntax.Body) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		if isNodeKind(b.Type) {
			out = append(out, b)
		}
	}
	return out
}
