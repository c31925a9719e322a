package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang/builtin"
)

// A task's `pool` names the group of workers its attempts go to when Fuscia runs as a cluster.
// Only the attempts that leave the coordinator have a pool: those of components, plugins and
// builtin.http (Uses.RunsOnWorker). On one machine there is one pool and the attribute is
// accepted and ignored.
//
// A pool is a literal string, never an expression: it must be known without evaluating
// anything (before variables are set, in a plan read back from a file), and it becomes a token
// of a message subject, so its names are kept to a small, safe alphabet (ValidPoolName).

// DefaultPool is the pool of a task without `pool`, and the one a worker serves unless told
// otherwise.
const DefaultPool = "default"

// MaxPoolNameLength is the longest pool name, in bytes.
const MaxPoolNameLength = 64

// ValidPoolName reports whether s is a valid pool name: 1 to MaxPoolNameLength characters,
// lowercase letters a-z, digits 0-9, '_' and '-', starting with a letter or a digit. The same
// rule applies wherever a pool is named (a task's `pool`, a worker's -pool flag).
func ValidPoolName(s string) bool {
	if len(s) == 0 || len(s) > MaxPoolNameLength || !poolAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !poolAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func poolAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// PoolNameRule says what ValidPoolName accepts, for messages.
const PoolNameRule = `a pool name is 1 to 64 characters: lowercase letters a-z, digits 0-9, "_" and "-", starting with a letter or a digit`

// CheckPoolName returns nil when name is a valid pool name, and otherwise an error that says
// what is wrong with it and what the rule is.
func CheckPoolName(name string) error {
	if ValidPoolName(name) {
		return nil
	}
	if len(name) > MaxPoolNameLength {
		return fmt.Errorf("the pool name %q is %d characters long; %s", truncate(name, 80), len(name), PoolNameRule)
	}
	return fmt.Errorf("the pool name %q is not valid; %s", name, PoolNameRule)
}

// RunsOnWorker reports whether attempts of a task with this uses leave the coordinator in a
// cluster: components, plugins and the builtins marked Worker in lang/builtin's table
// (builtin.http) do; the other builtins run in the coordinator, where a pool means nothing.
func (u Uses) RunsOnWorker() bool {
	return u.Kind != UsesBuiltin || builtin.RunsOnWorker(u.Name)
}

// decodePool reads a task's `pool`: a literal string with a valid pool name. A pool on a
// builtin that runs in the coordinator is accepted with a warning, since it cannot take effect.
func (d *decoder) decodePool(n *Node, t *TaskSpec, attr *hcl.Attribute) {
	tmpl, ok := attr.Expr.(*hclsyntax.TemplateExpr)
	if !ok || !tmpl.IsStringLiteral() {
		d.add(errorf(attr.Expr.Range(), "Invalid pool",
			"`pool` must be a literal string such as \"gpu\"; this is %s. The pool is read before anything is evaluated, so it cannot use references, function calls or template interpolation.",
			describeExpr(attr.Expr)))
		return
	}
	v, diags := tmpl.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		d.add(diags...)
		return
	}
	name := v.AsString()
	if err := CheckPoolName(name); err != nil {
		d.add(errorf(attr.Expr.Range(), "Invalid pool name", "%s", Sentence(err.Error())))
		return
	}
	t.Pool, t.PoolRange = name, attr.Range
	if t.Uses.Kind == UsesBuiltin && t.Uses.Name != "" && !t.Uses.RunsOnWorker() {
		rng := attr.Range
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Pool has no effect",
			Detail: fmt.Sprintf("Task %q sets pool = %q, but pool has no effect: %s runs in the coordinator. Only the attempts of components, plugins and builtin.http go to a pool's workers; remove `pool` from this task.",
				n.Addr.Name, name, t.Uses),
			Subject: &rng,
		})
	}
}

// describeExpr names the kind of a non-literal expression, for messages about attributes that
// must be literals.
func describeExpr(expr hcl.Expression) string {
	switch e := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr, *hclsyntax.RelativeTraversalExpr, *hclsyntax.IndexExpr:
		return "a reference"
	case *hclsyntax.FunctionCallExpr:
		return "a function call"
	case *hclsyntax.TemplateExpr, *hclsyntax.TemplateWrapExpr:
		return "a template with interpolation"
	case *hclsyntax.LiteralValueExpr:
		if e.Val.IsNull() {
			return "null"
		}
		return "a " + typeName(e.Val.Type()) + ", not a string"
	default:
		return "an expression"
	}
}
