package fsctest

import (
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// SchemaSource finds the schemas of a component's or plugin's task, as installed. It is
// called from several runs at once.
type SchemaSource interface {
	// TaskSchemas are the input and output schemas of the task that uses names in workflow w
	// (its file locates plugins); nil when the block is not installed or the task declares
	// none. A mocked task's input is checked against the input schema as a real run would,
	// and its mocked output against the output schema.
	TaskSchemas(w *lang.Workflow, uses lang.Uses) (input, output *schema.Schema)
}
