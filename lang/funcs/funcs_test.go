package funcs

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

const sensitive = "sensitive"

// evalExpr evaluates src as a workflow expression would be, with vars as
// its variables.
func evalExpr(t *testing.T, src string, vars map[string]cty.Value) (cty.Value, hcl.Diagnostics) {
	t.Helper()
	expr, diags := hclsyntax.ParseExpression([]byte(src), "test.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parse %s: %s", src, diags.Error())
	}
	return expr.Value(&hcl.EvalContext{Variables: vars, Functions: Table()})
}

func mustEval(t *testing.T, src string, vars map[string]cty.Value) cty.Value {
	t.Helper()
	v, diags := evalExpr(t, src, vars)
	if diags.HasErrors() {
		t.Fatalf("%s: unexpected error: %s", src, diags.Error())
	}
	return v
}

func strList(ss ...string) cty.Value {
	vs := make([]cty.Value, len(ss))
	for i, s := range ss {
		vs[i] = cty.StringVal(s)
	}
	return cty.ListVal(vs)
}

func strSet(ss ...string) cty.Value {
	vs := make([]cty.Value, len(ss))
	for i, s := range ss {
		vs[i] = cty.StringVal(s)
	}
	return cty.SetVal(vs)
}

func num(n int64) cty.Value { return cty.NumberIntVal(n) }

type valueCase struct {
	expr string
	want cty.Value
	// check, when set, replaces the comparison with want.
	check func(t *testing.T, got cty.Value)
}

