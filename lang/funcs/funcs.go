package funcs

import (
	"maps"
	"slices"
	"sync"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Table returns a new map of every function, by name, for
// hcl.EvalContext.Functions.
//
// The map is the caller's own: it may be extended or changed without
// affecting other callers. The function values in it are immutable and safe
// for concurrent use. The table itself is built once, so a call costs only
// the copy of the map.
func Table() map[string]function.Function {
	return maps.Clone(table())
}

// Shared returns the one table every caller shares, without a copy: for callers that only read
// it (hcl reads EvalContext.Functions), such as the engine, which evaluates thousands of runs a
// second. It must not be changed.
func Shared() map[string]function.Function {
	return table()
}

// Names returns the sorted names of the functions in Table a workflow can call (all but
// IterationsName), for documentation and "did you mean" hints. The slice is the caller's own.
func Names() []string {
	return slices.Clone(names())
}

// table is built once and never changed after; Table hands out copies so
// that a caller adding its own functions cannot affect anyone else.
var table = func() map[string]function.Function {
	t, _ := tables()
	return t
}

// tables builds the table once: the functions as workflows call them (adapt) and as go-cty and
// this package define them, whose parameter types the documentation shows.
var tables = sync.OnceValues(func() (adapted, defined map[string]function.Function) {
	t := map[string]function.Function{
		// Numeric.
		"abs":      stdlib.AbsoluteFunc,
		"ceil":     stdlib.CeilFunc,
		"floor":    stdlib.FloorFunc,
		"log":      stdlib.LogFunc,
		"max":      stdlib.MaxFunc,
		"min":      stdlib.MinFunc,
		"parseint": stdlib.ParseIntFunc,
		"pow":      stdlib.PowFunc,
		"signum":   stdlib.SignumFunc,

		// String.
		"chomp":       stdlib.ChompFunc,
		"endswith":    endsWithFunc,
		"format":      stdlib.FormatFunc,
		"formatlist":  stdlib.FormatListFunc,
		"indent":      stdlib.IndentFunc,
		"join":        stdlib.JoinFunc,
		"lower":       stdlib.LowerFunc,
		"regex":       stdlib.RegexFunc,
		"regexall":    stdlib.RegexAllFunc,
		"replace":     replaceFunc,
		"split":       stdlib.SplitFunc,
		"startswith":  startsWithFunc,
		"strcontains": strContainsFunc,
		"strrev":      stdlib.ReverseFunc,
		"substr":      stdlib.SubstrFunc,
		"title":       stdlib.TitleFunc,
		"trim":        stdlib.TrimFunc,
		"trimprefix":  stdlib.TrimPrefixFunc,
		"trimspace":   stdlib.TrimSpaceFunc,
		"trimsuffix":  stdlib.TrimSuffixFunc,
		"upper":       stdlib.UpperFunc,

		// Collection.
		"alltrue":         allTrueFunc,
		"anytrue":         anyTrueFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        coalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"distinct":        distinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"index":           indexFunc,
		"keys":            stdlib.KeysFunc,
		"length":          lengthFunc,
		"lookup":          lookupFunc,
		"matchkeys":       matchkeysFunc,
		"merge":           stdlib.MergeFunc,
		"one":             oneFunc,
		"range":           stdlib.RangeFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      limitedSetProduct,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"sum":             sumFunc,
		"transpose":       transposeFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,

		// Encoding.
		"base64decode": base64DecodeFunc,
		"base64encode": base64EncodeFunc,
		"base64gzip":   base64GzipFunc,
		"csvdecode":    stdlib.CSVDecodeFunc,
		"jsondecode":   stdlib.JSONDecodeFunc,
		"jsonencode":   stdlib.JSONEncodeFunc,
		"urlencode":    urlEncodeFunc,

		// Hash and crypto.
		"base64sha256": base64Sha256Func,
		"base64sha512": base64Sha512Func,
		"md5":          md5Func,
		"sha1":         sha1Func,
		"sha256":       sha256Func,
		"sha512":       sha512Func,
		"uuidv5":       uuidV5Func,

		// Date and time.
		"formatdate": stdlib.FormatDateFunc,
		"timeadd":    stdlib.TimeAddFunc,
		"timecmp":    timeCmpFunc,

		// Type conversion.
		"tobool":   makeToFunc(cty.Bool),
		"tolist":   makeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":    makeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber": makeToFunc(cty.Number),
		"toset":    makeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring": makeToFunc(cty.String),

		// Error handling.
		// hcl's versions have no descriptions to show in docs.
		"can": tryfunc.CanFunc.WithNewDescriptions("Returns whether the expression evaluates without an error.", []string{"The expression to try."}),
		"try": tryfunc.TryFunc.WithNewDescriptions("Returns the value of the first of its expressions that evaluates without an error.", nil),

		// Not callable from HCL (see IterationsName, ElementName), not in Names or Docs.
		IterationsName: iterationsFunc(nil),
		ElementName:    elementFunc(nil),
	}
	checks := map[string]func(args []cty.Value) error{
		"format":     checkFormat,
		"formatlist": checkFormatList,
		"concat":     checkConcat,
		"flatten":    checkFlatten,
		"indent":     checkIndent,
		"join":       checkJoin,
		"jsonencode": checkJSONEncode,
		"regex":      checkRegexCost,
		"regexall":   checkRegexAll,
		"replace":    checkReplace,
		"split":      checkSplit,
		"jsondecode": checkJSONDecode,
		"log":        checkLog,
		"merge":      checkMerge,
		"parseint":   checkNumberText(0),
		"pow":        checkPow,
		"tonumber":   checkNumberText(0),
		"zipmap":     checkZipmap,
	}
	// The functions that can return a number larger than their arguments were, or one
	// converted from a string (bounds.CheckNumber).
	boundResult := map[string]bool{
		"abs": true, "ceil": true, "floor": true, "max": true, "min": true,
		"log": true, "parseint": true, "pow": true, "sum": true, "tonumber": true,
	}
	// The functions whose errors quote their arguments: adapted, if only for hideSensitive
	// (TestErrorsNeverQuoteSensitiveArguments finds them).
	quotesArguments := map[string]bool{"formatdate": true, "jsondecode": true, "timeadd": true, "uuidv5": true}
	defined = maps.Clone(t)
	for name, f := range t {
		t[name] = adapt(f, checks[name], boundResult[name], quotesArguments[name])
	}
	return t, defined
})

var names = sync.OnceValue(func() []string {
	names := slices.Sorted(maps.Keys(table()))
	return slices.DeleteFunc(names, func(n string) bool { return n == IterationsName || n == ElementName })
})

// refineNotNull lets callers compare an unknown result with null and get a
// known answer, for functions that never return null.
func refineNotNull(b *cty.RefinementBuilder) *cty.RefinementBuilder {
	return b.NotNull()
}
