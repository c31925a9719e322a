// Package execcore holds what the first-party exec tasks (plugins/shell and plugins/ssh) share:
// the output shape {exit_code, stdout, stderr, truncated}, capped capture of a stream, the
// exit-code policy (allow_exit_codes) and a small error classification.
//
// It deliberately does not import plugin/sdk: the plugins' core logic returns these plain values
// and errors, is tested without the SDK, and each plugin's main.go maps them onto sdk results
// in a few lines (KindOf tells it which SDK error to build).
package execcore
