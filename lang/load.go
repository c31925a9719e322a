package lang

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Options control Load.
type Options struct {
	// Vars are the sources of variable values.
	Vars VarInputs
	// Planning requires every variable to have a value. Without it (validate, graph), a variable
	// without a value or default is unknown and whatever depends on it is checked at plan.
	Planning bool
}

// Load reads, decodes, links and checks the workflow in filename, and every workflow it calls.
// The Workflow is returned whenever the file could be parsed, even with errors, so that callers
// can show what they can; it is safe to use only when the diagnostics have no errors.
func (p *Parser) Load(filename string, opts Options) (*Workflow, hcl.Diagnostics) {
	w, diags := p.load(filename, opts, nil)
	sortDiags(diags)
	return w, diags
}

// sortDiags orders diagnostics by file (in the order files were first mentioned) and position,
// so users read them top to bottom; ones without a position (about flags) come first.
func sortDiags(diags hcl.Diagnostics) {
	fileOrder := map[string]int{}
	for _, d := range diags {
		if d.Subject != nil {
			if _, ok := fileOrder[d.Subject.Filename]; !ok {
				fileOrder[d.Subject.Filename] = len(fileOrder)
			}
		}
	}
	key := func(d *hcl.Diagnostic) (int, int) {
		if d.Subject == nil {
			return -1, 0
		}
		return fileOrder[d.Subject.Filename], d.Subject.Start.Byte
	}
	sort.SliceStable(diags, func(i, j int) bool {
		fi, bi := key(diags[i])
		fj, bj := key(diags[j])
		return fi < fj || fi == fj && bi < bj
	})
}

func (p *Parser) load(filename string, opts Options, callers []string) (*Workflow, hcl.Diagnostics) {
	f, diags := p.ParseFile(filename)
	if f == nil || diags.HasErrors() {
		return nil, diags
	}
	// Every step runs even when an earlier one found errors, so that one run reports every
	// independent error; faults tells each step what the earlier ones reported, so that it
	// skips that instead of reporting it again in other words.
	faults := newFaults()
	w, ddiags := decodeFile(filename, f.Body, faults, func(decls []*Variable) (map[string]cty.Value, hcl.Diagnostics) {
		return resolveVars(p, decls, opts.Vars, opts.Planning)
	})
	diags = append(diags, ddiags...)
	w.forFree, w.iterating = p.iterating[filename] == nil, p.iterating[filename]
	diags = append(diags, link(w, faults)...)
	abs, _ := filepath.Abs(filename)
	for _, n := range w.Nodes {
		if n.Call != nil && n.Call.Workflow != "" {
			diags = append(diags, p.loadCall(w, n, append(callers, abs))...)
		}
	}
	diags = append(diags, check(w, faults)...)
	return w, diags
}

// childLoad is a called workflow as loadCall loaded it; diags are its errors until a call
// reported them.
type childLoad struct {
	w     *Workflow
	diags hcl.Diagnostics
}

// loadCall loads the workflow a call node runs. Its variables are set by the call's inputs at run
// time, so the child is checked like `validate` checks a file: unset variables are unknown.
func (p *Parser) loadCall(w *Workflow, n *Node, callers []string) hcl.Diagnostics {
	c := n.Call
	c.Path = c.Workflow
	if !filepath.IsAbs(c.Path) {
		c.Path = filepath.Join(filepath.Dir(w.Filename), c.Workflow)
	}
	abs, _ := filepath.Abs(c.Path)
	if p.called == nil {
		p.called = make(map[string]bool)
	}
	p.called[abs] = true
	for i, caller := range callers {
		if caller == abs {
			chain := append(append([]string(nil), callers[i:]...), abs)
			for j := range chain {
				chain[j] = filepath.Base(chain[j])
			}
			return hcl.Diagnostics{errorf(c.WorkflowRange, "Cycle between workflow files",
				"Call %q would run a workflow that is already running it: %s. Sub-workflows cannot call themselves, directly or through others.",
				n.Addr.Name, strings.Join(chain, " -> "))}
		}
	}
	if _, saved := p.Sources[filepath.Clean(c.Path)]; saved {
		// read from the saved sources below
	} else if info, err := os.Stat(c.Path); err != nil || !info.Mode().IsRegular() {
		why := "it is not a regular file"
		if err != nil {
			why = describeFSError(err)
		}
		return hcl.Diagnostics{errorf(c.WorkflowRange, "Cannot load called workflow",
			"Call %q runs %s, which cannot be read: %s. The path is relative to this file.", n.Addr.Name, c.Path, why)}
	}
	// A file called from many places is loaded and checked once: the child is the same
	// wherever it is called from (its variables are unknown), and ten calls a level, five levels
	// deep, were a hundred thousand loads (27 s at four levels). Its errors are reported once.
	loaded, ok := p.children[abs]
	if !ok {
		loaded = &childLoad{}
		loaded.w, loaded.diags = p.load(c.Path, Options{}, callers)
		if p.children == nil {
			p.children = make(map[string]*childLoad)
		}
		p.children[abs] = loaded
	}
	child, diags := loaded.w, loaded.diags
	loaded.diags = nil
	if child == nil {
		return append(hcl.Diagnostics{errorf(c.WorkflowRange, "Cannot load called workflow",
			"Call %q runs %q, which could not be loaded; see the errors below.", n.Addr.Name, c.Workflow)}, diags...)
	}
	w.Calls[n.Addr.Name] = child
	set := map[string]bool{}
	obj, isObject := c.Inputs.(*hclsyntax.ObjectConsExpr)
	inputsRange := n.DeclRange
	if c.Inputs == nil {
		// No inputs at all: every child variable without a default is missing.
		isObject, obj = true, &hclsyntax.ObjectConsExpr{SrcRange: n.DeclRange}
	} else {
		inputsRange = c.Inputs.Range()
	}
	if isObject {
		for _, item := range obj.Items {
			key, kdiags := item.KeyExpr.Value(nil)
			if kdiags.HasErrors() || !key.IsKnown() || key.Type().FriendlyName() != "string" {
				continue
			}
			name := key.AsString()
			set[name] = true
			if child.Variable(name) == nil {
				diags = append(diags, errorf(item.KeyExpr.Range(), "Unknown input for called workflow",
					"%s declares no variable %q.%s", c.Workflow, name, declaredVars(child.Variables)))
			}
		}
		for _, v := range child.Variables {
			if !set[v.Name] && !v.HasDefault {
				diags = append(diags, errorf(inputsRange, "Missing input for called workflow",
					"%s requires variable %q (it has no default); set it in this call's inputs.", c.Workflow, v.Name))
			}
		}
	}
	return diags
}
