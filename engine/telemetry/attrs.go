package telemetry

import "go.opentelemetry.io/otel/attribute"

// Span attribute keys used by the engine on run and node-attempt spans.
const (
	// AttrWorkflow is the workflow name.
	AttrWorkflow attribute.Key = "fuscia.workflow"
	// AttrExecutionID is the execution (run) id.
	AttrExecutionID attribute.Key = "fuscia.execution_id"
	// AttrNode is the node address.
	AttrNode attribute.Key = "fuscia.node"
	// AttrKind is the node kind.
	AttrKind attribute.Key = "fuscia.kind"
	// AttrAttempt is the 1-based attempt number of a node.
	AttrAttempt attribute.Key = "fuscia.attempt"
	// AttrOutcome is the outcome of a run or node attempt.
	AttrOutcome attribute.Key = "fuscia.outcome"
)
