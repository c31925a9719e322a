package testfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
)

// Ext is the suffix of test files; WorkflowExt the suffix of the workflow a test file tests by
// default.
const (
	Ext         = ".fsctest.hcl"
	WorkflowExt = ".fsc.hcl"
)

// Load reads and decodes the test file filename. See DecodeWith.
func Load(filename string) (*File, hcl.Diagnostics) { return LoadWith(lang.NewParser(), filename) }

// Decode decodes src as the test file filename. See DecodeWith.
func Decode(filename string, src []byte) (*File, hcl.Diagnostics) {
	return DecodeWith(lang.NewParser(), filename, src)
}

// LoadWith reads filename with the checks lang applies to workflow files (a regular file of at
// most lang.MaxFileSize bytes of UTF-8 text) and decodes it with DecodeWith.
func LoadWith(p *lang.Parser, filename string) (*File, hcl.Diagnostics) {
	info, err := os.Stat(filename)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read test file",
			Detail: fmt.Sprintf("The file %s could not be read: %s.", filename, lang.DescribeFSError(err))}}
	}
	if !info.Mode().IsRegular() {
		what := "a directory; give a " + Ext + " file"
		if !info.IsDir() {
			what = "not a regular file (a pipe or device would block or never end); give a " + Ext + " file"
		}
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read test file",
			Detail: fmt.Sprintf("%s is %s.", filename, what)}}
	}
	if info.Size() > lang.MaxFileSize {
		return nil, hcl.Diagnostics{fileTooLarge(filename, info.Size())}
	}
	src, err := os.ReadFile(filename)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read test file",
			Detail: fmt.Sprintf("The file %s could not be read: %s.", filename, lang.DescribeFSError(err))}}
	}
	return DecodeWith(p, filename, src)
}

// DecodeWith parses src as the test file filename with p (which keeps the source, so that
// p.Files() renders diagnostics with their lines) and decodes it.
//
// Decoding is strict: an unknown block or argument is an error. Variables, payloads and the
// settings of runs and mock_http blocks are evaluated here, with the language's functions and no
// references; mock expressions and assertions are kept as expressions for the runner. Checks
// that need the workflow are Check's.
//
// The File is returned whenever src could be parsed, even with errors, so that an editor can
// show what it can; it is safe to run only when the diagnostics have no errors. Diagnostics are
// sorted by position.
func DecodeWith(p *lang.Parser, filename string, src []byte) (*File, hcl.Diagnostics) {
	if len(src) > lang.MaxFileSize {
		return nil, hcl.Diagnostics{fileTooLarge(filename, int64(len(src)))}
	}
	if bytes.IndexByte(src, 0) >= 0 || !utf8.Valid(src) {
		return nil, hcl.Diagnostics{errorf(fileStart(filename), "Test file is not text",
			"%s contains bytes that are not UTF-8 text (a NUL byte or an invalid sequence). A test file is HCL text.", filename)}
	}
	// ParseSource adds the nesting limit and keeps the source for rendering.
	hf, diags := p.ParseSource(filename, src)
	if hf == nil || diags.HasErrors() {
		return nil, diags
	}
	d := &decoder{filename: filename, static: newStaticEval(funcs.Table())}
	f := d.file(hf.Body)
	diags = append(diags, d.diags...)
	diags = append(diags, d.static.diags...)
	lang.SortDiagnostics(diags)
	return f, diags
}

func fileTooLarge(filename string, size int64) *hcl.Diagnostic {
	return errorf(fileStart(filename), "Test file too large",
		"%s is %d bytes; the limit for one test file is %d bytes (1 MiB). Split its runs over several test files.",
		filename, size, lang.MaxFileSize)
}

// fileStart is the range of line 1 of a file, where diagnostics about the whole file point.
func fileStart(filename string) hcl.Range {
	return hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}
}

// DefaultWorkflow is the workflow a test file tests when a run does not say: the file's name
// with .fsctest.hcl replaced by .fsc.hcl, in the same directory. ok is false when filename does
// not end in .fsctest.hcl.
func DefaultWorkflow(filename string) (path string, ok bool) {
	stem, ok := strings.CutSuffix(filename, Ext)
	if !ok || filepath.Base(filename) == Ext {
		return "", false
	}
	return stem + WorkflowExt, true
}

// decoder holds the state of decoding one test file.
type decoder struct {
	filename string
	static   *staticEval
	diags    hcl.Diagnostics
}

func (d *decoder) add(ds ...*hcl.Diagnostic) {
	for _, x := range ds {
		if x != nil {
			d.diags = append(d.diags, x)
		}
	}
}

