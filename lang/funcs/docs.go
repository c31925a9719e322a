package funcs

import (
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
)

// docs/reference/functions.md is generated from the table below; after changing it, run
//
//	go generate ./lang/funcs
//
// TestReferenceUpToDate fails while the committed page differs from what the generator writes,
// and TestDocExamples evaluates every example with the real function table.
//
//go:generate go run ./internal/gendoc -o ../../docs/reference/functions.md

// Doc documents one function of Table, for docs/reference/functions.md.
type Doc struct {
	Name     string
	Category string // "Numeric", "String", … in the order of the reference
	Summary  string // one sentence
	// Params and VarParam are read from the function itself, so they cannot drift.
	Params   []Param
	VarParam *Param // nil when the function takes a fixed number of arguments
	// Returns is the result's type in Terraform's type syntax, where list(T) stands for any
	// sequence (list or tuple) of T and map(T) for a map or an object whose values are T;
	// alternatives are joined with " or ".
	Returns string
	Example string // an expression that calls the function
	Result  string // what Example evaluates to, as an HCL value
}

// Param is one parameter of a function.
type Param struct {
	Name string
	// Type is in Terraform's type syntax ("string", "list(any)"), or "expression" for the
	// parameters of try and can, which receive their expressions unevaluated.
	Type string
}

// Docs returns the documentation of every function in Table, grouped by category in the
// order of the reference and sorted by name within a category. The slice is the caller's own.
func Docs() []Doc {
	_, t := tables()
	var out []Doc
	for _, g := range docGroups {
		for _, d := range g.docs {
			f, ok := t[d.name]
			if !ok {
				continue // TestDocsCoverEveryFunction reports it
			}
			doc := Doc{Name: d.name, Category: g.category, Summary: d.summary, Returns: d.returns, Example: d.example, Result: d.result}
			for _, p := range f.Params() {
				doc.Params = append(doc.Params, Param{Name: p.Name, Type: paramType(p.Type)})
			}
			if vp := f.VarParam(); vp != nil {
				doc.VarParam = &Param{Name: vp.Name, Type: paramType(vp.Type)}
			}
			out = append(out, doc)
		}
	}
	return out
}

func paramType(ty cty.Type) string {
	if ty.IsCapsuleType() {
		return "expression"
	}
	return typeexpr.TypeString(ty)
}

// doc is one row of the table: what the reference says about a function besides its signature.
type doc struct {
	name    string
	summary string
	returns string
	example string
	result  string
}

type docGroup struct {
	category string
	docs     []doc
}

