package query

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// space is a namespace of declared names: node names are shared by every node kind, the other
// kinds of declaration have one each (docs/reference/language.md, "Names").
type space string

const (
	spaceNode      space = "node"
	spaceVariable  space = "variable"
	spaceSecret    space = "secret"
	spaceComponent space = "component"
	spacePlugin    space = "plugin"
	spaceOutput    space = "output"
	spaceTrigger   space = "trigger"
)

// spaceOfBlock is the namespace a top-level (or loop body) block declares a name in.
func spaceOfBlock(typ string) (space, bool) {
	switch typ {
	case "variable":
		return spaceVariable, true
	case "secret":
		return spaceSecret, true
	case "component":
		return spaceComponent, true
	case "plugin":
		return spacePlugin, true
	case "output":
		return spaceOutput, true
	case "trigger":
		return spaceTrigger, true
	}
	if _, ok := lang.ParseAddr(typ + ".x"); ok {
		return spaceNode, true
	}
	return "", false
}

// spaceOfRoot is the namespace a reference's root word reads from.
func spaceOfRoot(root string) (space, bool) {
	switch root {
	case "var":
		return spaceVariable, true
	case "secret":
		return spaceSecret, true
	case "component":
		return spaceComponent, true
	case "plugin":
		return spacePlugin, true
	}
	if isNodeKind(root) {
		return spaceNode, true
	}
	return "", false
}

func isNodeKind(s string) bool {
	_, ok := lang.ParseAddr(s + ".x")
	return ok && !strings.Contains(s, "/")
}

// decl is a declaration: a labelled block whose name references can read.
type decl struct {
	space space
	name  string
	kind  lang.NodeKind // nodes: the block type
	block *hclsyntax.Block
	// nameRange is the name itself, inside its quotes: what rename replaces.
	nameRange hcl.Range
	loop      *decl // nodes in a loop body: the loop
	// span and spanType locate the top-level block (of that type) holding a declaration found in
	// the text (declsFromText); block is nil then, and blockOf parses the span.
	span     *span
	spanType string
	text     [2]int // a declaration found in the text: its block's own text
}

func nodeKind(typ string) lang.NodeKind { return lang.NodeKind(typ) }

// addr is a node's address as written in expressions ("task.fetch").
func (d *decl) local() string {
	if d.space == spaceNode {
		return string(d.kind) + "." + d.name
	}
	return string(d.space) + "." + d.name
}

// ref is one reference in an expression to something a file can declare.
type ref struct {
	space space
	kind  lang.NodeKind // node references: the kind written
	name  string
	tr    hcl.Traversal
	// nameRange is the name step (`fetch` in task.fetch.output), without its dot.
	nameRange hcl.Range
	attr      *hclsyntax.Attribute
	block     *hclsyntax.Block // the block whose body holds attr
	node      *decl            // the node whose expression it is; nil elsewhere
	target    *decl            // the declaration it reads; nil when undeclared or of another kind
}

// analysis is what one text of a file says: its syntax tree, declarations and references.
// It is immutable once built, except for the workflow, which is loaded on first use.
type analysis struct {
	filename string
	src      []byte
	test     bool            // a *.fsctest.hcl file
	body     *hclsyntax.Body // nil when the text is not HCL at all (binary, too large)
	diags    hcl.Diagnostics
	decls    []*decl
	byName   map[space]map[string]*decl // the first declaration of each name
	refs     []*ref
	lines    []int       // byte offset of each line's start
	tops     []textBlock // the light analysis: the top-level blocks found in the text

	wfOnce sync.Once
	wf     *lang.Workflow // nil when the file does not load
}

// analyse returns d's analysis, from its cache when it has one.
func (d Doc) analyse() *analysis {
	if d.cache == nil {
		return newAnalysis(d.Filename, d.Src)
	}
	d.cache.once.Do(func() { d.cache.a = newAnalysis(d.Filename, d.Src) })
	return d.cache.a
}

// isTestFile reports whether filename is a test file rather than a workflow.
func isTestFile(filename string) bool { return strings.HasSuffix(filename, ".fsctest.hcl") }

// baseAnalysis holds what both kinds of analysis need: the text and its lines.
func baseAnalysis(filename string, src []byte) *analysis {
	a := &analysis{
		filename: filename,
		src:      src,
		test:     isTestFile(filename),
		byName:   map[space]map[string]*decl{},
	}
	a.lines = append(a.lines, 0)
	for i, c := range src {
		if c == '\n' {
			a.lines = append(a.lines, i+1)
		}
	}
	return a
}

