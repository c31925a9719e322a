// Package sdk is the Go SDK for Fuscia plugin providers (docs/reference/plugin-protocol.md): separate executables that
// serve tasks and triggers to Fuscia over gRPC, started and supervised with
// github.com/hashicorp/go-plugin. It hides go-plugin and gRPC completely: a plugin is a plain Go
// main that describes itself in a [Plugin] and calls [Serve].
//
// # The model
//
// Fuscia starts one process per plugin per Fuscia process, lazily on first use, and sends it every
// call of every node that uses the plugin, concurrently. So, unlike a Wasm component:
//
//  1. main builds a [Plugin] with its tasks ([Task], [TaskWithResult]) and triggers ([Trigger]),
//     and calls [Serve], which never returns.
//  2. Fuscia asks for the schema (name, version, JSON Schemas) and caches it per binary digest.
//  3. At plan time it calls [Plugin.Configure] with the plugin block's config and the task's
//     [Validate] option with the node's input; values not known yet are null and listed in
//     [Unknowns].
//  4. At run time every task attempt is one or more calls of the handler (several with
//     [Continue]); the input is decoded strictly into the handler's input type first. The
//     handler may call the host through its [*Call]: logs, KV and artifacts.
//  5. The handler's [Result] or error is sent back; a panic is a fatal error and the process
//     lives on.
//
// Handlers run concurrently with each other, and the process outlives a call: package-level state
// is shared by every call and must be guarded. State that must survive the process (it is
// restarted after a crash, and is not the same process in the next run) goes to [Call.KV] or a
// continue [Result]'s state.
//
// # Errors
//
// What a handler returns decides the error kind the engine sees, exactly as in the Wasm guest SDK
// (hostabi/guest):
//
//   - an error made by [Retryable], [Fatal] or [Validation] (possibly wrapped) has that kind;
//   - any other error is retryable: the workflow's retry block decides whether to try again;
//   - a panic is fatal, with the panic's message; its stack goes to standard error;
//   - an input that does not decode into the handler's input type is a validation error, and
//     so is a call for a task or trigger the plugin does not have.
//
// [WithPartialOutput] attaches a partial output to any error.
//
// # Output streams
//
// Standard output belongs to go-plugin's handshake: never write to it. Standard error goes to
// Fuscia's log, prefixed with the plugin's name; [Call.Info] and friends go to the node's logs.
package sdk
