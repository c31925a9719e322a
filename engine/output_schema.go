package engine

import (
	"fmt"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/schema"
)

// checkOutput holds a component's or plugin's answer to the output_schema it declares, as
// Terraform refuses a provider's invalid object at its source: plan type-checks references to
// task.x.output against that schema, so an output that breaks it would otherwise fail far
// downstream, or not at all. An output of success or branch that does not match fails the
// attempt with a fatal error (not retried: the same code gives the same answer) naming what
// produced it and the JSON Pointer of the first violation. An absent output is checked as
// null. A continue's output is intermediate progress and is not checked; the final one is.
//
// what names the producer: `component acme/text@1.0.0 task "count"`. s is nil when the task
// declares no output_schema.
func checkOutput(res outcome.Result, s *schema.Schema, what string) outcome.Result {
	if s == nil || (res.Type != outcome.Success && res.Type != outcome.Branch) {
		return res
	}
	problems, err := s.ValidateJSON(res.Output)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s produced an output that is %v", what, err)
	}
	if len(problems) == 0 {
		return res
	}
	p := problems[0]
	at := p.Pointer
	if at == "" {
		at = "the output itself"
	}
	more := ""
	if n := len(problems) - 1; n == 1 {
		more = " (and 1 more problem)"
	} else if n > 1 {
		more = fmt.Sprintf(" (and %d more problems)", n)
	}
	return outcome.Fail(outcome.Fatal, "%s produced an output that does not match its output_schema: at %s: %s%s", what, at, p.Message, more)
}