// valueCases call every function at least once (TestEveryFunctionTested
// makes sure), mostly with Terraform's documented examples.
var valueCases = []valueCase{
	// Numeric.
	{expr: `abs(-3.5)`, want: cty.NumberFloatVal(3.5)},
	{expr: `ceil(1.2)`, want: num(2)},
	{expr: `floor(1.8)`, want: num(1)},
	{expr: `log(8, 2)`, want: num(3)},
	{expr: `max(1, 5, 3)`, want: num(5)},
	// At the edges of the numbers' range (internal/bounds), and a long text of digits that
	// nothing reads as a number.
	{expr: `tonumber("-9.99e1000") < 0`, want: cty.True},
	{expr: `abs("1e-1000") > 0`, want: cty.True},
	{expr: `length(format("%s", format("%05000d", 1)))`, want: num(5000)},
	// Below the bounds on what a function builds.
	{expr: `length(join(",", split("", format("%099999d", 0))))`, want: num(199997)},
	{expr: `replace("abc", "", "-")`, want: cty.StringVal("-a-b-c-")},
	{expr: `length(regexall("[0-9]+", join(" ", [for i in range(1000) : format("%099d", i)])))`, want: num(1000)},
	// distinct and matchkeys hash strings, numbers and booleans (go-cty compares every pair:
	// 5,000 numbers took 17 s).
	{expr: `length(distinct(flatten([for a in range(3) : [for b in range(1000) : a * 1000 + b % 500]])))`, want: num(1500)},
	{expr: `distinct([1, "1", 1.0, true, "true", 2, 1])`, want: cty.ListVal([]cty.Value{cty.StringVal("1"), cty.StringVal("true"), cty.StringVal("2")})},
	{expr: `length(matchkeys(range(1000), [for i in range(1000) : i % 7], [for i in range(1000) : i]))`, want: num(1000)},
	{expr: `matchkeys(["a", "b", "c"], [[1], [2], [3]], [[2]])`, want: cty.ListVal([]cty.Value{cty.StringVal("b")})},
	{expr: `length(jsonencode([for i in range(10) : format("%0100000d", 0)]))`, want: num(10*100002 + 11)},
	{expr: `max([3, 9]...)`, want: num(9)},
	{expr: `min(4, 2, 8)`, want: num(2)},
	{expr: `parseint("ff", 16)`, want: num(255)},
	{expr: `pow(2, 10)`, want: num(1024)},
	{expr: `signum(-7)`, want: num(-1)},

	// String.
	{expr: `chomp("hi\n")`, want: cty.StringVal("hi")},
	{expr: `endswith("hello", "lo")`, want: cty.True},
	{expr: `endswith("hello", "he")`, want: cty.False},
	{expr: `format("%s=%d", "a", 1)`, want: cty.StringVal("a=1")},
	{expr: `formatlist("%s-%s", ["a", "b"], "x")`, want: strList("a-x", "b-x")},
	{expr: `indent(2, "a\nb")`, want: cty.StringVal("a\n  b")},
	{expr: `join(",", ["a", "b"])`, want: cty.StringVal("a,b")},
	{expr: `lower("HeLLo")`, want: cty.StringVal("hello")},
	{expr: `regex("[0-9]+", "ab123cd")`, want: cty.StringVal("123")},
	{expr: `regexall("[0-9]", "a1b2")`, want: strList("1", "2")},
	{expr: `replace("a-b-c", "-", "_")`, want: cty.StringVal("a_b_c")},
	{expr: `replace("a1b22", "/[0-9]+/", "#")`, want: cty.StringVal("a#b#")},
	{expr: `replace("hello world", "/(\\w+) (\\w+)/", "$2 $1")`, want: cty.StringVal("world hello")},
	{expr: `replace("k=v", "/(?P<k>\\w)=(?P<v>\\w)/", "$${v}=$${k}")`, want: cty.StringVal("v=k")},
	{expr: `replace("a/b", "/", "|")`, want: cty.StringVal("a|b")},
	{expr: `split(",", "a,b,c")`, want: strList("a", "b", "c")},
	{expr: `startswith("hello", "he")`, want: cty.True},
	{expr: `startswith("hello", "lo")`, want: cty.False},
	{expr: `strcontains("hello", "ell")`, want: cty.True},
	{expr: `strcontains("hello", "xyz")`, want: cty.False},
	{expr: `strrev("abc")`, want: cty.StringVal("cba")},
	{expr: `substr("hello", 1, 3)`, want: cty.StringVal("ell")},
	{expr: `title("hello world")`, want: cty.StringVal("Hello World")},
	{expr: `trim("?!hi?!", "!?")`, want: cty.StringVal("hi")},
	{expr: `trimprefix("helloworld", "hello")`, want: cty.StringVal("world")},
	{expr: `trimsuffix("helloworld", "world")`, want: cty.StringVal("hello")},
	{expr: `trimspace("  hi\n")`, want: cty.StringVal("hi")},
	{expr: `upper("abc")`, want: cty.StringVal("ABC")},

	// Collection.
	{expr: `alltrue([true, true])`, want: cty.True},
	{expr: `alltrue([true, false])`, want: cty.False},
	{expr: `alltrue([])`, want: cty.True},
	{expr: `anytrue([false, true])`, want: cty.True},
	{expr: `anytrue([])`, want: cty.False},
	{expr: `chunklist(["a", "b", "c"], 2)`, want: cty.ListVal([]cty.Value{strList("a", "b"), strList("c")})},
	{expr: `coalesce("", "x")`, want: cty.StringVal("x")},
	{expr: `coalesce(null, "", "y")`, want: cty.StringVal("y")},
	{expr: `coalesce(1, 2)`, want: num(1)},
	{expr: `coalesce("a", 2)`, want: cty.StringVal("a")},
	{expr: `coalescelist([], ["a"])`, want: cty.TupleVal([]cty.Value{cty.StringVal("a")})},
	{expr: `compact(["a", "", "b"])`, want: strList("a", "b")},
	{expr: `concat(["a"], ["b", "c"])`, want: cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b"), cty.StringVal("c")})},
	{expr: `contains(["a", "b"], "b")`, want: cty.True},
	{expr: `contains(["a", "b"], "z")`, want: cty.False},
	{expr: `distinct(["a", "b", "a"])`, want: strList("a", "b")},
	{expr: `element(["a", "b", "c"], 4)`, want: cty.StringVal("b")},
	{expr: `flatten([["a"], ["b", ["c"]]])`, want: cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b"), cty.StringVal("c")})},
	{expr: `index(["a", "b", "c"], "b")`, want: num(1)},
	{expr: `keys({b = 1, a = 2})`, want: cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})},
	{expr: `length("héllo")`, want: num(5)},
	{expr: `length("👩‍👩‍👧!")`, want: num(2)},
	{expr: `length("")`, want: num(0)},
	{expr: `length([1, 2, 3])`, want: num(3)},
	{expr: `length({a = 1, b = 2})`, want: num(2)},
	{expr: `length(tomap({a = 1}))`, want: num(1)},
	{expr: `length(tolist(["a", "b"]))`, want: num(2)},
	{expr: `length(toset(["a", "a"]))`, want: num(1)},
	{expr: `lookup({a = 1}, "b", 0)`, want: num(0)},
	{expr: `lookup({a = 1}, "a")`, want: num(1)},
	{expr: `lookup({a = 1}, "a", "unused")`, want: num(1)},
	{expr: `lookup({a = 1, b = "x"}, "b")`, want: cty.StringVal("x")},
	{expr: `lookup(tomap({a = "x"}), "a")`, want: cty.StringVal("x")},
	{expr: `lookup(tomap({a = "x"}), "b", "d")`, want: cty.StringVal("d")},
	{expr: `lookup(tomap({a = "x"}), "b", null)`, want: cty.NullVal(cty.String)},
	{expr: `matchkeys(["i-1", "i-2", "i-3"], ["us", "eu", "us"], ["us"])`, want: strList("i-1", "i-3")},
	{expr: `matchkeys(["i-1"], ["us"], ["eu"])`, want: cty.ListValEmpty(cty.String)},
	{expr: `merge({a = 1}, {b = "x"})`, want: cty.ObjectVal(map[string]cty.Value{"a": num(1), "b": cty.StringVal("x")})},
	{expr: `one([])`, want: cty.NullVal(cty.DynamicPseudoType)},
	{expr: `one(["x"])`, want: cty.StringVal("x")},
	{expr: `one(tolist([]))`, want: cty.NullVal(cty.DynamicPseudoType)},
	{expr: `one(toset(["x", "x"]))`, want: cty.StringVal("x")},
	{expr: `range(3)`, want: cty.ListVal([]cty.Value{num(0), num(1), num(2)})},
	{expr: `range(1, 7, 3)`, want: cty.ListVal([]cty.Value{num(1), num(4)})},
	{expr: `reverse([1, 2, 3])`, want: cty.TupleVal([]cty.Value{num(3), num(2), num(1)})},
	{expr: `setintersection(["a", "b"], ["b", "c"])`, want: strSet("b")},
	{expr: `setproduct(["a", "b"], ["x"])`, want: cty.ListVal([]cty.Value{
		cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("x")}),
		cty.TupleVal([]cty.Value{cty.StringVal("b"), cty.StringVal("x")}),
	})},
	{expr: `setsubtract(["a", "b"], ["a"])`, want: strSet("b")},
	{expr: `setunion(["a"], ["b"])`, want: strSet("a", "b")},
	{expr: `slice(["a", "b", "c"], 1, 3)`, want: cty.TupleVal([]cty.Value{cty.StringVal("b"), cty.StringVal("c")})},
	{expr: `sort(["c", "a", "b"])`, want: strList("a", "b", "c")},
	{expr: `sum([1, 2, 3.5])`, want: cty.NumberFloatVal(6.5)},
	{expr: `sum(toset([2, 3]))`, want: num(5)},
	{expr: `sum(["1", 2])`, want: num(3)},
	{expr: `transpose({a = ["1", "2"], b = ["2"]})`, want: cty.MapVal(map[string]cty.Value{"1": strList("a"), "2": strList("a", "b")})},
	{expr: `transpose({})`, want: cty.MapValEmpty(cty.List(cty.String))},
	{expr: `values({a = 1, b = "x"})`, want: cty.TupleVal([]cty.Value{num(1), cty.StringVal("x")})},
	{expr: `zipmap(["a", "b"], [1, 2])`, want: cty.ObjectVal(map[string]cty.Value{"a": num(1), "b": num(2)})},

	// Encoding.
	{expr: `base64decode("aGVsbG8=")`, want: cty.StringVal("hello")},
	{expr: `base64encode("hello")`, want: cty.StringVal("aGVsbG8=")},
	{expr: `base64gzip("hello hello hello")`, check: func(t *testing.T, got cty.Value) {
		b, err := base64.StdEncoding.DecodeString(got.AsString())
		if err != nil {
			t.Fatal(err)
		}
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(r)
		if err != nil || string(plain) != "hello hello hello" {
			t.Fatalf("gunzip gave %q, %v", plain, err)
		}
	}},
	{expr: `csvdecode("a,b\n1,2\n")`, want: cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("1"), "b": cty.StringVal("2")})})},
	{expr: `jsondecode(jsonencode({a = [1, 2]}))`, want: cty.ObjectVal(map[string]cty.Value{"a": cty.TupleVal([]cty.Value{num(1), num(2)})})},
	{expr: `jsonencode({a = [1, 2], b = null})`, want: cty.StringVal(`{"a":[1,2],"b":null}`)},
	{expr: `urlencode("a b&c/é")`, want: cty.StringVal("a+b%26c%2F%C3%A9")},

	// Hash and crypto.
	{expr: `md5("hello")`, want: cty.StringVal("5d41402abc4b2a76b9719d911017c592")},
	{expr: `md5("héllo")`, want: cty.StringVal("be50e8478cf24ff3595bc7307fb91b50")},
	{expr: `sha1("hello")`, want: cty.StringVal("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")},
	{expr: `sha256("hello")`, want: cty.StringVal("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")},
	{expr: `sha512("hello")`, want: cty.StringVal("9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043")},
	{expr: `base64sha256("hello")`, want: cty.StringVal("LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=")},
	{expr: `base64sha512("hello")`, want: cty.StringVal("m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw==")},
	{expr: `uuidv5("dns", "python.org")`, want: cty.StringVal("886313e1-3b8a-5372-9b90-0c9aee199e5d")},
	{expr: `uuidv5("url", "https://example.com/")`, want: cty.StringVal("dd2c1780-811a-5296-81c5-178a0ef488bc")},
	{expr: `uuidv5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org")`, want: cty.StringVal("886313e1-3b8a-5372-9b90-0c9aee199e5d")},
	{expr: `uuidv5("{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}", "python.org")`, want: cty.StringVal("886313e1-3b8a-5372-9b90-0c9aee199e5d")},
	{expr: `uuidv5("urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org")`, want: cty.StringVal("886313e1-3b8a-5372-9b90-0c9aee199e5d")},
	{expr: `uuidv5("6ba7b8109dad11d180b400c04fd430c8", "python.org")`, want: cty.StringVal("886313e1-3b8a-5372-9b90-0c9aee199e5d")},

	// Date and time.
	{expr: `formatdate("YYYY-MM-DD hh:mm", "2024-01-02T03:04:05Z")`, want: cty.StringVal("2024-01-02 03:04")},
	{expr: `timeadd("2024-01-01T00:00:00Z", "1h30m")`, want: cty.StringVal("2024-01-01T01:30:00Z")},
	{expr: `timecmp("2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00")`, want: num(0)},
	{expr: `timecmp("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z")`, want: num(-1)},
	{expr: `timecmp("2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z")`, want: num(1)},

	// Type conversion.
	{expr: `tobool("true")`, want: cty.True},
	{expr: `tolist(["a", "b"])`, want: strList("a", "b")},
	{expr: `tomap({a = "x"})`, want: cty.MapVal(map[string]cty.Value{"a": cty.StringVal("x")})},
	{expr: `tonumber("42")`, want: num(42)},
	{expr: `toset(["a", "a"])`, want: strSet("a")},
	{expr: `tostring(5)`, want: cty.StringVal("5")},
	{expr: `tostring(null)`, want: cty.NullVal(cty.String)},

	// Error handling.
	{expr: `try(jsondecode("{bad"), "fallback")`, want: cty.StringVal("fallback")},
	{expr: `try(jsondecode("1"), "fallback")`, want: num(1)},
	{expr: `can(jsondecode("{bad"))`, want: cty.False},
	{expr: `can(1)`, want: cty.True},
}

