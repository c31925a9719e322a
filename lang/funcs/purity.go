package funcs

// purity classifies functions: true for a pure one, whose result depends on its arguments
// alone, false for an impure one, whose result also depends on the clock, a random source, the
// filesystem or the environment.
//
// The engine reads it (Pure): a node whose expressions call only pure functions gives the same
// value when it is evaluated again with the same inputs, so its result need not be made durable
// before its successors start — after a crash it is computed again (docs/engine.md,
// "Durability"). A function this table calls pure and that is not would let a resumed run see
// another value than the one an effect already used.
//
// Every function of Table is listed (TestPurityCoversTable): adding a function means deciding
// its purity here. The impure entries are Terraform functions that Table leaves out because
// they would also give one answer in the plan and another in the run (doc.go); they are listed
// so that the decision is already written down if one is ever added.
var purity = map[string]bool{
	// Numeric.
	"abs": true, "ceil": true, "floor": true, "log": true, "max": true, "min": true,
	"parseint": true, "pow": true, "signum": true,

	// String.
	"chomp": true, "endswith": true, "format": true, "formatlist": true, "indent": true,
	"join": true, "lower": true, "regex": true, "regexall": true, "replace": true, "split": true,
	"startswith": true, "strcontains": true, "strrev": true, "substr": true, "title": true,
	"trim": true, "trimprefix": true, "trimspace": true, "trimsuffix": true, "upper": true,

	// Collection.
	"alltrue": true, "anytrue": true, "chunklist": true, "coalesce": true, "coalescelist": true,
	"compact": true, "concat": true, "contains": true, "distinct": true, "element": true,
	"flatten": true, "index": true, "keys": true, "length": true, "lookup": true,
	"matchkeys": true, "merge": true, "one": true, "range": true, "reverse": true,
	"setintersection": true, "setproduct": true, "setsubtract": true, "setunion": true,
	"slice": true, "sort": true, "sum": true, "transpose": true, "values": true, "zipmap": true,

	// Encoding.
	"base64decode": true, "base64encode": true, "base64gzip": true, "csvdecode": true,
	"jsondecode": true, "jsonencode": true, "urlencode": true,

	// Hash and crypto. uuidv5 is a hash of its arguments.
	"base64sha256": true, "base64sha512": true, "md5": true, "sha1": true, "sha256": true,
	"sha512": true, "uuidv5": true,

	// Date and time: computed from the times given, never from the clock.
	"formatdate": true, "timeadd": true, "timecmp": true,

	// Type conversion.
	"tobool": true, "tolist": true, "tomap": true, "tonumber": true, "toset": true,
	"tostring": true,

	// Error handling: as pure as the expressions they are given.
	"can": true, "try": true,

	// The identities every for expression's collection and elements pass through
	// (IterationsName, ElementName).
	IterationsName: true,
	ElementName:    true,

	// Impure, not in Table: the clock, a random source, the filesystem.
	"timestamp": false, "plantimestamp": false, "uuid": false, "bcrypt": false,
	"file": false, "fileexists": false, "fileset": false, "filebase64": false,
	"filemd5": false, "filesha256": false, "templatefile": false, "abspath": false,
}

// Pure reports whether the function named name is pure: its result depends on its arguments
// alone, so that an expression calling only pure functions gives the same value each time it
// is evaluated with the same inputs. A name purity does not list is not pure: what is not
// known to be recomputable must not be recomputed.
func Pure(name string) bool {
	return purity[name]
}
