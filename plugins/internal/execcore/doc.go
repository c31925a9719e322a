// Package execcore holds what the first-party exec tasks (plugins/shell and plugins/ssh) share:
// the output shape {exit_code, stdout, stderr, truncated}, capped capture of a stream, the
// cut that keeps the output's JSON under the engine's node output limit (fit.go), the
// exit-code policy (allow_exit_codes) and a small error classification.
//
// The plugins' core logic returns these plain values and errors and is tested without the SDK;
// only sdk.go (SDKError, Diagnostics) maps them onto plugin/sdk for the plugins' main.go.
package execcore
