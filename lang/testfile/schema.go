package testfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang"
)

// The body schemas of a test file. Decoding is strict: an argument or block a schema does not
// list is an error that names it and lists what the block allows (content).

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "variables"},
		{Type: "mock", LabelNames: []string{"node"}},
		{Type: "mock_component", LabelNames: []string{"component"}},
		{Type: "mock_plugin", LabelNames: []string{"plugin"}},
		{Type: "mock_http"},
		{Type: "run", LabelNames: []string{"name"}},
	},
}

var runSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "workflow"},
		{Name: "trigger"},
		{Name: "variables"},
		{Name: "payload"},
		{Name: "expect_status"},
		{Name: "expect_failures"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "mock", LabelNames: []string{"node"}},
		{Type: "mock_component", LabelNames: []string{"component"}},
		{Type: "mock_plugin", LabelNames: []string{"plugin"}},
		{Type: "mock_http"},
		{Type: "assert"},
	},
}

// taskMockSchema is the body of `mock "task.NAME"` and of a `task "NAME"` block in a
// mock_component or mock_plugin.
var taskMockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "output"}, {Name: "error"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "attempt"}},
}

var attemptSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "output"}, {Name: "error"}},
}

var waitMockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "data"}, {Name: "reject"}, {Name: "timeout"}},
}

var groupMockSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "task", LabelNames: []string{"name"}}},
}

var httpMockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "url", Required: true},
		{Name: "method"},
		{Name: "status"},
		{Name: "headers"},
		{Name: "body"},
		{Name: "json"},
	},
}

var assertSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message"},
	},
}

// content decodes body against schema. HCL's own "Unsupported argument" and "Unsupported block
// type" errors keep their summaries (the ones lang reports for workflows) and get a detail that
// names the block (where, e.g. "a run block") and lists what it allows.
func content(body hcl.Body, schema *hcl.BodySchema, where string) (*hcl.BodyContent, hcl.Diagnostics) {
	c, diags := body.Content(schema)
	sb, _ := body.(*hclsyntax.Body)
	if sb == nil {
		return c, diags
	}
	var attrNames, blockNames []string
	for _, a := range schema.Attributes {
		attrNames = append(attrNames, a.Name)
	}
	for _, b := range schema.Blocks {
		blockNames = append(blockNames, b.Type)
	}
	allowed := allowedList(attrNames, blockNames)
	for _, d := range diags {
		if d.Subject == nil {
			continue
		}
		switch d.Summary {
		case "Unsupported argument":
			for name, a := range sb.Attributes {
				if a.NameRange == *d.Subject {
					hint := suggestion(name, attrNames)
					if hint == "" && slices.Contains(blockNames, name) {
						hint = fmt.Sprintf(" %q is a block here: write %s { … } without the equals sign.", name, name)
					}
					d.Detail = fmt.Sprintf("An argument named %q is not allowed in %s.%s %s", name, where, hint, allowed)
				}
			}
		case "Unsupported block type":
			for _, b := range sb.Blocks {
				if b.TypeRange == *d.Subject {
					hint := suggestion(b.Type, blockNames)
					if hint == "" && slices.Contains(attrNames, b.Type) {
						hint = fmt.Sprintf(" %q is an argument here: write %s = … with an equals sign.", b.Type, b.Type)
					}
					d.Detail = fmt.Sprintf("A block of type %q is not allowed in %s.%s %s", b.Type, where, hint, allowed)
				}
			}
		}
	}
	return c, diags
}

// allowedList says what a block may contain, as a sentence.
func allowedList(attrs, blocks []string) string {
	var parts []string
	if len(attrs) > 0 {
		parts = append(parts, plural(len(attrs), "the argument ", "the arguments ")+strings.Join(attrs, ", "))
	}
	if len(blocks) > 0 {
		parts = append(parts, plural(len(blocks), "the block ", "the blocks ")+strings.Join(blocks, ", "))
	}
	if len(parts) == 0 {
		return "It allows no arguments and no blocks."
	}
	return "It allows " + strings.Join(parts, " and ") + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// suggestion is a " Did you mean …?" hint when one of candidates is close to name.
func suggestion(name string, candidates []string) string {
	if best := closest(name, candidates); best != "" {
		return fmt.Sprintf(" Did you mean %q?", best)
	}
	return ""
}

// closest returns the candidate within two edits of name (the nearest, then the first in
// sorted order), or "". A name must keep at least one of its characters: "sh" does not
// suggest "db".
func closest(name string, candidates []string) string {
	best, bestDist := "", min(3, len(name))
	for _, c := range candidates {
		if d := lang.EditDistance(name, c); d < bestDist || (d == bestDist && best != "" && c < best) {
			best, bestDist = c, d
		}
	}
	return best
}
