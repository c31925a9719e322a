package funcs

import (
	"regexp"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// replaceFunc is Terraform's replace: a search string wrapped in slashes is
// a regular expression, whose groups the replacement can name as $1 or
// ${name}. stdlib's replace only does plain substrings.
var replaceFunc = function.New(&function.Spec{
	Description: "Replaces every occurrence of a substring, or of a regular expression written between slashes, with the replacement.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
		{Name: "substr", Type: cty.String},
		{Name: "replace", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.String),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		str, substr, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
		if len(substr) > 1 && substr[0] == '/' && substr[len(substr)-1] == '/' {
			re, err := regexp.Compile(substr[1 : len(substr)-1])
			if err != nil {
				return cty.NilVal, function.NewArgError(1, err)
			}
			return cty.StringVal(re.ReplaceAllString(str, repl)), nil
		}
		return cty.StringVal(strings.ReplaceAll(str, substr, repl)), nil
	},
})

// startsWithFunc is Terraform's startswith.
var startsWithFunc = function.New(&function.Spec{
	Description: "Returns whether the string starts with the prefix.",
	Params: []function.Parameter{
		// An unknown string may still have a known prefix (from a template
		// such as "https://${host}"), which can decide the answer.
		{Name: "str", Type: cty.String, AllowUnknown: true},
		{Name: "prefix", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.Bool),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		prefix := args[1].AsString()
		if !args[0].IsKnown() {
			if prefix == "" {
				return cty.True, nil
			}
			if known := args[0].Range().StringPrefix(); known != "" {
				if strings.HasPrefix(known, prefix) {
					return cty.True, nil
				}
				if len(known) >= len(prefix) {
					return cty.False, nil
				}
			}
			return cty.UnknownVal(cty.Bool), nil
		}
		return cty.BoolVal(strings.HasPrefix(args[0].AsString(), prefix)), nil
	},
})

// endsWithFunc is Terraform's endswith.
var endsWithFunc = function.New(&function.Spec{
	Description: "Returns whether the string ends with the suffix.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
		{Name: "suffix", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.Bool),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.BoolVal(strings.HasSuffix(args[0].AsString(), args[1].AsString())), nil
	},
})

// strContainsFunc is Terraform's strcontains.
var strContainsFunc = function.New(&function.Spec{
	Description: "Returns whether the string contains the substring.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
		{Name: "substr", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.Bool),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.BoolVal(strings.Contains(args[0].AsString(), args[1].AsString())), nil
	},
})
