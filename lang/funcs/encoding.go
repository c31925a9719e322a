package funcs

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"net/url"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// base64EncodeFunc is Terraform's base64encode, of the string's UTF-8 bytes.
var base64EncodeFunc = function.New(&function.Spec{
	Description: "Returns the standard Base64 encoding of the string's UTF-8 bytes.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.String),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(args[0].AsString()))), nil
	},
})

// base64DecodeFunc is Terraform's base64decode. Strings are Unicode, so
// decoded bytes that are not UTF-8 are an error rather than mangled.
var base64DecodeFunc = function.New(&function.Spec{
	Description: "Decodes a standard Base64 string whose content is UTF-8 text.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.String),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		// The input is deliberately left out of the errors: it may be a
		// secret, and marks are not visible here.
		b, err := base64.StdEncoding.DecodeString(args[0].AsString())
		if err != nil {
			return cty.NilVal, function.NewArgErrorf(0, "failed to decode base64 data: %s", err)
		}
		if !utf8.Valid(b) {
			return cty.NilVal, function.NewArgErrorf(0, "the result of decoding the provided string is not valid UTF-8")
		}
		return cty.StringVal(string(b)), nil
	},
})

// base64GzipFunc is Terraform's base64gzip, for passing compressed text to
// systems that take it Base64-encoded.
var base64GzipFunc = function.New(&function.Spec{
	Description: "Compresses the string with gzip and returns the result Base64-encoded.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.String),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		var buf bytes.Buffer
		// The gzip header carries no name or time, so the result depends on
		// the input alone.
		w := gzip.NewWriter(&buf)
		if _, err := w.Write([]byte(args[0].AsString())); err != nil {
			return cty.NilVal, err
		}
		if err := w.Close(); err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(base64.StdEncoding.EncodeToString(buf.Bytes())), nil
	},
})

// urlEncodeFunc is Terraform's urlencode, which escapes for a URL query
// (spaces become "+").
var urlEncodeFunc = function.New(&function.Spec{
	Description: "Escapes the string for use in a URL query.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.String),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(url.QueryEscape(args[0].AsString())), nil
	},
})
