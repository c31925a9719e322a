package engine

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

// runSwitch selects the first case whose condition is true, else the default.
func (r *Run) runSwitch(ns *nodeState) {
	ns.status = journal.StatusRunning
	sw := ns.n.Switch
	selected := ""
	for _, c := range sw.Cases {
		ok, err := ns.s.condition(c.When, cty.NilVal)
		if err != nil {
			r.finishNode(ns, journal.StatusFailed, nullValue, &outcome.Error{Kind: err.Kind, Message: "case " + c.Key + ": " + err.Message}, "")
			return
		}
		if ok {
			selected = c.Key
			break
		}
	}
	if selected == "" && sw.Default != nil {
		selected = sw.Default.Key
	}
	if selected == "" {
		keys := make([]string, len(sw.Cases))
		for i, c := range sw.Cases {
			keys[i] = c.Key
		}
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal,
			"no case of %s matched (cases: %s) and it has no default", ns.n.Addr.Local(), strings.Join(keys, ", ")), "")
		return
	}
	ns.selected = selected
	r.finishNode(ns, journal.StatusSucceeded, cty.ObjectVal(map[string]cty.Value{"selected": cty.StringVal(selected)}), nil, "")
}
