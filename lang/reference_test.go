package lang

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/schema"
)

// The language reference is checked against the loader in both directions, so that neither
// can change without the other:
//
//   - every ```hcl block of the page is HCL in canonical `fuscia fmt` form, and every complete
//     workflow among them loads without a diagnostic (TestReferenceExamples);
//   - every block type and attribute the decoder accepts, every builtin input and every limit
//     appears in the page's section for it (TestReferenceCoversSchemas and the tests after it).
//
// A fenced block is a complete workflow unless an HTML comment on the line before it says
// otherwise:
//
//	<!-- fragment -->       a piece of a file: it must parse, nothing more
//	<!-- file: NAME -->     a complete workflow that others can `call` as ./NAME
//	<!-- error: SUMMARY --> a complete workflow that Load rejects with an error of that summary
const referencePath = "../docs/reference/language.md"

type refBlock struct {
	line   int    // of the first line of the block's content, in the page
	marker string // "", "fragment", "file" or "error"
	arg    string // the file name or the error summary
	src    []byte
}

func readReference(t *testing.T) []byte {
	t.Helper()
	page, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("the language reference cannot be read: %v", err)
	}
	return page
}

// hclBlocks extracts the ```hcl blocks of a Markdown page with their markers.
func hclBlocks(t *testing.T, page []byte) []refBlock {
	t.Helper()
	var blocks []refBlock
	var cur *refBlock
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(page))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```hcl":
			cur = &refBlock{line: n + 1}
			if c, ok := strings.CutPrefix(strings.TrimSpace(prev), "<!--"); ok {
				c = strings.TrimSpace(strings.TrimSuffix(c, "-->"))
				kind, arg, _ := strings.Cut(c, ":")
				cur.marker, cur.arg = strings.TrimSpace(kind), strings.TrimSpace(arg)
				if !slices.Contains([]string{"fragment", "file", "error"}, cur.marker) {
					t.Errorf("%s:%d: unknown marker %q before a ```hcl block", referencePath, n-1, prev)
				}
			}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.src = append(append(cur.src, line...), '\n')
		}
		prev = line
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```hcl block is not closed", referencePath, cur.line-1)
	}
	return blocks
}

// TestReferenceExamples loads every example of the language reference.
func TestReferenceExamples(t *testing.T) {
	blocks := hclBlocks(t, readReference(t))
	if len(blocks) < 20 {
		t.Fatalf("found %d ```hcl blocks in %s; the reference has an example per block", len(blocks), referencePath)
	}
	// Complete workflows are saved sources, so that one can call another by its file name.
	sources := map[string][]byte{}
	names := make([]string, len(blocks))
	for i, b := range blocks {
		names[i] = fmt.Sprintf("reference-line-%d.fsc.hcl", b.line)
		if b.marker == "file" {
			names[i] = b.arg
		}
		if b.marker != "fragment" {
			sources[names[i]] = b.src
		}
	}
	complete := 0
	for i, b := range blocks {
		where := fmt.Sprintf("%s:%d", referencePath, b.line)
		if _, diags := hclsyntax.ParseConfig(b.src, names[i], hcl.InitialPos); diags.HasErrors() {
			if b.marker != "error" {
				t.Errorf("%s: the example does not parse:\n%s", where, describeAt(b, diags))
			}
		} else if formatted, fdiags := Format(names[i], b.src); !fdiags.HasErrors() && !bytes.Equal(formatted, b.src) {
			t.Errorf("%s: the example is not in `fuscia fmt` form:\n%s", where, UnifiedDiff("example", b.src, formatted))
		}
		if b.marker == "fragment" {
			continue
		}
		complete++
		p := NewParser()
		p.Sources = sources
		w, diags := p.Load(names[i], Options{})
		switch {
		case b.marker == "error":
			found := false
			for _, d := range diags {
				found = found || d.Severity == hcl.DiagError && d.Summary == b.arg
			}
			if !found {
				t.Errorf("%s: the example should be rejected with %q; Load reported:\n%s", where, b.arg, describeAt(b, diags))
			}
		case len(diags) > 0:
			t.Errorf("%s: the example does not load cleanly:\n%s", where, describeAt(b, diags))
		case w == nil:
			t.Errorf("%s: Load returned no workflow", where)
		}
	}
	if complete < 15 {
		t.Errorf("only %d of the reference's examples are complete workflows; mark fewer as fragments", complete)
	}
}

// describeAt lists diagnostics with their lines in the page rather than in the example.
func describeAt(b refBlock, diags hcl.Diagnostics) string {
	var sb strings.Builder
	for _, d := range diags {
		line := 0
		if d.Subject != nil {
			line = b.line + d.Subject.Start.Line - 1
		}
		fmt.Fprintf(&sb, "  page line %d: %s: %s\n", line, d.Summary, d.Detail)
	}
	return sb.String()
}

