package fsctest

import (
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// SchemaSource finds the output schema of a component's or plugin's task, as installed.
type SchemaSource interface {
	// OutputSchema is the output schema of the task of the block that uses names in
	// workflow w (its file locates plugins), or nil when the block is not installed or the
	// task declares none.
	OutputSchema(w *lang.Workflow, uses lang.Uses) *schema.Schema
}
