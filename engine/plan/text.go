package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// WriteText renders the plan for people: stage by stage, each node with what it runs, its
// timeout, retry, pool (when not the default), capabilities and inputs, and the summary line
// of docs/reference/cli.md.
func (p *Plan) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "Workflow %q (%s)\n", p.Workflow, p.File)
	for i, stage := range p.Stages {
		fmt.Fprintf(b, "\nStage %d:\n", i+1)
		for _, addr := range stage {
			p.writeNode(b, addr, "  ")
		}
	}
	if len(p.Components)+len(p.Plugins) > 0 {
		b.WriteString("\n")
	}
	for _, name := range sortedKeys(p.Components) {
		c := p.Components[name]
		fmt.Fprintf(b, "component.%s: %s@%s (%s)\n", name, c.Source, c.Version, c.Digest)
	}
	for _, name := range sortedKeys(p.Plugins) {
		pl := p.Plugins[name]
		v := pl.Version
		if v == "" {
			v = "unversioned"
		}
		fmt.Fprintf(b, "plugin.%s: %s@%s (%s)\n", name, pl.Source, v, pl.Digest)
	}
	fmt.Fprintf(b, "\n%s\n", p.Summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the last line of a plan: `Plan: N nodes in S stages, P plugins, C components.`
// N counts every node, loop bodies included; S the top-level stages.
func (p *Plan) Summary() string {
	return fmt.Sprintf("Plan: %d nodes in %d stages, %d plugins, %d components.",
		len(p.Nodes), len(p.Stages), len(p.Plugins), len(p.Components))
}

func (p *Plan) writeNode(b *strings.Builder, addr, indent string) {
	n := p.Nodes[addr]
	head := n.Dispatch
	if n.Uses != nil {
		head = *n.Uses
		if n.Dispatch != "builtin" {
			head += ", " + n.Dispatch
		}
	}
	fmt.Fprintf(b, "%s+ %s (%s)\n", indent, addr, head)
	in := indent + "    "
	if n.Detail != "" {
		fmt.Fprintf(b, "%s%-9s %s\n", in, n.Kind, n.Detail)
	}
	if len(n.DependsOn) > 0 {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "after", strings.Join(n.DependsOn, ", "))
	}
	// A task's attempt and a wait use a timeout, only a task a retry; the other kinds accept
	// the settings and ignore them (docs/reference/language.md): shown there, they said what
	// does not happen.
	if n.Kind == string(lang.KindTask) || n.Kind == string(lang.KindWait) {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "timeout", n.Timeout)
	}
	if n.Kind == string(lang.KindTask) {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "retry", describeRetry(n.Retry))
	}
	// Only a pool other than the default is shown, so that a plan without pools reads as before.
	if n.Pool != "" && n.Pool != lang.DefaultPool {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "pool", n.Pool)
	}
	if !n.FailWorkflow {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "critical", "no (fail_workflow = false)")
	}
	if c := n.Capabilities; c != nil {
		fmt.Fprintf(b, "%s%-9s hosts %s; paths %s\n", in, "grants", listOrNone(c.AllowedHosts), listOrNone(c.AllowedPaths))
	}
	if n.When != nil {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "when", renderJSONish(n.When))
	}
	if n.forEach != cty.NilVal {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "for_each", RenderValue(n.forEach, in))
	} else if n.ForEach != nil {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "for_each", renderJSONish(n.ForEach))
	}
	if n.inputs != cty.NilVal {
		fmt.Fprintf(b, "%s%-9s %s\n", in, "inputs", RenderValue(n.inputs, in))
	}
	for i, stage := range n.BodyStages {
		fmt.Fprintf(b, "%sbody stage %d:\n", in, i+1)
		for _, baddr := range stage {
			p.writeNode(b, baddr, in+"  ")
		}
	}
}

func describeRetry(r Retry) string {
	if r.Attempts <= 1 {
		return "1 attempt (no retry)"
	}
	if r.Backoff == "fixed" {
		return fmt.Sprintf("%d attempts, fixed delay %s", r.Attempts, r.InitialDelay)
	}
	return fmt.Sprintf("%d attempts, exponential backoff %s to %s", r.Attempts, r.InitialDelay, r.MaxDelay)
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

func renderJSONish(v any) string {
	switch x := v.(type) {
	case map[string]bool:
		if x["sensitive"] {
			return "(sensitive)"
		}
		if x["unknown"] {
			return "(known after apply)"
		}
	case bool:
		return fmt.Sprint(x)
	}
	// A plan read back from JSON has no cty values: show JSON rather than Go's %v syntax.
	if out, err := json.Marshal(v); err == nil {
		return string(out)
	}
	return fmt.Sprintf("%v", v)
}

// RenderValue renders a plan-time value in HCL syntax, with `(known after apply)` for unknown
// parts and `(sensitive)` for values derived from secrets, like Terraform's plan. Nested lines
// are indented by indent plus two spaces per level.
func RenderValue(v cty.Value, indent string) string {
	b := &strings.Builder{}
	renderValue(b, v, indent)
	return b.String()
}

func renderValue(b *strings.Builder, v cty.Value, indent string) {
	if v.HasMark(lang.Sensitive) {
		b.WriteString("(sensitive)")
		return
	}
	v, _ = v.Unmark()
	switch {
	case !v.IsKnown():
		b.WriteString("(known after apply)")
		return
	case v.IsNull():
		b.WriteString("null")
		return
	}
	ty := v.Type()
	switch {
	case ty.IsPrimitiveType():
		b.Write(hclwrite.TokensForValue(v).Bytes())
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		if v.LengthInt() == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			b.WriteString(indent + "  ")
			renderValue(b, e, indent+"  ")
			b.WriteString(",\n")
		}
		b.WriteString(indent + "]")
	case ty.IsMapType() || ty.IsObjectType():
		if v.LengthInt() == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, v.LengthInt())
		vals := make(map[string]cty.Value, v.LengthInt())
		width := 0
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			key := k.AsString()
			if !hclIdentifier(key) {
				key = string(hclwrite.TokensForValue(k).Bytes())
			}
			keys = append(keys, key)
			vals[key] = e
			width = max(width, len(key))
		}
		b.WriteString("{\n")
		for _, k := range keys {
			fmt.Fprintf(b, "%s  %-*s = ", indent, width, k)
			renderValue(b, vals[k], indent+"  ")
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	default:
		b.WriteString("(known after apply)")
	}
}

func hclIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r == '-' || r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
