// Package funcs provides the functions that workflow expressions can call.
//
// The functions have Terraform's names and behaviour, so that anyone who
// knows Terraform's language can read and write Fuscia workflows without
// learning a second dialect. Where go-cty's function/stdlib already behaves
// like Terraform, its function is used as it is; the others (length,
// coalesce, lookup, replace, index, sum, the hash and base64 functions and a
// few more) are implemented here after Terraform's.
//
// Only pure functions are provided: each result depends on the arguments
// alone. A workflow is planned before it runs and its expressions are
// evaluated again when it runs, so an impure function such as Terraform's
// timestamp, uuid, bcrypt or file would give one answer in the plan and
// another in the run. For the same reason there is nothing that reads the
// filesystem or the environment.
//
// Unknown arguments give unknown results rather than errors, so that a plan
// can be made before every value is known. Marked values (Fuscia marks
// sensitive values) keep their marks: a function's result carries the marks
// of its arguments. The functions here that handle marks themselves (length,
// lookup and the to* conversions) do so to mark their result no more and no
// less than Terraform does, and keep marked values out of error messages.
//
// Two faults of go-cty are repaired on the way into the table (see adapt):
// its function machinery drops the marks of an unknown argument to a
// function that handles marks itself, which would let a secret that is not
// yet known lose its sensitivity; and a few stdlib functions panic on some
// inputs (a negative indent, the logarithm of a negative number), which
// would show the user a stack trace instead of an error.
package funcs
