// Package refdoc renders docs/reference/functions.md from funcs.Docs. It is a package of its
// own, apart from the generator's main, so that the test of lang/funcs can render the page
// and compare it with the committed one.
package refdoc

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fuscia/fuscia/lang/funcs"
)

// Path is where the page lives, relative to the repository's root.
const Path = "docs/reference/functions.md"

const intro = `<!-- Generated from lang/funcs/docs.go by ` + "`go generate ./lang/funcs`" + `; do not edit. -->

# Function reference

Expressions in a workflow can call the functions below. They have the names and the behaviour
of Terraform's functions of the same name, so what you know from Terraform applies; the
[language reference](language.md#function-calls) says how to call them.

- **Every function is pure**: its result depends on its arguments alone. A workflow is
  evaluated at ` + "`plan`" + ` and again at ` + "`apply`" + `, and both must agree, so there is no
  ` + "`timestamp`, `uuid`, `file`, `templatefile`, `env`" + ` or anything else that reads the clock,
  randomness, the file system or the environment. Pass such values in with a variable or the
  trigger's payload.
- **Unknown values**: at ` + "`plan`" + ` (and ` + "`validate`" + `) the outputs of nodes are not known yet. A
  function called with an unknown argument gives an unknown result, shown as
  ` + "`(known after apply)`" + `, not an error.
- **Sensitive values** stay sensitive: the result of a function called with a value derived from
  a ` + "`secret`" + ` or a sensitive variable is sensitive too (` + "`sha256(secret.key)`" + ` included), and
  error messages do not quote it.
- An argument of the wrong type is converted when it can be (` + "`\"42\"`" + ` for a number), and is an
  error naming the function and the argument otherwise.

Signatures are written ` + "`name(param type, …) → result`" + `, in Terraform's type syntax: ` + "`any`" + ` is
any type, ` + "`list(T)`" + ` a sequence (a list, or a tuple such as ` + "`[1, \"a\"]`" + `) of ` + "`T`" + `, ` + "`set(T)`" + ` a
set, ` + "`map(T)`" + ` a map or an object whose values are ` + "`T`" + `. ` + "`...T`" + ` is a variadic parameter: any number
of arguments of type ` + "`T`" + `, or one list expanded with ` + "`...`" + ` after it (` + "`max(scores...)`" + `). The
parameters of ` + "`try`" + ` and ` + "`can`" + ` are expressions, which the function evaluates itself.
`

// Render returns the page for docs.
func Render(docs []funcs.Doc) []byte {
	var b bytes.Buffer
	b.WriteString(intro)

	// Every function by category, linked to its section. (Not a heading "Index": its anchor
	// would be taken from the function index.)
	b.WriteString("\n## Functions by category\n\n")
	b.WriteString("| category | functions |\n|---|---|\n")
	for _, group := range byCategory(docs) {
		links := make([]string, len(group))
		for i, d := range group {
			links[i] = fmt.Sprintf("[`%s`](#%s)", d.Name, d.Name)
		}
		fmt.Fprintf(&b, "| %s | %s |\n", group[0].Category, strings.Join(links, ", "))
	}

	for _, group := range byCategory(docs) {
		fmt.Fprintf(&b, "\n## %s functions\n", group[0].Category)
		for _, d := range group {
			fmt.Fprintf(&b, "\n### %s\n\n", d.Name)
			fmt.Fprintf(&b, "`%s`\n\n", Signature(d))
			fmt.Fprintf(&b, "%s\n\n", d.Summary)
			fmt.Fprintf(&b, "Example: `%s` → `%s`\n", d.Example, d.Result)
		}
	}
	return b.Bytes()
}

// Signature is d's signature as the page writes it: `join(separator string, lists ...list(string)) → string`.
func Signature(d funcs.Doc) string {
	params := make([]string, 0, len(d.Params)+1)
	for _, p := range d.Params {
		params = append(params, p.Name+" "+p.Type)
	}
	if d.VarParam != nil {
		params = append(params, d.VarParam.Name+" ..."+d.VarParam.Type)
	}
	return fmt.Sprintf("%s(%s) → %s", d.Name, strings.Join(params, ", "), d.Returns)
}

// byCategory splits docs, which funcs.Docs returns grouped, into its runs of one category.
func byCategory(docs []funcs.Doc) [][]funcs.Doc {
	var groups [][]funcs.Doc
	for i, d := range docs {
		if i == 0 || d.Category != docs[i-1].Category {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], d)
	}
	return groups
}