func TestFunctions(t *testing.T) {
	for _, tc := range valueCases {
		t.Run(tc.expr, func(t *testing.T) {
			got := mustEval(t, tc.expr, nil)
			if tc.check != nil {
				tc.check(t, got)
				return
			}
			if !got.RawEquals(tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// errorCases are wrong arguments, which must give an error diagnostic
// containing the given text (and never a panic).
var errorCases = []struct{ expr, want string }{
	{`upper([1])`, "string required"},
	{`abs("x")`, "a number is required"},
	{`length(1)`, "argument must be a string, a collection type, or a structural type"},
	{`length(null)`, "must not be null"},
	{`lookup({a = 1}, "b")`, `no attribute "b"`},
	{`lookup(tomap({a = 1}), "b")`, `lookup failed to find key "b"`},
	{`lookup("x", "a")`, "requires a map or object"},
	{`lookup({a = 1}, "a", 1, 2)`, "two or three arguments"},
	{`lookup(tomap({a = 1}), "b", [1])`, "same type as the map elements"},
	{`coalesce("", null)`, "no non-null, non-empty-string arguments"},
	{`coalesce()`, "at least one argument"},
	{`coalesce(1, [1])`, "same type"},
	{`replace("a", "/(/", "b")`, "error parsing regexp"},
	{`index(["a"], "z")`, "item not found"},
	{`index([], "a")`, "cannot search an empty list"},
	{`index({a = 1}, 1)`, "must be a list or tuple"},
	{`one([1, 2])`, "zero or one elements"},
	{`one(tolist([1, 2]))`, "zero or one elements"},
	{`one("x")`, "zero or one elements"},
	{`sum([])`, "cannot sum an empty list"},
	{`sum(["a"])`, "list, set, or tuple of number values"},
	{`sum([true])`, "list, set, or tuple of number values"},
	{`sum([null])`, "list, set, or tuple of number values"},
	{`sum({a = 1})`, "argument must be list, set, or tuple"},
	{`sum([pow(10, 400), -pow(10, 400)])`, "the result is infinite"},
	{`log(-1, 10)`, "not a real number"},
	{`log(1, 1)`, "not a real number"},
	{`pow(-8, 0.5)`, "fractional power"},
	{`indent(-1, "a\nb")`, "must not be negative"},
	// Short expressions that used to kill the process (out of memory, stack overflow): a
	// workflow file is input.
	{`indent(2000000000, "a\nb")`, "2 lines indented by that many spaces would be more than 16 MiB"},
	{`formatlist("%999999d", range(1000))`, "would make more than 16 MiB of text"},
	{`format("%[1]020000000d", 1)`, "would make more than 16 MiB of text"},
	{`format("%.99999999999s", "x")`, "would make more than 16 MiB of text"},
	{`jsondecode(join("", [for i in range(1001): "["]))`, "nests more than 1000 arrays and objects deep"},
	// Numbers beyond 10^±1000, which go-cty writes out in every digit (tostring of 1e600000000
	// ran eight minutes, then out of memory), and number texts whose parse is quadratic.
	{`jsondecode("[1, 1e600000000]")`, "the number 1e600000000 is out of range"},
	{`tonumber("1e600000000")`, "out of range"},
	{`tonumber("1p100000000")`, "out of range"},
	{`tonumber("-1e-1001")`, "out of range"},
	{`tonumber(format("1%05000d", 0))`, "a number is read from 4096 bytes at most"},
	{`parseint(format("%05000d", 1), 10)`, "a number is read from 4096 bytes at most"},
	{`max(1, "1e600000000")`, "out of range"},
	{`abs("-1e1001")`, "out of range"},
	{`sum([1, "1e1001"])`, "out of range"},
	{`format("%d", "1e600000000")`, "out of range"},
	{`format("%f", "1p9999")`, "out of range"},
	{`format("%s %x", format("%05000d", 1), 1)`, "a number is read from 4096 bytes at most"},
	{`formatlist("%d", ["1", "1e600000000"])`, "out of range"},
	// Results that multiply their arguments (nine nested replaces asked for 10 GB).
	{`replace(replace(replace(replace(replace(replace(replace(replace("xxxxxxxxxx", "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx")`, "the result would be more than 16 MiB"},
	{`replace(format("%0100d", 0), "", format("%0200000d", 0))`, "the result would be more than 16 MiB"},
	{`replace(format("%0100d", 0), "/0/", "$0$0$0${format("%0200000d", 0)}")`, "the result would be more than 16 MiB"},
	{`join(format("%01000000d", 0), [for i in range(100) : "a"])`, "the joined text would be"},
	{`split("", format("%0200000d", 0))`, "splits into 200000 elements"},
	{`regexall(".", format("%0200000d", 0))`, "more than 100000 matches"},
	{`jsonencode([for i in range(100) : format("%0200000d", 0)])`, "the JSON would be more than 16 MiB"},
	{`jsonencode(replace(format("%03000000d", 0), "0", "<"))`, "the JSON would be more than 16 MiB"},
	{`format("%[1]s%[1]s%[1]s", format("%08000000d", 0))`, "the formatted text would be more than 16 MiB"},
	{`formatlist("%s", [for i in range(100) : format("%0200000d", 0)])`, "the formatted text would be more than 16 MiB"},
	{`concat(split("", format("%060000d", 0)), split("", format("%060000d", 0)))`, "more than 100000"},
	{`flatten([for i in range(3) : split("", format("%040000d", 0))])`, "more than 100000 elements"},
	// A pattern's program times its text (regexall("(?:x?){1000}y", <1 MB>) took 22 s).
	{`regexall("(?:x?){1000}y", format("%0200000d", 0))`, "more than 100000000"},
	{`regex("(?:x?){1000}y", format("%0200000d", 0))`, "more than 100000000"},
	{`replace(format("%0200000d", 0), "/(?:x?){1000}y/", "")`, "more than 100000000"},
	// Pairwise comparisons where the elements cannot be hashed.
	{`distinct([for i in range(1001) : [i]])`, "at most 1000000 pairs"},
	{`matchkeys(range(1001), [for i in range(1001) : [i]], [for i in range(1000) : [i]])`, "matchkeys would compare 1001000 pairs"},
	{`merge(null, "x")`, "must be maps or objects, got string"},
	{`merge("x")`, "must be maps or objects"},
	{`zipmap(tolist([null, "b"]), tolist(["a", "b"]))`, "null value at index 0"},
	{`alltrue(["maybe"])`, "a bool is required"},
	{`anytrue(1)`, "list of bool required"},
	{`transpose({a = [null]})`, "must not contain null"},
	{`transpose({a = null})`, "must not be null"},
	{`transpose({a = [[1]]})`, "string required"},
	{`matchkeys(["a"], ["x", "y"], ["x"])`, "length of keys and values"},
	{`matchkeys(["a"], ["x"], [["x"]])`, "same type"},
	{`base64decode("!!!")`, "failed to decode base64 data"},
	{`base64decode("/w==")`, "not valid UTF-8"},
	{`startswith([1], "a")`, "string required"},
	{`endswith("a", {})`, "string required"},
	{`strcontains()`, "Not enough function arguments"},
	{`md5(["a"])`, "string required"},
	{`uuidv5("bogus", "x")`, `doesn't support namespace "bogus"`},
	{`uuidv5("6ba7b810-9dad-11d1-80b4-00c04fd430cz", "x")`, "invalid UUID"},
	{`timecmp("nope", "2024-01-01T00:00:00Z")`, "not a valid RFC 3339 timestamp"},
	{`timecmp("2024-01-01T00:00:00Z", 3)`, "not a valid RFC 3339 timestamp: expected a four-digit year"},
	{`timecmp("2024-01-01 00:00:00Z", "2024-01-01T00:00:00Z")`, `expected "T" between the date and the time`},
	{`timecmp("2024-02-30T00:00:00Z", "2024-01-01T00:00:00Z")`, "day out of range"},
	{`timecmp("2024-01-01T00:00:00Zjunk", "2024-01-01T00:00:00Z")`, "unexpected text after the time zone"},
	{`tonumber("x")`, `cannot convert "x" to number`},
	{`tobool("maybe")`, `cannot convert "maybe" to bool`},
	{`tostring([1])`, "cannot convert tuple to string"},
	{`tomap("x")`, "cannot convert string to map"},
	{`tolist({a = 1})`, "cannot convert object to list"},
	{`jsondecode("{bad")`, "invalid character"},
	{`parseint("zz", 10)`, "cannot parse"},
	{`regex("(", "x")`, "invalid regexp pattern"},
	{`element([], 0)`, "cannot use element function with an empty list"},
	{`base64encode([])`, "string required"},
	{`base64gzip({})`, "string required"},
	{`base64sha256([1])`, "string required"},
	{`base64sha512([1])`, "string required"},
	{`ceil("x")`, "a number is required"},
	{`chomp([1])`, "string required"},
	{`chunklist(["a"], -1)`, "the size argument must be positive"},
	{`coalescelist()`, "at least one argument is required"},
	{`coalescelist("a")`, "arguments must be lists or tuples"},
	{`compact("a")`, "list of string required"},
	{`concat()`, "at least one argument is required"},
	{`concat("a")`, "all arguments must be lists or tuples"},
	{`contains("a", "a")`, "argument must be list, tuple, or set"},
	{`csvdecode("a\n1,2")`, "wrong number of fields"},
	{`distinct("a")`, "list of dynamic required"},
	{`flatten("a")`, "can only flatten lists, sets and tuples"},
	{`floor("x")`, "a number is required"},
	{`format("%d", "x")`, "a number is required"},
	{`format("%[3]s", 1)`, "not enough arguments"},
	{`formatdate("Y", "2024-01-01T00:00:00Z")`, "invalid date format verb"},
	{`formatdate("YYYY", "yesterday")`, "not a valid RFC3339 timestamp"},
	{`formatlist("%s", [1], [1, 2])`, "inconsistent"},
	{`join(",", "a")`, "list of string required"},
	{`jsonencode()`, "Missing value for \"val\""},
	{`keys("a")`, "must have map or object type"},
	{`lower([1])`, "string required"},
	{`max()`, "must pass at least one number"},
	{`min("x")`, "a number is required"},
	{`range()`, "must have one, two, or three arguments"},
	{`range(0, 1, 0)`, "more than 1024 values"},
	{`regexall("(", "x")`, "invalid regexp pattern"},
	{`reverse("a")`, "can only reverse list or tuple values"},
	{`setintersection("a")`, "set of dynamic required"},
	{`setproduct()`, "at least two arguments"},
	{`setsubtract("a", 1)`, "set of dynamic required"},
	{`setunion({a = 1})`, "set of any single type required"},
	{`sha1([1])`, "string required"},
	{`sha256([1])`, "string required"},
	{`sha512([1])`, "string required"},
	{`signum(pow(10, 400))`, "the result is infinite"},
	{`slice([1, 2], 2, 1)`, "start index must not be greater than end index"},
	{`sort([null])`, "cannot be sorted"},
	{`split(",", ["a"])`, "string required"},
	{`strrev([1])`, "string required"},
	{`substr("abc", "x", 1)`, "a number is required"},
	{`timeadd("2024-01-01T00:00:00Z", "1y")`, "unknown unit"},
	{`title([1])`, "string required"},
	{`toset("x")`, "cannot convert string to set"},
	{`trim([1], "a")`, "string required"},
	{`trimprefix([1], "a")`, "string required"},
	{`trimspace([1])`, "string required"},
	{`trimsuffix("a", [1])`, "string required"},
	{`urlencode([1])`, "string required"},
	{`values("a")`, "requires a map"},
	{`nosuchfunc(1)`, "no function named"},
	{`timestamp()`, "no function named"},
	{`uuid()`, "no function named"},
	{`file("x")`, "no function named"},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.expr, func(t *testing.T) {
			_, diags := evalExpr(t, tc.expr, nil)
			if !diags.HasErrors() {
				t.Fatalf("no error")
			}
			msg := diags.Error()
			if strings.Contains(strings.ToLower(msg), "panic") {
				t.Fatalf("function panicked: %s", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
		})
	}
}

// calledNames returns the functions that src calls, at any depth.
func calledNames(t *testing.T, src string) []string {
	t.Helper()
	expr, diags := hclsyntax.ParseExpression([]byte(src), "test.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parse %s: %s", src, diags.Error())
	}
	var names []string
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		if call, ok := n.(*hclsyntax.FunctionCallExpr); ok {
			names = append(names, call.Name)
		}
		return nil
	})
	return names
}

func TestEveryFunctionTested(t *testing.T) {
	tested := map[string]bool{}
	for _, tc := range valueCases {
		for _, name := range calledNames(t, tc.expr) {
			tested[name] = true
		}
	}
	erred := map[string]bool{}
	for _, tc := range errorCases {
		for _, name := range calledNames(t, tc.expr) {
			erred[name] = true
		}
	}
	for _, name := range Names() {
		if !tested[name] {
			t.Errorf("function %s has no value test", name)
		}
	}
	// try and can turn errors into values, so they have no error case.
	for _, name := range Names() {
		if !erred[name] && name != "try" && name != "can" {
			t.Errorf("function %s has no error test", name)
		}
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() is not sorted: %v", names)
	}
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(Table())), func(n string) bool { return n == IterationsName || n == ElementName })
	if !slices.Equal(names, keys) {
		t.Errorf("Names() = %v\nTable keys = %v", names, keys)
	}
	// Spot-check the names the spec promises.
	for _, name := range []string{"upper", "lower", "title", "length", "join", "split", "format", "jsonencode", "jsondecode", "merge", "keys", "values", "lookup", "contains", "coalesce", "min", "max", "regex", "replace", "substr", "trim", "range", "try", "can"} {
		if _, ok := slices.BinarySearch(names, name); !ok {
			t.Errorf("missing function %s", name)
		}
	}
	for name, f := range Table() {
		if f.Description() == "" {
			t.Errorf("function %s has no description", name)
		}
	}
	// Impure functions would differ between plan and run.
	for _, name := range []string{"timestamp", "uuid", "bcrypt", "file", "plantimestamp"} {
		if _, ok := slices.BinarySearch(names, name); ok {
			t.Errorf("impure function %s is present", name)
		}
	}
}