// newLightAnalysis reads only the declarations from the text, for completion: their blocks
// are parsed one by one when needed (textscan.go). It has no syntax tree and no references.
func newLightAnalysis(filename string, src []byte) *analysis {
	a := baseAnalysis(filename, src)
	a.tops = scanBlocks(src)
	if !a.test {
		a.declsFromText(a.tops, true)
	}
	return a
}

// newAnalysis parses the whole text and indexes its declarations and references.
func newAnalysis(filename string, src []byte) *analysis {
	a := baseAnalysis(filename, src)
	f, diags := lang.NewParser().ParseSource(filename, src)
	a.diags = diags
	if f == nil {
		return a
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return a
	}
	a.body = body
	if a.test {
		return a // a test file declares nothing its own expressions read
	}
	for _, b := range body.Blocks {
		a.declare(b, nil)
	}
	if diags.HasErrors() {
		// The syntax tree of a text with errors can lose blocks (a bracket left open while
		// typing swallows the blocks after it); the text still shows their headers.
		a.declsFromText(scanBlocks(src), false)
	}
	for _, b := range body.Blocks {
		a.collectRefs(b, nil)
	}
	return a
}

// declare records the declaration of a top-level block, and of a loop's body nodes.
func (a *analysis) declare(b *hclsyntax.Block, loop *decl) {
	sp, ok := spaceOfBlock(b.Type)
	if !ok || len(b.Labels) == 0 {
		return
	}
	i := 0
	if b.Type == "trigger" {
		if len(b.Labels) < 2 {
			return
		}
		i = 1
	}
	d := &decl{space: sp, name: b.Labels[i], block: b, nameRange: a.labelText(b.LabelRanges[i]), loop: loop}
	if sp == spaceNode {
		d.kind = lang.NodeKind(b.Type)
	}
	a.decls = append(a.decls, d)
	names := a.byName[sp]
	if names == nil {
		names = map[string]*decl{}
		a.byName[sp] = names
	}
	if names[d.name] == nil {
		names[d.name] = d
	}
	if b.Type == "loop" && loop == nil {
		for _, bb := range b.Body.Blocks {
			if isNodeKind(bb.Type) {
				a.declare(bb, d)
			}
		}
	}
}

// labelText is the range of a label's text: without its quotes when it is quoted.
func (a *analysis) labelText(r hcl.Range) hcl.Range {
	if r.End.Byte-r.Start.Byte >= 2 && r.End.Byte <= len(a.src) && a.src[r.Start.Byte] == '"' && a.src[r.End.Byte-1] == '"' {
		r.Start.Byte++
		r.Start.Column++
		r.End.Byte--
		r.End.Column--
	}
	return r
}

// collectRefs records the references in b's attributes, and in its nested blocks'. node is
// the enclosing node's declaration.
func (a *analysis) collectRefs(b *hclsyntax.Block, node *decl) {
	if sp, ok := spaceOfBlock(b.Type); ok && sp == spaceNode && len(b.Labels) > 0 {
		if d := a.byName[spaceNode][b.Labels[0]]; d != nil && d.block == b {
			node = d
		}
	}
	for _, attr := range sortedAttrs(b.Body) {
		for _, tr := range attr.Expr.Variables() {
			a.addRef(tr, attr, b, node)
		}
	}
	for _, bb := range b.Body.Blocks {
		a.collectRefs(bb, node)
	}
}

// sortedAttrs returns a body's attributes in source order.
func sortedAttrs(body *hclsyntax.Body) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, attr := range body.Attributes {
		out = append(out, attr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SrcRange.Start.Byte < out[j].SrcRange.Start.Byte })
	return out
}

func (a *analysis) addRef(tr hcl.Traversal, attr *hclsyntax.Attribute, b *hclsyntax.Block, node *decl) {
	sp, ok := spaceOfRoot(tr.RootName())
	if !ok || len(tr) < 2 {
		return
	}
	step, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return
	}
	r := &ref{space: sp, name: step.Name, tr: tr, nameRange: nameOfStep(step), attr: attr, block: b, node: node}
	if sp == spaceNode {
		r.kind = lang.NodeKind(tr.RootName())
	}
	if t := a.byName[sp][r.name]; t != nil && (sp != spaceNode || t.kind == r.kind) {
		r.target = t
	}
	a.refs = append(a.refs, r)
}

// nameOfStep is the range of an attribute step's name, without the dot before it.
func nameOfStep(s hcl.TraverseAttr) hcl.Range {
	r := s.SrcRange
	if n := len(s.Name); r.End.Byte-r.Start.Byte > n {
		r.Start.Byte = r.End.Byte - n
		r.Start.Column = r.End.Column - utf8.RuneCountInString(s.Name)
	}
	return r
}