// section returns the text of the page under the heading line, up to the next heading of the
// same or a higher level.
func section(t *testing.T, page []byte, heading string) string {
	t.Helper()
	level := strings.Index(heading, " ")
	lines := strings.Split(string(page), "\n")
	for i, l := range lines {
		if l != heading {
			continue
		}
		var out []string
		for _, l := range lines[i+1:] {
			if j := strings.Index(l, " "); j > 0 && j <= level && strings.Trim(l[:j], "#") == "" {
				break
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	t.Errorf("%s has no heading %q", referencePath, heading)
	return ""
}

func schemaNames(s *hcl.BodySchema) []string {
	var names []string
	for _, a := range s.Attributes {
		names = append(names, a.Name)
	}
	for _, b := range s.Blocks {
		names = append(names, b.Type)
	}
	return names
}

// TestReferenceCoversSchemas checks that every block and attribute the decoder accepts is
// written about in the reference's section for its block.
func TestReferenceCoversSchemas(t *testing.T) {
	page := readReference(t)
	type part struct {
		heading string
		names   []string
	}
	parts := []part{
		{"## `workflow`", schemaNames(workflowSchema)},
		{"### `retry`", schemaNames(retrySchema)},
		{"### `data`", schemaNames(dataSchema)},
		{"## `variable`", schemaNames(variableSchema)},
		{"## `secret`", schemaNames(secretSchema)},
		{"## `component`", schemaNames(componentSchema)},
		{"## `plugin`", schemaNames(pluginSchema)},
		{"### `webhook`", append(schemaNames(authSchema), schemaNames(hmacSchema)...)},
		{"## `output`", schemaNames(outputSchema)},
		{"## Common node attributes", append(schemaNames(&hcl.BodySchema{Attributes: commonNodeAttrs}), "retry")},
		{"### `approval`", schemaNames(approvalSchema)},
		{"## `switch`", append(schemaNames(caseSchema), "case", "default")},
	}
	for _, typ := range triggerTypes {
		parts = append(parts, part{"### `" + typ + "`", schemaNames(triggerSchemas[typ])})
	}
	for kind, s := range nodeSchemas {
		var own []string
		for _, name := range schemaNames(s) {
			if !slices.ContainsFunc(commonNodeAttrs, func(a hcl.AttributeSchema) bool { return a.Name == name }) && name != "retry" {
				own = append(own, name)
			}
		}
		parts = append(parts, part{"## `" + string(kind) + "`", own})
	}
	for _, b := range fileSchema.Blocks {
		parts = append(parts, part{"## `" + b.Type + "`", nil})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].heading < parts[j].heading })
	for _, p := range parts {
		text := section(t, page, p.heading)
		for _, name := range p.names {
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("the reference's section %s does not mention `%s`", p.heading, name)
			}
		}
	}
}

// TestReferenceCoversBuiltins checks that every builtin task has a section that names each of
// its inputs.
func TestReferenceCoversBuiltins(t *testing.T) {
	page := readReference(t)
	for _, name := range builtin.Names() {
		s, ok := builtin.InputSchema(name)
		if !ok {
			t.Fatalf("builtin %s has no schema", name)
		}
		var doc struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(s.Raw(), &doc); err != nil {
			t.Fatalf("builtin %s: %v", name, err)
		}
		text := section(t, page, "#### `builtin."+name+"`")
		for prop := range doc.Properties {
			if !strings.Contains(text, "`"+prop+"`") {
				t.Errorf("the reference's section on builtin.%s does not mention its input `%s`", name, prop)
			}
		}
	}
}

// TestReferenceLimits checks that each row of the Limits table states the limit the code
// enforces.
func TestReferenceLimits(t *testing.T) {
	text := section(t, readReference(t), "## Limits")
	rows := []struct{ row, value string }{
		{"size of one workflow file", schema.FormatSize(MaxFileSize)},
		{"nodes in a workflow", thousands(MaxNodes)},
		{"length of a name", thousands(MaxNameLength)},
		{"items of a `for_each`", thousands(MaxForEachItems)},
		{"brackets, braces and parentheses", thousands(MaxNestingDepth)},
		{"`max_parallel`", "default " + thousands(DefaultMaxParallel)},
		{"`max_iterations`", "default " + thousands(DefaultMaxIterations)},
		{"one node's output", schema.FormatSize(DefaultMaxNodeOutput)},
		{"all outputs of one run", schema.FormatSize(DefaultMaxTotal)},
		{"elements of a `setproduct` result", thousands(funcs.MaxProduct)},
	}
	for _, r := range rows {
		found := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "| "+r.row) {
				found = true
				if !strings.Contains(line, r.value) {
					t.Errorf("the Limits row %q does not state %s:\n%s", r.row, r.value, line)
				}
			}
		}
		if !found {
			t.Errorf("the Limits table has no row %q", r.row)
		}
	}
}

// thousands writes n with comma separators, as the reference does: 100000 is "100,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestReferenceFunctionsLinked checks that the reference links the function page, which
// lists every function.
func TestReferenceFunctionsLinked(t *testing.T) {
	page := readReference(t)
	if !bytes.Contains(page, []byte("](functions.md")) {
		t.Error("the language reference does not link functions.md")
	}
	if _, err := os.Stat(filepath.Join("..", "docs", "reference", "functions.md")); err != nil {
		t.Errorf("docs/reference/functions.md: %v (run `go generate ./lang/funcs`)", err)
	}
}