// docGroups documents every function, in the order of the reference. Examples use literals
// only, so that they evaluate anywhere; results are written as HCL values.
var docGroups = []docGroup{
	{"Numeric", []doc{
		{name: "abs", returns: "number",
			summary: "Returns the absolute value of a number.",
			example: `abs(-3.5)`, result: `3.5`},
		{name: "ceil", returns: "number",
			summary: "Rounds a number up to the nearest whole number.",
			example: `ceil(1.2)`, result: `2`},
		{name: "floor", returns: "number",
			summary: "Rounds a number down to the nearest whole number.",
			example: `floor(1.8)`, result: `1`},
		{name: "log", returns: "number",
			summary: "Returns the logarithm of a number in the given base.",
			example: `log(8, 2)`, result: `3`},
		{name: "max", returns: "number",
			summary: "Returns the greatest of its arguments; expand a list with `...`, as in `max(list...)`.",
			example: `max(4, 12, 7)`, result: `12`},
		{name: "min", returns: "number",
			summary: "Returns the smallest of its arguments; expand a list with `...`, as in `min(list...)`.",
			example: `min(4, 12, 7)`, result: `4`},
		{name: "parseint", returns: "number",
			summary: "Parses a string as a whole number written in the given base, from 2 to 62.",
			example: `parseint("ff", 16)`, result: `255`},
		{name: "pow", returns: "number",
			summary: "Raises a number to a power.",
			example: `pow(2, 10)`, result: `1024`},
		{name: "signum", returns: "number",
			summary: "Returns -1, 0 or 1 for a negative number, zero or a positive number.",
			example: `signum(-7)`, result: `-1`},
	}},
	{"String", []doc{
		{name: "chomp", returns: "string",
			summary: "Removes the newline characters at the end of a string.",
			example: `chomp("hello\n")`, result: `"hello"`},
		{name: "endswith", returns: "bool",
			summary: "Returns whether a string ends with the suffix.",
			example: `endswith("report.csv", ".csv")`, result: `true`},
		{name: "format", returns: "string",
			summary: "Formats its arguments with printf-style verbs such as `%s`, `%d`, `%q`, `%v` and `%.2f`.",
			example: `format("%s has %d items", "cart", 3)`, result: `"cart has 3 items"`},
		{name: "formatlist", returns: "list(string)",
			summary: "Formats like `format` once per element: list arguments are taken element by element, the others repeat.",
			example: `formatlist("id-%s", ["a", "b"])`, result: `["id-a", "id-b"]`},
		{name: "indent", returns: "string",
			summary: "Adds the number of spaces after every newline of a string, so every line but the first is indented.",
			example: `indent(2, "a\nb")`, result: `"a\n  b"`},
		{name: "join", returns: "string",
			summary: "Joins the elements of one or more lists of strings with a separator.",
			example: `join(", ", ["a", "b", "c"])`, result: `"a, b, c"`},
		{name: "lower", returns: "string",
			summary: "Converts the letters of a string to lower case.",
			example: `lower("HeLLo")`, result: `"hello"`},
		{name: "regex", returns: "string or list(string) or map(string)",
			summary: "Returns the first match of a regular expression (RE2 syntax): the matched text, or its capture groups as a list, or as an object when they are named; it fails when nothing matches.",
			example: `regex("(?P<user>[a-z]+)@(?P<host>[a-z.]+)", "ada@example.com")`, result: `{ host = "example.com", user = "ada" }`},
		{name: "regexall", returns: "list(any)",
			summary: "Returns every match of a regular expression, each in the form `regex` gives it; an empty list when nothing matches.",
			example: `regexall("[0-9]+", "1 and 22")`, result: `["1", "22"]`},
		{name: "replace", returns: "string",
			summary: "Replaces every occurrence of a substring, or of a regular expression written between slashes, whose groups the replacement can use as `$1` or `${name}`.",
			example: `replace("order-17", "/[0-9]+/", "N")`, result: `"order-N"`},
		{name: "split", returns: "list(string)",
			summary: "Splits a string at every occurrence of a separator.",
			example: `split(",", "a,b,c")`, result: `["a", "b", "c"]`},
		{name: "startswith", returns: "bool",
			summary: "Returns whether a string starts with the prefix.",
			example: `startswith("https://example.com", "https://")`, result: `true`},
		{name: "strcontains", returns: "bool",
			summary: "Returns whether a string contains the substring.",
			example: `strcontains("hello world", "lo w")`, result: `true`},
		{name: "strrev", returns: "string",
			summary: "Reverses the characters of a string.",
			example: `strrev("abc")`, result: `"cba"`},
		{name: "substr", returns: "string",
			summary: "Returns `length` characters of a string from `offset`; a negative offset counts from the end, and a length of -1 means up to the end.",
			example: `substr("hello world", 6, 5)`, result: `"world"`},
		{name: "title", returns: "string",
			summary: "Capitalizes the first letter of every word.",
			example: `title("hello world")`, result: `"Hello World"`},
		{name: "trim", returns: "string",
			summary: "Removes the given characters from both ends of a string.",
			example: `trim("?!hello?!", "!?")`, result: `"hello"`},
		{name: "trimprefix", returns: "string",
			summary: "Removes a prefix from a string, if it starts with it.",
			example: `trimprefix("helloworld", "hello")`, result: `"world"`},
		{name: "trimspace", returns: "string",
			summary: "Removes white space from both ends of a string.",
			example: `trimspace("  hello\n")`, result: `"hello"`},
		{name: "trimsuffix", returns: "string",
			summary: "Removes a suffix from a string, if it ends with it.",
			example: `trimsuffix("report.csv", ".csv")`, result: `"report"`},
		{name: "upper", returns: "string",
			summary: "Converts the letters of a string to upper case.",
			example: `upper("hello")`, result: `"HELLO"`},
	}},
	{"Collection", []doc{
		{name: "alltrue", returns: "bool",
			summary: "Returns whether every element of a list is true; true for an empty list.",
			example: `alltrue([true, true])`, result: `true`},
		{name: "anytrue", returns: "bool",
			summary: "Returns whether at least one element of a list is true.",
			example: `anytrue([false, true])`, result: `true`},
		{name: "chunklist", returns: "list(list(any))",
			summary: "Splits a list into lists of at most the given size.",
			example: `chunklist(["a", "b", "c"], 2)`, result: `[["a", "b"], ["c"]]`},
		{name: "coalesce", returns: "any",
			summary: "Returns the first argument that is neither null nor an empty string.",
			example: `coalesce("", null, "fallback")`, result: `"fallback"`},
		{name: "coalescelist", returns: "list(any)",
			summary: "Returns the first of its list arguments that is not empty.",
			example: `coalescelist([], ["a", "b"])`, result: `["a", "b"]`},
		{name: "compact", returns: "list(string)",
			summary: "Removes the empty strings and nulls from a list of strings.",
			example: `compact(["a", "", "b"])`, result: `["a", "b"]`},
		{name: "concat", returns: "list(any)",
			summary: "Joins lists into one list.",
			example: `concat(["a"], ["b", "c"])`, result: `["a", "b", "c"]`},
		{name: "contains", returns: "bool",
			summary: "Returns whether a list, tuple or set has an element equal to the value.",
			example: `contains(["a", "b"], "b")`, result: `true`},
		{name: "distinct", returns: "list(any)",
			summary: "Removes the repeated elements of a list, keeping the first of each.",
			example: `distinct(["a", "b", "a"])`, result: `["a", "b"]`},
		{name: "element", returns: "any",
			summary: "Returns the element at an index of a list; an index past the end wraps around, and a negative one counts from the end (-1 is the last).",
			example: `element(["a", "b", "c"], 4)`, result: `"b"`},
		{name: "flatten", returns: "list(any)",
			summary: "Replaces the lists nested in a list by their elements, at every depth.",
			example: `flatten([["a"], ["b", ["c"]]])`, result: `["a", "b", "c"]`},
		{name: "index", returns: "number",
			summary: "Returns the position of the first element of a list equal to the value; it fails when there is none.",
			example: `index(["a", "b", "c"], "b")`, result: `1`},
		{name: "keys", returns: "list(string)",
			summary: "Returns the keys of a map, or the attribute names of an object, sorted.",
			example: `keys({ b = 2, a = 1 })`, result: `["a", "b"]`},
		{name: "length", returns: "number",
			summary: "Returns the number of elements of a list, set, tuple, map or object, or of characters of a string.",
			example: `length("héllo")`, result: `5`},
		{name: "lookup", returns: "any",
			summary: "Returns the value at a key of a map or object, or the default when the key is missing (an error without a default).",
			example: `lookup({ a = "x" }, "b", "none")`, result: `"none"`},
		{name: "matchkeys", returns: "list(any)",
			summary: "Returns the elements of a list whose element at the same position in `keys` is in `searchset`.",
			example: `matchkeys(["i-1", "i-2", "i-3"], ["us", "eu", "us"], ["us"])`, result: `["i-1", "i-3"]`},
		{name: "merge", returns: "map(any)",
			summary: "Merges maps or objects into one; a key given again replaces the earlier value.",
			example: `merge({ a = 1, b = 2 }, { b = 3 })`, result: `{ a = 1, b = 3 }`},
		{name: "one", returns: "any",
			summary: "Returns the only element of a list of zero or one element, or null when it is empty.",
			example: `one(["only"])`, result: `"only"`},
		{name: "range", returns: "list(number)",
			summary: "Returns a list of numbers: `range(end)`, `range(start, end)` or `range(start, end, step)`, the end excluded.",
			example: `range(1, 10, 3)`, result: `[1, 4, 7]`},
		{name: "reverse", returns: "list(any)",
			summary: "Reverses the order of a list.",
			example: `reverse([1, 2, 3])`, result: `[3, 2, 1]`},
		{name: "setintersection", returns: "set(any)",
			summary: "Returns the set of the elements that every argument has.",
			example: `setintersection(["a", "b"], ["b", "c"])`, result: `["b"]`},
		{name: "setproduct", returns: "list(any) or set(any)",
			summary: "Returns every combination of one element of each argument, at most 100,000 of them; a list when an argument is a list, else a set.",
			example: `setproduct(["a", "b"], [1, 2])`, result: `[["a", 1], ["a", 2], ["b", 1], ["b", 2]]`},
		{name: "setsubtract", returns: "set(any)",
			summary: "Returns the set of the elements of the first argument that the second does not have.",
			example: `setsubtract(["a", "b", "c"], ["b"])`, result: `["a", "c"]`},
		{name: "setunion", returns: "set(any)",
			summary: "Returns the set of the elements that any argument has.",
			example: `setunion(["a"], ["b", "a"])`, result: `["a", "b"]`},
		{name: "slice", returns: "list(any)",
			summary: "Returns the elements of a list from `start_index` up to, not including, `end_index`.",
			example: `slice(["a", "b", "c", "d"], 1, 3)`, result: `["b", "c"]`},
		{name: "sort", returns: "list(string)",
			summary: "Sorts a list of strings in lexicographic order.",
			example: `sort(["c", "a", "b"])`, result: `["a", "b", "c"]`},
		{name: "sum", returns: "number",
			summary: "Adds the numbers of a list, set or tuple; it fails on an empty one.",
			example: `sum([1, 2, 3.5])`, result: `6.5`},
		{name: "transpose", returns: "map(list(string))",
			summary: "Turns a map of lists of strings inside out: each string becomes a key listing the keys it was under.",
			example: `transpose({ a = ["x", "y"], b = ["x"] })`, result: `{ x = ["a", "b"], y = ["a"] }`},
		{name: "values", returns: "list(any)",
			summary: "Returns the values of a map or object, in the order of their keys.",
			example: `values({ b = 2, a = 1 })`, result: `[1, 2]`},
		{name: "zipmap", returns: "map(any)",
			summary: "Builds a map from a list of keys and a list of values of the same length.",
			example: `zipmap(["a", "b"], [1, 2])`, result: `{ a = 1, b = 2 }`},
	}},
	{"Encoding", []doc{
		{name: "base64decode", returns: "string",
			summary: "Decodes standard Base64 whose content is UTF-8 text.",
			example: `base64decode("aGVsbG8=")`, result: `"hello"`},
		{name: "base64encode", returns: "string",
			summary: "Encodes the UTF-8 bytes of a string in standard Base64.",
			example: `base64encode("hello")`, result: `"aGVsbG8="`},
		{name: "base64gzip", returns: "string",
			summary: "Compresses a string with gzip and encodes the result in standard Base64.",
			example: `base64gzip("hello")`, result: `"H4sIAAAAAAAA/8pIzcnJBwQAAP//hqYQNgUAAAA="`},
		{name: "csvdecode", returns: "list(map(string))",
			summary: "Parses CSV text (RFC 4180) whose first row names the columns into a list of objects, one per row.",
			example: `csvdecode("name,qty\napple,3\n")`, result: `[{ name = "apple", qty = "3" }]`},
		{name: "jsondecode", returns: "any",
			summary: "Parses a JSON document into a value.",
			example: `jsondecode("{\"id\": 7, \"tags\": [\"a\"]}")`, result: `{ id = 7, tags = ["a"] }`},
		{name: "jsonencode", returns: "string",
			summary: "Encodes a value as JSON.",
			example: `jsonencode({ id = 7, ok = true })`, result: `"{\"id\":7,\"ok\":true}"`},
		{name: "urlencode", returns: "string",
			summary: "Escapes a string for a URL query; a space becomes `+`.",
			example: `urlencode("a b&c")`, result: `"a+b%26c"`},
	}},
	{"Hash and crypto", []doc{
		{name: "base64sha256", returns: "string",
			summary: "Returns the SHA-256 digest of the UTF-8 bytes of a string, in Base64.",
			example: `base64sha256("hello")`, result: `"LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="`},
		{name: "base64sha512", returns: "string",
			summary: "Returns the SHA-512 digest of the UTF-8 bytes of a string, in Base64.",
			example: `base64sha512("hello")`, result: `"m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw=="`},
		{name: "md5", returns: "string",
			summary: "Returns the MD5 digest of the UTF-8 bytes of a string, in hexadecimal.",
			example: `md5("hello")`, result: `"5d41402abc4b2a76b9719d911017c592"`},
		{name: "sha1", returns: "string",
			summary: "Returns the SHA-1 digest of the UTF-8 bytes of a string, in hexadecimal.",
			example: `sha1("hello")`, result: `"aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"`},
		{name: "sha256", returns: "string",
			summary: "Returns the SHA-256 digest of the UTF-8 bytes of a string, in hexadecimal.",
			example: `sha256("hello")`, result: `"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"`},
		{name: "sha512", returns: "string",
			summary: "Returns the SHA-512 digest of the UTF-8 bytes of a string, in hexadecimal.",
			example: `sha512("hello")`, result: `"9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"`},
		{name: "uuidv5", returns: "string",
			summary: "Returns the name-based (version 5) UUID of a name in a namespace: `\"dns\"`, `\"url\"`, `\"oid\"`, `\"x500\"` or a UUID; the same arguments always give the same UUID.",
			example: `uuidv5("dns", "example.com")`, result: `"cfbff0d1-9375-5685-968c-48ce8b15ae17"`},
	}},
	{"Date and time", []doc{
		{name: "formatdate", returns: "string",
			summary: "Formats an RFC 3339 timestamp with a pattern such as `YYYY-MM-DD hh:mm` (`MMM` is the month's short name).",
			example: `formatdate("DD MMM YYYY hh:mm", "2026-03-01T09:30:00Z")`, result: `"01 Mar 2026 09:30"`},
		{name: "timeadd", returns: "string",
			summary: "Adds a duration such as `\"90m\"` or `\"-1h\"` to an RFC 3339 timestamp.",
			example: `timeadd("2026-03-01T09:30:00Z", "90m")`, result: `"2026-03-01T11:00:00Z"`},
		{name: "timecmp", returns: "number",
			summary: "Compares two RFC 3339 timestamps as instants: -1, 0 or 1 as the first is before, at or after the second.",
			example: `timecmp("2026-03-01T10:00:00+01:00", "2026-03-01T09:00:00Z")`, result: `0`},
	}},
	{"Type conversion", []doc{
		{name: "tobool", returns: "bool",
			summary: "Converts a value to a bool; only the strings `\"true\"` and `\"false\"` convert.",
			example: `tobool("true")`, result: `true`},
		{name: "tolist", returns: "list(any)",
			summary: "Converts a value to a list whose elements all have one type.",
			example: `tolist(["a", "b"])`, result: `["a", "b"]`},
		{name: "tomap", returns: "map(any)",
			summary: "Converts a value to a map whose values all have one type.",
			example: `tomap({ a = "x" })`, result: `{ a = "x" }`},
		{name: "tonumber", returns: "number",
			summary: "Converts a value to a number; a string must be a decimal number.",
			example: `tonumber("42")`, result: `42`},
		{name: "toset", returns: "set(any)",
			summary: "Converts a value to a set: repeated elements collapse and the order is lost.",
			example: `toset(["b", "a", "b"])`, result: `["a", "b"]`},
		{name: "tostring", returns: "string",
			summary: "Converts a number, bool or string to a string.",
			example: `tostring(42)`, result: `"42"`},
	}},
	{"Error handling", []doc{
		{name: "can", returns: "bool",
			summary: "Returns whether its expression evaluates without an error.",
			example: `can(tonumber("x"))`, result: `false`},
		{name: "try", returns: "any",
			summary: "Returns the value of the first of its expressions that evaluates without an error.",
			example: `try(tonumber("x"), 0)`, result: `0`},
	}},
}
