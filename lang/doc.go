// Package lang turns `.fsc.hcl` workflow files into checked, immutable workflows.
//
// The pipeline has three steps, each returning hcl.Diagnostics rather than printing:
//
//  1. Parse reads a file (enforcing the size and nesting limits) and parses HCL native syntax.
//  2. Decode maps every block of docs/reference/language.md onto the types in workflow.go, strictly: an unknown
//     attribute or block, a missing required one, a bad name or a bad literal is an error with
//     the source range at fault.
//  3. Link resolves references into edges (data, ordering and branch edges), checks scoping
//     (loop bodies, each, var, secret, trigger), finds cycles and computes stages.
//
// Check then evaluates what is known (variables, literals) with every node output unknown, and
// validates task inputs against their JSON Schemas. Load runs all of it; `fuscia validate`,
// `graph` and `plan` are thin layers on top.
//
// # Every error, once
//
// After a syntax error nothing else runs, but otherwise every step runs even when an earlier one
// found errors, so that one Load reports every independent error. What a step reported is
// recorded (faults.go) and skipped by the later ones: a node with a bad reference is not
// evaluated, a reference to a rejected node name is not "undeclared" too, a plugin or component
// block with a bad source or version is marked [Plugin.Invalid] or [Component.Invalid] for the
// checks after Load. Those (engine/plan) add their diagnostics with [AppendLater], which drops
// the ones at a place an earlier error already covers.
//
// A Workflow never changes after Load returns, so the engine may share it between goroutines.
package lang