func (d *decoder) file(body hcl.Body) *File {
	f := &File{Path: d.filename, Variables: map[string]cty.Value{}, VariableRanges: map[string]hcl.Range{}}
	c, diags := content(body, fileSchema, "a test file at the top level")
	d.add(diags...)
	for i, b := range c.Blocks.OfType("variables") {
		if i > 0 {
			first := c.Blocks.OfType("variables")[0]
			d.add(errorf(b.DefRange, "Duplicate variables block",
				"A test file has at most one variables block; the first is at line %d. Merge them.", first.DefRange.Start.Line))
			continue
		}
		d.variablesBlock(b, f)
	}
	f.Mocks = d.mocks(c.Blocks, "the test file")
	runs := map[string]*Run{}
	for _, b := range c.Blocks.OfType("run") {
		r := d.run(b, f)
		if r == nil {
			continue
		}
		if prev := runs[r.Name]; prev != nil {
			d.add(errorf(b.LabelRanges[0], "Duplicate run name",
				"A run named %q was already declared at line %d. Run names must be unique in a test file: rename one.",
				r.Name, prev.DeclRange.Start.Line))
			continue
		}
		runs[r.Name] = r
		f.Runs = append(f.Runs, r)
	}
	return f
}

// variablesBlock decodes the file's `variables { NAME = VALUE … }`.
func (d *decoder) variablesBlock(b *hcl.Block, f *File) {
	attrs, diags := b.Body.JustAttributes()
	for _, x := range diags {
		if strings.HasPrefix(x.Summary, "Unexpected ") && strings.HasSuffix(x.Summary, " block") {
			x.Detail = "The variables block holds NAME = VALUE arguments only: write an object value, such as limits = { max = 3 }, instead of a block."
		}
	}
	d.add(diags...)
	for _, a := range sortedAttrs(attrs) {
		v, ok := d.static.value(a.Expr, fmt.Sprintf("variable %q", a.Name))
		if !ok {
			continue
		}
		f.Variables[a.Name] = v
		f.VariableRanges[a.Name] = a.NameRange
	}
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *hcl.Attribute) int { return a.Range.Start.Byte - b.Range.Start.Byte })
	return out
}

// run decodes a `run "NAME"` block; nil when its name is empty.
func (d *decoder) run(b *hcl.Block, f *File) *Run {
	name := b.Labels[0]
	if strings.TrimSpace(name) == "" {
		d.add(errorf(b.LabelRanges[0], "Missing run name",
			"A run block needs a name, e.g. run \"pays_orders\" { … }: reports and -run filters use it."))
		return nil
	}
	r := &Run{
		Name:              name,
		DeclRange:         b.DefRange,
		WorkflowRange:     b.DefRange,
		TriggerRange:      b.DefRange,
		Variables:         make(map[string]cty.Value, len(f.Variables)),
		VariableRanges:    make(map[string]hcl.Range, len(f.Variables)),
		Payload:           cty.NilVal,
		ExpectStatus:      StatusSucceeded,
		ExpectStatusRange: b.DefRange,
	}
	for k, v := range f.Variables {
		r.Variables[k] = v
		r.VariableRanges[k] = f.VariableRanges[k]
	}
	c, diags := content(b.Body, runSchema, "a run block")
	d.add(diags...)
	a := c.Attributes

	if attr := a["workflow"]; attr != nil {
		r.WorkflowRange = attr.Expr.Range()
		if p, ok := d.static.str(attr, "the workflow of a run"); ok {
			switch {
			case strings.TrimSpace(p) == "":
				d.add(errorf(attr.Expr.Range(), "Invalid value for workflow",
					"The workflow of a run is the path of a %s file, relative to the test file; it must not be empty.", WorkflowExt))
			case !strings.HasSuffix(p, WorkflowExt):
				// Only workflow files are read: a parse error shows the file's lines, and
				// workflow = "/proc/self/environ" would print the environment into a CI log.
				d.add(errorf(attr.Expr.Range(), "Invalid value for workflow",
					"The workflow of a run is the path of a %s file, relative to the test file; %q is not one.", WorkflowExt, p))
			case filepath.IsAbs(p):
				r.Workflow = filepath.Clean(p)
			default:
				r.Workflow = filepath.Join(filepath.Dir(d.filename), p)
			}
		}
	} else if def, ok := DefaultWorkflow(d.filename); ok {
		r.Workflow = def
	} else {
		d.add(errorf(b.DefRange, "Missing workflow",
			"The test file's name does not end in %s, so run %q has no default workflow: set workflow = \"NAME%s\" (relative to the test file), or rename the file.",
			Ext, name, WorkflowExt))
	}

	if attr := a["trigger"]; attr != nil {
		r.TriggerRange = attr.Expr.Range()
		if t, ok := d.static.str(attr, "the trigger of a run"); ok {
			r.Trigger = t
		}
	}
	if attr := a["variables"]; attr != nil {
		if vars, ok := d.static.object(attr.Expr, "the variables of a run"); ok {
			keys := objectKeyRanges(attr.Expr)
			for k, v := range vars {
				r.Variables[k] = v
				rng, found := keys[k]
				if !found {
					rng = attr.Expr.Range()
				}
				r.VariableRanges[k] = rng
			}
		}
	}
	if attr := a["payload"]; attr != nil {
		if v, ok := d.static.value(attr.Expr, "the payload of a run"); ok {
			r.Payload = v
		}
	}
	if attr := a["expect_failures"]; attr != nil {
		r.ExpectFailures = d.expectFailures(attr)
		if a["expect_status"] == nil {
			r.ExpectStatus = StatusFailed
		}
	}
	if attr := a["expect_status"]; attr != nil {
		r.ExpectStatusRange = attr.Expr.Range()
		if s, ok := d.static.str(attr, "the expect_status of a run"); ok {
			if slices.Contains(runStatuses, s) {
				r.ExpectStatus = s
			} else {
				d.add(errorf(attr.Expr.Range(), "Invalid value for expect_status",
					"%q is not a run status.%s expect_status is one of %s.", s, suggestion(s, runStatuses), quoteList(runStatuses)))
			}
		}
	}
	r.Mocks = d.mocks(c.Blocks, fmt.Sprintf("run %q", name))
	for _, ab := range c.Blocks.OfType("assert") {
		if as := d.assert(ab); as != nil {
			r.Asserts = append(r.Asserts, as)
		}
	}
	return r
}

