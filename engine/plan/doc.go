// Package plan turns a checked workflow into a plan: the nodes in stage order with what each
// dispatches to, its effective timeout and retry, its capabilities and its inputs as far as they
// are known before the run, plus the resolved components and plugins with their digests.
//
// `fuscia plan` prints it (text or JSON), writes the lock file, and can save it as a plan file
// (a zip, see planfile.go) that `fuscia apply` runs exactly. A plan file binds its members with
// a digest (integrity.go): apply refuses one that was edited, and one whose plan, built again,
// is not the saved one.
package plan