// pos returns the position of a byte offset. Columns count characters from 1, as HCL's do
// (HCL counts grapheme clusters; the two differ only around combining characters).
func (a *analysis) pos(off int) hcl.Pos {
	if off < 0 {
		off = 0
	}
	if off > len(a.src) {
		off = len(a.src)
	}
	line := sort.Search(len(a.lines), func(i int) bool { return a.lines[i] > off }) - 1
	return hcl.Pos{Line: line + 1, Column: utf8.RuneCount(a.src[a.lines[line]:off]) + 1, Byte: off}
}

// rng returns the range between two byte offsets.
func (a *analysis) rng(start, end int) hcl.Range {
	return hcl.Range{Filename: a.filename, Start: a.pos(start), End: a.pos(end)}
}

// contains reports whether the offset is within r, its end included (a cursor just after a
// word is on it).
func contains(r hcl.Range, off int) bool { return r.Start.Byte <= off && off <= r.End.Byte }

// declAt returns the declaration whose name (or block type) is at off.
func (a *analysis) declAt(off int) *decl {
	for _, d := range a.decls {
		if contains(d.nameRange, off) {
			return d
		}
	}
	return nil
}

// refAt returns the reference whose root or name is at off (`task.fetch`, not the steps
// after it); with whole set, any step of it.
func (a *analysis) refAt(off int, whole bool) *ref {
	for _, r := range a.refs {
		end := r.nameRange
		if whole {
			end = r.tr.SourceRange()
		}
		if contains(hcl.RangeBetween(r.tr[0].SourceRange(), end), off) {
			return r
		}
	}
	return nil
}

// refsTo returns the references to d, in file order.
func (a *analysis) refsTo(d *decl) []*ref {
	var out []*ref
	for _, r := range a.refs {
		if r.target == d {
			out = append(out, r)
		}
	}
	return out
}

// blockPath returns the blocks that enclose off, outermost first.
func (a *analysis) blockPath(off int) []*hclsyntax.Block {
	if a.body == nil {
		return nil
	}
	var path []*hclsyntax.Block
	body := a.body
	for {
		var inner *hclsyntax.Block
		for _, b := range body.Blocks {
			if r := b.Range(); r.Start.Byte <= off && off < r.End.Byte {
				inner = b
				break
			}
		}
		if inner == nil {
			return path
		}
		path = append(path, inner)
		body = inner.Body
	}
}

// workflow loads the file as `fuscia validate` would, from the text held (nothing is read from
// disk: a called workflow is not loaded), for the plan facts hover shows. It is nil when the
// file does not parse.
func (a *analysis) workflow() *lang.Workflow {
	a.wfOnce.Do(func() {
		if a.body == nil || a.test || a.diags.HasErrors() {
			return
		}
		p := lang.NewParser()
		p.Sources = map[string][]byte{filepath.Clean(a.filename): a.src}
		a.wf, _ = p.Load(a.filename, lang.Options{})
	})
	return a.wf
}

// nodeDecl returns the declaration of a node block, or nil.
func (a *analysis) nodeDecl(b *hclsyntax.Block) *decl {
	if b == nil || len(b.Labels) == 0 || !isNodeKind(b.Type) {
		return nil
	}
	if d := a.byName[spaceNode][b.Labels[0]]; d != nil && d.block == b {
		return d
	}
	return nil
}

// staticString returns the value of an attribute that is a literal string.
func staticString(body *hclsyntax.Body, name string) (string, bool) {
	if body == nil {
		return "", false
	}
	attr := body.Attributes[name]
	if attr == nil {
		return "", false
	}
	t, ok := attr.Expr.(*hclsyntax.TemplateExpr)
	if !ok || len(t.Parts) != 1 {
		return "", false
	}
	lit, ok := t.Parts[0].(*hclsyntax.LiteralValueExpr)
	if !ok || !lit.Val.Type().Equals(cty.String) || lit.Val.IsNull() {
		return "", false
	}
	return lit.Val.AsString(), true
}

// exprText is the source text of an expression.
func (a *analysis) text(r hcl.Range) string {
	if r.Start.Byte < 0 || r.End.Byte > len(a.src) || r.Start.Byte > r.End.Byte {
		return ""
	}
	return string(a.src[r.Start.Byte:r.End.Byte])
}

// usesOf returns the steps of a block's `uses` reference ("builtin", "http"), or nil.
func usesOf(body *hclsyntax.Body) []string {
	if body == nil {
		return nil
	}
	attr := body.Attributes["uses"]
	if attr == nil {
		return nil
	}
	tr, diags := hcl.AbsTraversalForExpr(attr.Expr)
	if diags.HasErrors() {
		return nil
	}
	steps := []string{tr.RootName()}
	for _, s := range tr[1:] {
		a, ok := s.(hcl.TraverseAttr)
		if !ok {
			return nil
		}
		steps = append(steps, a.Name)
	}
	return steps
}
