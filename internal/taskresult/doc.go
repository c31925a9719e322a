// Package taskresult is the result model of the two guest-side SDKs, hostabi/guest (Wasm
// components) and plugin/sdk (plugins): what a task or trigger handler returns, the error kinds
// it may fail with, and how an error is classified. Both SDKs re-export its types with type
// aliases and its constructors with one-line wrappers, so that the two cannot disagree on what
// a handler's answer means.
//
// # The model
//
//  1. A task handler returns a [Result] ([Success], [Skip], [Branch], [Continue]) or an error;
//     a trigger handler a [TriggerResult] ([Completed], [Pending]) or an error.
//  2. An error's kind is that of the first [*Error] in its chain ([Retryable], [Fatal],
//     [Validation] make one); an error without one gets the kind its SDK chooses (retryable,
//     except the Wasm SDK's sandbox errors, which are fatal). [WithPartialOutput] attaches a
//     partial output to any error.
//  3. [Encode], [EncodeTrigger] and [Classify] turn these into a [Response]: the payloads
//     encoded as JSON, numbers clamped, every failure to encode a fatal error. Each SDK then
//     copies the Response onto its own wire: the JSON response of docs/reference/abi-v1.md, or
//     the gRPC messages of docs/reference/plugin-protocol.md.
//
// # Dependencies
//
// The package imports the standard library only, and nothing reflect-heavy beyond
// encoding/json, so that hostabi/guest stays buildable for GOOS=wasip1 and with TinyGo. A test
// fails if it gains any other import.
//
// The host side of the same answers is internal/outcome, which parses and judges what a guest
// sends; this package only produces it.
package taskresult
