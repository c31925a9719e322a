// Package redact keeps secret values out of everything a fuscia process writes: the journal,
// logs, events, API answers and spans.
//
// # Model
//
// A [Set] holds the secret values the process has read (secret blocks, sensitive variables,
// webhook HMAC keys). It only grows: a value read once stays a secret for the life of the
// process, so text produced late (a span exported seconds after its run ended, a log line of
// another run) is still scrubbed. Each change builds a new immutable [Scrubber]; readers load
// the current one with an atomic read and never wait for a writer.
//
// A Scrubber finds every occurrence of a secret in one of the forms it is likely to take on
// its way out (see forms.go):
//
//   - literal;
//   - JSON-escaped (with and without Go's HTML escaping);
//   - URL-encoded: text that contains a percent escape is also searched percent-decoded, so
//     query escaping, path escaping and other dialects (lower-case hex, JavaScript's
//     encodeURIComponent) are all found; a space written as "+" is a form of its own;
//   - base64, standard and URL alphabets, padded and unpadded, at each of the three byte
//     alignments: base64 works on 3-byte groups, so the secret inside a longer encoded text
//     (a Basic auth header is base64 of "user:" + secret) shows as one of three strings that
//     depend only on the secret's bytes. Those are searched; the one or two characters at the
//     ends that mix in neighbouring bytes are left, and reveal at most 4 bits of the secret;
//   - hexadecimal, lower and upper case.
//
// Each occurrence is replaced by [Marker]. Overlapping or adjacent occurrences (two secrets
// that share characters, a secret next to its encoded form) become one marker, so no part of
// either is left between two markers.
//
// Values shorter than [MinLength] bytes are not scrubbed in any form: "1" or "ab" would shred
// every message. Such values are still kept out of the journal by the sensitive mark the
// language puts on values derived from secrets.
//
// What a scrubber cannot see is text derived from a secret by any other computation (a hash,
// a signature, an encryption, base64 of base64). The engine covers those with its
// output rule (docs/security.md, "Secrets"), not here.
//
// # Cost
//
// Matching is one Aho-Corasick pass over the text with all forms of all secrets at once
// (matcher.go), plus a second pass over the percent-decoded text when the text holds a "%".
// Text without a secret is returned as it is, without allocating. Building a scrubber is
// linear in the total length of the forms (about 20 per secret), and happens only when a new
// secret value is added.
//
// # Exits
//
// The package offers the wrappers each exit needs: [Handler] for log/slog, [HTTP] for API
// answers, [Scrubber.JSON] for JSON documents (the journal's outputs), whose structure it
// keeps. Package telemetry wraps the span exporter with the same Set.
package redact
