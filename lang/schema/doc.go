// Package schema coerces and validates task inputs against JSON Schemas.
//
// Every task declares the shape of its input as a JSON Schema (draft 2020-12 unless the document
// says otherwise): builtins carry theirs in this package (see Builtin), components and plugins
// report theirs when they are installed. Fuscia evaluates a task's inputs with go-cty, so the
// values handed to this package are cty values, and checking them is two steps:
//
//  1. Coerce moves a value toward the types the schema asks for, the way HCL users expect:
//     the string "42" becomes the number 42 where the schema says "integer", "true" becomes a
//     boolean, a JSON string becomes an object or array, numbers and booleans become strings,
//     and tuples become lists. Coercion follows "properties", "additionalProperties",
//     "patternProperties", "items", "prefixItems", "$ref", "allOf", "anyOf" and "oneOf".
//  2. Validate checks the coerced value against the whole schema (required attributes, enums,
//     formats, bounds, ...).
//
// Check does both. Problems come back as values (Problem), sorted by path, never printed: the
// caller attaches them to the node and attribute at fault.
//
// # Plan time: unknown and sensitive values
//
// At plan time values that depend on other nodes' outputs are unknown (cty.UnknownVal), possibly
// deep inside otherwise known objects. Both steps check everything that is known and never complain
// about an unknown part: an unknown value is left as it is by Coerce, an unknown required attribute
// counts as present, and any failure located at or under an unknown value is dropped. The same
// functions serve at run time, when values are wholly known.
//
// Values derived from secrets carry cty marks. Coerce keeps every mark where it was, and no
// Problem ever quotes a marked value: messages then name only its type.
//
// # Formats
//
// Formats are asserted, not just annotations. Besides the standard ones this package registers:
//
//   - "duration": a Go duration string as accepted by time.ParseDuration ("500ms", "1h30m"), not
//     negative. This replaces the ISO-8601 "duration" of the JSON Schema specification, because
//     Fuscia writes durations the Go way everywhere (see ParseDuration).
//   - "size": a byte size, "512KiB", "10MiB", "1GiB", "10MB" or a bare number of bytes (see
//     ParseSize). Only strings are checked, so a schema may allow integers too.
//   - "http-url": an absolute http or https URL with a host.
package schema