// TestTableIsCallersOwn checks that callers can extend their table, even
// concurrently, without affecting anyone else's.
func TestTableIsCallersOwn(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tbl := Table()
			tbl["custom"] = tbl["upper"]
			delete(tbl, "upper")
			n := Names()
			n[0] = "zzz"
		})
	}
	wg.Wait()
	tbl := Table()
	if _, ok := tbl["custom"]; ok {
		t.Error("a caller's addition leaked into Table()")
	}
	if _, ok := tbl["upper"]; !ok {
		t.Error("a caller's deletion leaked into Table()")
	}
	if Names()[0] == "zzz" {
		t.Error("a caller's change leaked into Names()")
	}
}

func TestUnknowns(t *testing.T) {
	unknownStr := cty.UnknownVal(cty.String)
	https := cty.UnknownVal(cty.String).Refine().NotNull().StringPrefix("https://").NewValue()
	vars := map[string]cty.Value{
		"u":      unknownStr,
		"https":  https,
		"ulist":  cty.UnknownVal(cty.List(cty.String)),
		"utuple": cty.UnknownVal(cty.Tuple([]cty.Type{cty.String, cty.Number})),
		"udyn":   cty.DynamicVal,
		"umap":   cty.UnknownVal(cty.Map(cty.Number)),
	}
	tests := []struct {
		expr string
		want cty.Value // cty.NilVal means "any unknown"
	}{
		{`upper(u)`, cty.NilVal},
		{`length(u)`, cty.NilVal},
		{`length(ulist)`, cty.NilVal},
		{`length(udyn)`, cty.NilVal},
		{`length(utuple)`, num(2)},
		{`coalesce(u, "x")`, cty.NilVal},
		{`coalesce("a", u)`, cty.StringVal("a")},
		{`lookup({a = 1}, u)`, cty.NilVal},
		{`lookup({a = 1}, "a", u)`, num(1)},
		{`lookup(umap, "a", 0)`, cty.NilVal},
		{`lookup(udyn, "a")`, cty.NilVal},
		{`replace(u, "a", "b")`, cty.NilVal},
		{`index(["a", u, "b"], "b")`, cty.NilVal},
		{`index(["a", u, "b"], "a")`, num(0)},
		{`one(ulist)`, cty.NilVal},
		{`one(toset([u]))`, cty.NilVal},
		{`sum([1, u])`, cty.NilVal},
		{`alltrue([true, u])`, cty.NilVal},
		{`alltrue([false, u])`, cty.False},
		{`anytrue([false, u])`, cty.NilVal},
		{`anytrue([true, u])`, cty.True},
		{`transpose({a = [u]})`, cty.NilVal},
		{`matchkeys(["a"], [u], ["x"])`, cty.NilVal},
		{`startswith(https, "https")`, cty.True},
		{`startswith(https, "http:")`, cty.False},
		{`startswith(https, "https://x")`, cty.NilVal},
		{`startswith(u, "")`, cty.True},
		{`endswith(u, "x")`, cty.NilVal},
		{`sha256(u)`, cty.NilVal},
		{`tonumber(u)`, cty.NilVal},
		{`tostring(udyn)`, cty.NilVal},
		{`jsondecode(u)`, cty.NilVal},
		{`uuidv5("dns", u)`, cty.NilVal},
		{`timecmp(u, "2024-01-01T00:00:00Z")`, cty.NilVal},
		{`can(u)`, cty.NilVal},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			got := mustEval(t, tc.expr, vars)
			if tc.want == cty.NilVal {
				if got.IsWhollyKnown() {
					t.Errorf("got known %#v, want unknown", got)
				}
				return
			}
			if !got.RawEquals(tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}

	// Functions that never return null say so, so that "!= null" on an
	// unknown result is known.
	if got := mustEval(t, `replace(u, "a", "b") != null`, vars); !got.RawEquals(cty.True) {
		t.Errorf("replace(u) != null is %#v, want true", got)
	}
}

func TestMarks(t *testing.T) {
	secret := cty.StringVal("hunter2").Mark(sensitive)
	vars := map[string]cty.Value{
		"secret":  secret,
		"u":       cty.UnknownVal(cty.String),
		"usecret": cty.UnknownVal(cty.String).Mark(sensitive),
		"dsecret": cty.DynamicVal.Mark(sensitive),
		"cfg": cty.ObjectVal(map[string]cty.Value{
			"password": secret,
			"user":     cty.StringVal("admin"),
		}),
		"mcfg":  cty.MapVal(map[string]cty.Value{"password": secret, "user": cty.StringVal("admin")}),
		"list":  cty.ListVal([]cty.Value{secret, cty.StringVal("x")}),
		"mlist": cty.ListVal([]cty.Value{cty.StringVal("x")}).Mark(sensitive),
		"key":   cty.StringVal("user").Mark(sensitive),
		"nokey": cty.StringVal("hunter2").Mark(sensitive),
	}
	tests := []struct {
		expr   string
		marked bool
	}{
		{`upper(secret)`, true},
		{`upper(usecret)`, true},
		{`length(secret)`, true},
		{`length(usecret)`, true},
		{`length(dsecret)`, true},
		{`length(mlist)`, true},
		// A list holding a secret does not make its length secret.
		{`length(list)`, false},
		{`coalesce("", secret)`, true},
		{`replace(secret, "/h(u)/", "$1")`, true},
		{`sha256(secret)`, true},
		{`base64encode(secret)`, true},
		{`startswith(usecret, "")`, true},
		{`lookup(cfg, "password")`, true},
		{`lookup(mcfg, "password")`, true},
		// The sibling's mark does not spread to the element looked up.
		{`lookup(cfg, "user")`, false},
		{`lookup(mcfg, "user")`, false},
		{`lookup(cfg, key)`, true},
		{`lookup(mcfg, "nope", secret)`, true},
		// An unused default does not mark the result.
		{`lookup(mcfg, "user", secret)`, false},
		{`lookup(mcfg, usecret, "x")`, true},
		// Unknown key: the secret element might be the one chosen.
		{`lookup(cfg, u)`, true},
		{`lookup(mcfg, u)`, true},
		{`lookup({a = "x"}, u, [secret])`, true},
		{`lookup({a = "x"}, u, "y")`, false},
		{`lookup(dsecret, "a")`, true},
		{`tostring(secret)`, true},
		{`tostring(usecret)`, true},
		{`tostring(dsecret)`, true},
		{`tonumber(tostring(length(secret)))`, true},
		{`tolist(list)[0]`, true},
		{`tolist(list)[1]`, false},
		{`jsonencode(cfg)`, true},
		{`sum([1, length(secret)])`, true},
		{`try(secret, "x")`, true},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			got := mustEval(t, tc.expr, vars)
			if got.IsMarked() != tc.marked {
				t.Errorf("%#v: marked = %v, want %v", got, got.IsMarked(), tc.marked)
			}
		})
	}

	// Errors must not repeat a sensitive value, which would put it into
	// logs and the UI.
	for _, expr := range []string{
		`tonumber(secret)`,
		`tobool(secret)`,
		`lookup(mcfg, nokey)`,
		`lookup(cfg, nokey)`,
		`base64decode(secret)`,
		`timecmp(secret, secret)`,
		// Its error quoted the first character ("invalid character 'h' …"), too short for the
		// scrubber of logs to find.
		`jsondecode(secret)`,
		`jsondecode("{\"a\": ${secret}}")`,
		`formatdate(secret, "2024-01-01T00:00:00Z")`,
	} {
		t.Run(expr, func(t *testing.T) {
			_, diags := evalExpr(t, expr, vars)
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			if msg := diags.Error(); strings.Contains(msg, "hunter2") || strings.Contains(msg, "'h'") || strings.Contains(msg, "hunt") {
				t.Errorf("error reveals the secret: %s", msg)
			}
		})
	}
}

