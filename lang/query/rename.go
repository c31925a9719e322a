package query

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang/addrs"
)

// renameable says what can be renamed: the names that only this file's expressions read.
// Outputs and triggers are named from outside the file (calling workflows, `apply -trigger`,
// test files), so an edit here could not follow them.
var renameable = map[space]bool{
	spaceNode: true, spaceVariable: true, spaceSecret: true, spaceComponent: true, spacePlugin: true,
}

// renameTarget returns the declaration to rename at off and the range of the name there, or
// an error that says why there is none.
func (a *analysis) renameTarget(off int) (*decl, hcl.Range, error) {
	if a.test {
		return nil, hcl.Range{}, fmt.Errorf("rename works in workflow files (.fsc.hcl), not in test files")
	}
	if a.body == nil {
		return nil, hcl.Range{}, fmt.Errorf("the file could not be read as HCL")
	}
	if a.diags.HasErrors() {
		for _, d := range a.diags {
			if d.Severity == hcl.DiagError {
				where := ""
				if d.Subject != nil {
					where = fmt.Sprintf(" (line %d: %s)", d.Subject.Start.Line, d.Summary)
				}
				return nil, hcl.Range{}, fmt.Errorf("the file has syntax errors%s; fix them before renaming, so that no reference is missed", where)
			}
		}
	}
	var t *decl
	var rng hcl.Range
	if r := a.refAt(off, false); r != nil {
		if r.target == nil {
			return nil, hcl.Range{}, fmt.Errorf("%s.%s is not declared in this file", r.tr.RootName(), r.name)
		}
		t, rng = r.target, r.nameRange
	} else if d := a.declAt(off); d != nil {
		t, rng = d, d.nameRange
	}
	if t == nil {
		return nil, hcl.Range{}, fmt.Errorf("nothing to rename here: place the cursor on the name of a node, variable, secret, component or plugin, at its block's label or in a reference to it")
	}
	if !renameable[t.space] {
		return nil, hcl.Range{}, fmt.Errorf("%s names are used outside this file (by calling workflows, the CLI and test files); rename %q by hand", t.space, t.name)
	}
	if a.byName[t.space][t.name] != t {
		return nil, hcl.Range{}, fmt.Errorf("%q is declared twice; remove the duplicate before renaming", t.name)
	}
	return t, rng, nil
}

// PrepareRename reports whether the thing at offset can be renamed, and the range of its name
// there.
func PrepareRename(d Doc, offset int) (hcl.Range, bool) {
	_, rng, err := d.analyse().renameTarget(offset)
	return rng, err == nil
}

// Rename returns the edits that rename the thing at offset to newName: the declaring label and
// every reference's name (task.x, task.x.output…, after = [task.x], the attribute a join's keyed
// output has for it), in file order. Strings and comments that merely contain the name are
// left alone. An error says why it cannot: the file has syntax errors, nothing renameable is
// at offset, newName is not a valid name, or the name is taken (node names are shared by every
// node kind).
func Rename(d Doc, offset int, newName string) ([]Edit, error) {
	a := d.analyse()
	t, _, err := a.renameTarget(offset)
	if err != nil {
		return nil, err
	}
	if newName == t.name {
		return nil, nil
	}
	if !addrs.ValidName(newName) {
		return nil, fmt.Errorf("%q is not a valid name: a name starts with a lowercase letter a-z, goes on with a-z, 0-9, \"_\" and \"-\", and is at most %d characters long", newName, addrs.MaxNameLength)
	}
	if other := a.byName[t.space][newName]; other != nil {
		what := string(t.space)
		if t.space == spaceNode {
			what = "node (" + other.local() + "; node names are shared by every node kind)"
		}
		return nil, fmt.Errorf("the name %q is taken: a %s is declared at line %d", newName, what, other.nameRange.Start.Line)
	}
	edits := []Edit{{Range: t.nameRange, NewText: newName}}
	for _, r := range a.occurrences(t) {
		edits = append(edits, Edit{Range: r, NewText: newName})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Range.Start.Byte < edits[j].Range.Start.Byte })
	return edits, nil
}