// objectKeyRanges maps the literal keys of an object constructor to their ranges.
func objectKeyRanges(expr hcl.Expression) map[string]hcl.Range {
	out := map[string]hcl.Range{}
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return out
	}
	for _, item := range obj.Items {
		if k, ok := literalKey(item.KeyExpr); ok {
			out[k] = item.KeyExpr.Range()
		}
	}
	return out
}

// literalKey is the key of an object item written as a name or a string literal.
func literalKey(expr hclsyntax.Expression) (string, bool) {
	if k := hcl.ExprAsKeyword(expr); k != "" {
		return k, true
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// expectFailures decodes `expect_failures = [task.x, loop.y]`.
func (d *decoder) expectFailures(attr *hcl.Attribute) []Expected {
	exprs, diags := hcl.ExprList(attr.Expr)
	if diags.HasErrors() {
		d.add(errorf(attr.Expr.Range(), "Invalid expect_failures",
			"expect_failures is a list of node addresses such as [task.charge, loop.items]."))
		return nil
	}
	var out []Expected
	seen := map[string]hcl.Range{}
	for _, e := range exprs {
		tr, tdiags := hcl.AbsTraversalForExpr(e)
		addr, ok := "", false
		if !tdiags.HasErrors() && len(tr) == 2 {
			if step, isAttr := tr[1].(hcl.TraverseAttr); isAttr {
				var a lang.Addr
				a, ok = lang.ParseAddr(tr.RootName() + "." + step.Name)
				addr = a.String()
			}
		}
		if !ok {
			d.add(errorf(e.Range(), "Invalid expect_failures entry",
				"Each entry of expect_failures is a node address KIND.NAME, such as task.charge, written without quotes; KIND is one of task, switch, join, loop, wait, call."))
			continue
		}
		if prev, dup := seen[addr]; dup {
			d.add(errorf(e.Range(), "Duplicate expect_failures entry",
				"%s is already listed at line %d, column %d; list each node once.", addr, prev.Start.Line, prev.Start.Column))
			continue
		}
		seen[addr] = e.Range()
		out = append(out, Expected{Addr: addr, Range: e.Range()})
	}
	return out
}

// assertRoots are what an assert condition may read.
var assertRoots = []string{"output", "status", "node", "var", "payload"}

func (d *decoder) assert(b *hcl.Block) *Assert {
	c, diags := content(b.Body, assertSchema, "an assert block")
	d.add(diags...)
	cond := c.Attributes["condition"]
	if cond == nil {
		return nil
	}
	as := &Assert{Condition: cond.Expr, DeclRange: b.DefRange}
	d.checkRoots(cond.Expr, "An assert condition", assertRoots)
	if m := c.Attributes["error_message"]; m != nil {
		as.ErrorMessage = m.Expr
		d.checkRoots(m.Expr, "An assert error_message", assertRoots)
	}
	return as
}

// checkRoots reports each reference of expr whose root is not one of allowed.
func (d *decoder) checkRoots(expr hcl.Expression, what string, allowed []string) {
	for _, tr := range expr.Variables() {
		root := tr.RootName()
		if slices.Contains(allowed, root) {
			continue
		}
		d.add(errorf(tr.SourceRange(), "Unknown reference",
			"%s may refer to %s, not to %q.%s", what, strings.Join(allowed, ", "), root, suggestion(root, allowed)))
	}
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