// TestCallProperties takes every successful call in valueCases and checks
// that replacing any one argument by an unknown gives an unknown (or the
// same) result without error, and by a marked value gives a marked result.
func TestCallProperties(t *testing.T) {
	// Calls whose result legitimately stays known when one argument is
	// unknown, because the argument is not needed or its type decides.
	mayStayKnown := map[string]bool{"coalesce": true, "lookup": true, "length": true, "startswith": true, "keys": true}
	// Calls whose result may legitimately drop an argument's mark.
	mayDropMark := map[string]bool{"lookup": true}
	for _, tc := range valueCases {
		expr, _ := hclsyntax.ParseExpression([]byte(tc.expr), "test.hcl", hcl.InitialPos)
		call, ok := expr.(*hclsyntax.FunctionCallExpr)
		// try and can take expressions, not values, so they have their
		// own tests.
		if !ok || call.ExpandFinal || call.Name == "try" || call.Name == "can" {
			continue
		}
		args := make([]cty.Value, len(call.Args))
		for i, a := range call.Args {
			args[i] = mustEval(t, string(a.Range().SliceBytes([]byte(tc.expr))), nil)
		}
		for i := range args {
			vars := map[string]cty.Value{}
			params := make([]string, len(args))
			for j, a := range args {
				params[j] = "a" + string(rune('0'+j))
				vars[params[j]] = a
			}
			src := call.Name + "(" + strings.Join(params, ", ") + ")"

			t.Run(tc.expr+"/unknown"+string(rune('0'+i)), func(t *testing.T) {
				vars := maps.Clone(vars)
				vars[params[i]] = cty.UnknownVal(args[i].Type())
				got, diags := evalExpr(t, src, vars)
				if diags.HasErrors() {
					t.Fatalf("error: %s", diags.Error())
				}
				if got.IsWhollyKnown() && !mayStayKnown[call.Name] {
					t.Errorf("got known %#v", got)
				}
			})
			t.Run(tc.expr+"/unknown-marked"+string(rune('0'+i)), func(t *testing.T) {
				vars := maps.Clone(vars)
				vars[params[i]] = cty.UnknownVal(args[i].Type()).Mark(sensitive)
				got, diags := evalExpr(t, src, vars)
				if diags.HasErrors() {
					t.Fatalf("error: %s", diags.Error())
				}
				if !got.ContainsMarked() && !mayDropMark[call.Name] {
					t.Errorf("mark lost: %#v", got)
				}
			})
			t.Run(tc.expr+"/marked"+string(rune('0'+i)), func(t *testing.T) {
				vars := maps.Clone(vars)
				vars[params[i]] = args[i].Mark(sensitive)
				got, diags := evalExpr(t, src, vars)
				if diags.HasErrors() {
					t.Fatalf("error: %s", diags.Error())
				}
				if !got.ContainsMarked() && !mayDropMark[call.Name] {
					t.Errorf("mark lost: %#v", got)
				}
			})
		}
	}
}

