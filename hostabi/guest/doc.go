// Package guest is the Go SDK for Fuscia components: core Wasm modules that implement the host
// ABI of docs/reference/abi-v1.md (version 1). It hides the ABI completely: a component registers typed
// handlers and calls the host's key-value store, configuration, log, artifacts and HTTP as
// ordinary Go functions.
//
// # The model
//
// A component is built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o component.wasm .
//
// The host instantiates the module afresh for every task attempt and every trigger invocation,
// calls _initialize once (which runs the package init functions, but not main), then sends one
// request. Because the SDK exports fuscia_preinit, the host does the first part only once, when
// it loads the module, and starts every instance from a snapshot taken after it (a build with
// -tags fuscia_nopreinit opts out; docs/wasm.md, "Pre-initialization"). So:
//
//  1. Handlers are registered in init with [Task] and [Trigger]; main stays empty.
//  2. The SDK decodes the request, finds the handler by name and decodes the task's input into
//     the handler's typed input (strictly: an unknown field is an error).
//  3. The handler runs. It may call [KV], [Config], [Log], [HTTP] and [Artifacts].
//  4. Its [Result] or [TriggerResult], or its error, is encoded as the response.
//
// Nothing survives an attempt: package-level variables start from the values init gave them
// every time. Since init runs once for all attempts, it must not call the host (doing so turns
// the snapshot off), and what the runtime seeds there — math/rand's top-level generator, map
// iteration order — repeats from one attempt to the next; crypto/rand does not. State that
// must outlive an attempt goes to [KV] (a task's KV is scoped to its execution; a trigger's to
// the workflow's trigger, across invocations) or to a continue [Result]'s state.
//
// # Errors
//
// What a handler returns decides the error kind the engine sees:
//
//   - an error made by [Retryable], [Fatal] or [Validation] (possibly wrapped) has that kind;
//   - a [*SandboxError] from [HTTP] is fatal (the host fails the attempt with
//     sandbox_violation anyway);
//   - any other error is retryable: the workflow's retry block decides whether to try again;
//   - a panic is fatal, with the panic's message; its stack goes to the node's log;
//   - an input that does not decode into the handler's input type is a validation error, and
//     so is a request for a task or trigger the component does not have.
//
// [WithPartialOutput] attaches a partial output to any error.
//
// # Outside Wasm
//
// The host imports exist only under GOOS=wasip1. On other platforms the package compiles, so
// that a component's pure logic can be tested with go test, but calling the host (KV, Config,
// HTTP, Artifacts) panics; Log writes to standard error.
package guest