// TestNoPanics calls every function with many awkward argument
// combinations, through hclsyntax as workflows do: each call may fail, but
// must not panic. The functions written here are also called directly,
// without hclsyntax's argument conversion, as Go code might.
func TestNoPanics(t *testing.T) {
	samples := []cty.Value{
		cty.NullVal(cty.DynamicPseudoType),
		cty.DynamicVal,
		cty.NullVal(cty.String),
		cty.UnknownVal(cty.String),
		cty.StringVal(""),
		cty.StringVal("/a(/"),
		cty.StringVal("2024-01-01T00:00:00Z").Mark(sensitive),
		cty.NumberIntVal(-1),
		cty.PositiveInfinity,
		cty.True,
		cty.EmptyTupleVal,
		cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.NullVal(cty.Number), cty.UnknownVal(cty.Bool)}),
		cty.ListVal([]cty.Value{cty.NullVal(cty.String), cty.StringVal("b")}),
		cty.ListValEmpty(cty.Bool),
		cty.SetVal([]cty.Value{cty.UnknownVal(cty.String), cty.StringVal("b")}),
		cty.MapVal(map[string]cty.Value{"a": cty.ListVal([]cty.Value{cty.NullVal(cty.String)})}),
		cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1).Mark(sensitive)}),
		cty.UnknownVal(cty.List(cty.Bool)).Mark(sensitive),
	}
	var combos [][]cty.Value
	combos = append(combos, nil)
	for _, a := range samples {
		combos = append(combos, []cty.Value{a})
		for _, b := range samples {
			combos = append(combos, []cty.Value{a, b})
		}
	}
	// All triples would be slow under -race; pairs plus one third argument
	// of each kind reach the three-parameter code paths.
	for _, a := range samples {
		for _, c := range samples {
			combos = append(combos, []cty.Value{a, cty.StringVal("a"), c})
			combos = append(combos, []cty.Value{cty.NumberIntVal(1), a, c})
		}
	}
	ownFuncs := map[string]bool{}
	for _, name := range []string{
		"alltrue", "anytrue", "base64decode", "base64encode", "base64gzip",
		"base64sha256", "base64sha512", "coalesce", "endswith", "index",
		"length", "lookup", "matchkeys", "md5", "one", "replace", "sha1",
		"sha256", "sha512", "startswith", "strcontains", "sum", "timecmp",
		"tobool", "tolist", "tomap", "tonumber", "toset", "tostring",
		"transpose", "urlencode", "uuidv5",
	} {
		ownFuncs[name] = true
	}
	params := []string{"a0", "a1", "a2"}
	for _, name := range Names() {
		f := Table()[name]
		for _, args := range combos {
			vars := map[string]cty.Value{}
			for i, a := range args {
				vars[params[i]] = a
			}
			src := name + "(" + strings.Join(params[:len(args)], ", ") + ")"
			_, diags := evalExpr(t, src, vars)
			if strings.Contains(diags.Error(), "panic") {
				t.Errorf("%s with %#v panicked: %s", src, args, diags.Error())
			}
			if ownFuncs[name] {
				_, err := f.Call(args)
				if _, ok := errors.AsType[function.PanicError](err); ok {
					t.Errorf("%s%#v panicked: %s", name, args, err)
				}
			}
		}
	}
}

// TestUniformTuplesAsCollections: a tuple of one element type given where a list or a set is
// wanted is made one directly (go-cty compares every pair of element types: tolist of 20,000
// took 15 s), with the same value and marks as go-cty's conversion; other tuples are converted
// as before.
func TestUniformTuplesAsCollections(t *testing.T) {
	const sensitive = "sensitive"
	vars := map[string]cty.Value{
		"nums":   cty.TupleVal([]cty.Value{cty.NumberIntVal(3), cty.NumberIntVal(1), cty.NumberIntVal(3)}),
		"mixed":  cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("a")}),
		"marked": cty.TupleVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a")}).Mark(sensitive),
		"inner":  cty.TupleVal([]cty.Value{cty.StringVal("b").Mark(sensitive), cty.StringVal("a")}),
	}
	for expr, want := range map[string]cty.Value{
		`tolist(nums)`:        cty.ListVal([]cty.Value{cty.NumberIntVal(3), cty.NumberIntVal(1), cty.NumberIntVal(3)}),
		`toset(nums)`:         cty.SetVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(3)}),
		`distinct(nums)`:      cty.ListVal([]cty.Value{cty.NumberIntVal(3), cty.NumberIntVal(1)}),
		`tolist(mixed)`:       cty.ListVal([]cty.Value{cty.StringVal("1"), cty.StringVal("a")}),
		`sort(marked)`:        cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")}).Mark(sensitive),
		`tolist(marked)`:      cty.ListVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a")}).Mark(sensitive),
		`tolist(inner)`:       cty.ListVal([]cty.Value{cty.StringVal("b").Mark(sensitive), cty.StringVal("a")}),
		`setunion(nums, [7])`: cty.SetVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(3), cty.NumberIntVal(7)}),
	} {
		got, diags := evalExpr(t, expr, vars)
		if diags.HasErrors() {
			t.Errorf("%s: %s", expr, diags.Error())
			continue
		}
		if !got.RawEquals(want) {
			t.Errorf("%s = %#v, want %#v", expr, got, want)
		}
	}
}

// BenchmarkToListLongTuple: tolist and distinct of a 20,000-element for expression's tuple
// (15 s before the tuple was made a list directly).
func BenchmarkToListLongTuple(b *testing.B) {
	for _, expr := range []string{`length(tolist(flatten([for a in range(20) : [for b in range(1000) : b]])))`, `length(distinct(flatten([for a in range(20) : [for b in range(1000) : b]])))`} {
		b.Run(expr[7:13], func(b *testing.B) {
			for b.Loop() {
				if _, diags := evalExpr(&testing.T{}, expr, nil); diags.HasErrors() {
					b.Fatal(diags.Error())
				}
			}
		})
	}
}

// TestErrorsNeverQuoteSensitiveArguments calls every function with a sensitive string in each
// argument's place (the others filled with a string, a number, a list or a bool): no error may
// quote it, in whole or in part. jsondecode quoted its first character, formatdate, timeadd and
// uuidv5 the whole value; the log scrubber catches whole values only.
func TestErrorsNeverQuoteSensitiveArguments(t *testing.T) {
	const value = "q9Zsecretq9Z"
	sec := cty.StringVal(value).Mark(sensitive)
	fills := []cty.Value{cty.StringVal("x"), cty.NumberIntVal(1), cty.ListVal([]cty.Value{cty.StringVal("a")}), cty.True}
	for name, f := range Table() {
		n := len(f.Params())
		if f.VarParam() != nil {
			n++
		}
		for i := range n {
			for _, fill := range fills {
				args := slices.Repeat([]cty.Value{fill}, n)
				args[i] = sec
				_, err := f.Call(args)
				if err == nil {
					continue
				}
				if msg := err.Error(); strings.Contains(msg, "q9Z") || strings.Contains(msg, "secret") || strings.Contains(msg, "'q'") {
					t.Errorf("%s with a sensitive argument %d: the error quotes it: %s", name, i, msg)
				}
			}
		}
	}
}
