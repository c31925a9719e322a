package builtin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang/schema"
)

func TestBuiltinNames(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() = %q, not sorted", names)
	}
	for _, n := range names {
		s, ok := InputSchema(n)
		if !ok || s == nil {
			t.Errorf("InputSchema(%q) = %v, %v", n, s, ok)
			continue
		}
		if !json.Valid(s.Raw()) {
			t.Errorf("InputSchema(%q).Raw() is not JSON", n)
		}
	}
	if _, ok := InputSchema("nope"); ok {
		t.Error(`InputSchema("nope") is ok`)
	}
	a, _ := InputSchema("http")
	b, _ := InputSchema("http")
	if a != b {
		t.Error("InputSchema compiles a schema more than once")
	}
}

func TestBuiltinSchemas(t *testing.T) {
	str := cty.StringVal
	tests := []struct {
		builtin string
		name    string
		in      cty.Value
		want    cty.Value // the coerced value; cty.NilVal when it is the input
		// problems are the expected problems, or when contains is set, substrings of the only one.
		problems []string
		contains bool
	}{
		// http
		{builtin: "http", name: "minimal", in: obj(map[string]cty.Value{"url": str("https://example.com/x")})},
		{
			builtin: "http", name: "everything",
			in: obj(map[string]cty.Value{
				"method":             str("POST"),
				"url":                str("http://example.com"),
				"headers":            obj(map[string]cty.Value{"Accept": str("application/json"), "X-Count": cty.NumberIntVal(3)}),
				"body":               obj(map[string]cty.Value{"a": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), str("x")})}),
				"timeout":            str("30s"),
				"max_response_bytes": str("512KiB"),
				"allow_hosts":        cty.TupleVal([]cty.Value{str("169.254.169.254")}),
			}),
			want: obj(map[string]cty.Value{
				"method":             str("POST"),
				"url":                str("http://example.com"),
				"headers":            obj(map[string]cty.Value{"Accept": str("application/json"), "X-Count": str("3")}),
				"body":               obj(map[string]cty.Value{"a": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), str("x")})}),
				"timeout":            str("30s"),
				"max_response_bytes": str("512KiB"),
				"allow_hosts":        cty.ListVal([]cty.Value{str("169.254.169.254")}),
			}),
		},
		{builtin: "http", name: "body string", in: obj(map[string]cty.Value{"url": str("https://x"), "body": str("hi")})},
		{builtin: "http", name: "size in bytes", in: obj(map[string]cty.Value{"url": str("https://x"), "max_response_bytes": cty.NumberIntVal(1024)})},
		{
			builtin: "http", name: "unknown url at plan time",
			in: obj(map[string]cty.Value{"url": cty.UnknownVal(cty.String), "headers": cty.DynamicVal, "timeout": cty.UnknownVal(cty.String)}),
		},
		{builtin: "http", name: "missing url", in: obj(map[string]cty.Value{"method": str("GET")}), problems: []string{`attribute "url" is required`}},
		{
			builtin: "http", name: "unknown attribute",
			in:       obj(map[string]cty.Value{"url": str("https://x"), "hedaers": cty.EmptyObjectVal}),
			problems: []string{`unknown attribute "hedaers"; did you mean "headers"?`},
		},
		{
			builtin: "http", name: "method",
			in:       obj(map[string]cty.Value{"url": str("https://x"), "method": str("FETCH")}),
			problems: []string{`method: must be one of "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", got string "FETCH"`},
		},
		{
			builtin: "http", name: "not an http URL",
			in:       obj(map[string]cty.Value{"url": str("ftp://example.com")}),
			problems: []string{"url: must be a valid http or https URL", `"ftp"`}, contains: true,
		},
		{
			builtin: "http", name: "URL without scheme",
			in:       obj(map[string]cty.Value{"url": str("example.com/x")}),
			problems: []string{"url: must be a valid http or https URL", "no scheme"}, contains: true,
		},
		{
			builtin: "http", name: "header that is not a string",
			in:       obj(map[string]cty.Value{"url": str("https://x"), "headers": obj(map[string]cty.Value{"Accept": cty.EmptyTupleVal})}),
			problems: []string{`headers.Accept: must be a string, got array`},
		},
		{
			builtin: "http", name: "bad timeout",
			in:       obj(map[string]cty.Value{"url": str("https://x"), "timeout": str("soon")}),
			problems: []string{`timeout: must be a valid duration, got string "soon"`}, contains: true,
		},
		{
			builtin: "http", name: "bad size",
			in:       obj(map[string]cty.Value{"url": str("https://x"), "max_response_bytes": str("10 parsecs")}),
			problems: []string{`max_response_bytes: must be a valid size`, "KiB"}, contains: true,
		},
		{
			builtin: "http", name: "negative size",
			in:       obj(map[string]cty.Value{"url": str("https://x"), "max_response_bytes": cty.NumberIntVal(-1)}),
			problems: []string{`max_response_bytes: must be at least 0, got number -1`},
		},

		// transform
		{builtin: "transform", name: "anything", in: obj(map[string]cty.Value{"a": cty.NumberIntVal(1), "b": cty.TupleVal([]cty.Value{str("x"), cty.True})})},
		{builtin: "transform", name: "empty", in: cty.EmptyObjectVal},
		{builtin: "transform", name: "map", in: cty.MapVal(map[string]cty.Value{"a": str("1")})},
		{builtin: "transform", name: "not an object", in: str("x"), problems: []string{`must be an object, got string "x"`}},

		// sleep
		{builtin: "sleep", name: "duration", in: obj(map[string]cty.Value{"duration": str("1h30m")})},
		{builtin: "sleep", name: "short", in: obj(map[string]cty.Value{"duration": str("500ms")})},
		{builtin: "sleep", name: "missing", in: cty.EmptyObjectVal, problems: []string{`attribute "duration" is required`}},
		{
			builtin: "sleep", name: "abc",
			in:       obj(map[string]cty.Value{"duration": str("abc")}),
			problems: []string{`duration: must be a valid duration, got string "abc"`, `"1h30m"`}, contains: true,
		},
		{
			builtin: "sleep", name: "negative",
			in:       obj(map[string]cty.Value{"duration": str("-1s")}),
			problems: []string{`duration: must be a valid duration, got string "-1s": a duration must not be negative`},
		},
		{
			builtin: "sleep", name: "number is not a duration",
			in:       obj(map[string]cty.Value{"duration": cty.NumberIntVal(5)}),
			want:     obj(map[string]cty.Value{"duration": str("5")}),
			problems: []string{`duration: must be a valid duration, got string "5"`}, contains: true,
		},

		// fail
		{builtin: "fail", name: "message", in: obj(map[string]cty.Value{"message": str("boom")})},
		{builtin: "fail", name: "retryable", in: obj(map[string]cty.Value{"message": str("boom"), "kind": str("retryable")})},
		{builtin: "fail", name: "missing message", in: obj(map[string]cty.Value{"kind": str("fatal")}), problems: []string{`attribute "message" is required`}},
		{
			builtin: "fail", name: "bad kind",
			in:       obj(map[string]cty.Value{"message": str("boom"), "kind": str("oops")}),
			problems: []string{`kind: must be one of "fatal", "retryable", got string "oops"`},
		},
		{
			builtin: "fail", name: "message from a secret",
			in:       obj(map[string]cty.Value{"message": str("boom").Mark("sensitive"), "kind": str("oops").Mark("sensitive")}),
			want:     obj(map[string]cty.Value{"message": str("boom").Mark("sensitive"), "kind": str("oops").Mark("sensitive")}),
			problems: []string{`kind: must be one of "fatal", "retryable"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.builtin+"/"+tt.name, func(t *testing.T) {
			s, ok := InputSchema(tt.builtin)
			if !ok {
				t.Fatalf("no builtin %q", tt.builtin)
			}
			got, problems := s.Check(tt.in)
			want := tt.want
			if want == cty.NilVal {
				want = tt.in
			}
			if !got.RawEquals(want) {
				t.Errorf("Check:\n got  %#v\n want %#v", got, want)
			}
			ps := strs(problems)
			if !tt.contains {
				if !slices.Equal(ps, tt.problems) {
					t.Errorf("problems:\n got  %q\n want %q", ps, tt.problems)
				}
				return
			}
			if len(ps) != 1 {
				t.Fatalf("problems: got %q, want one", ps)
			}
			for _, sub := range tt.problems {
				if !strings.Contains(ps[0], sub) {
					t.Errorf("problem %q does not mention %q", ps[0], sub)
				}
			}
		})
	}
}

func BenchmarkCheckHTTP(b *testing.B) {
	s, _ := InputSchema("http")
	in := cty.ObjectVal(map[string]cty.Value{
		"method": cty.StringVal("POST"),
		"url":    cty.StringVal("https://api.example.com/v1/items"),
		"headers": cty.ObjectVal(map[string]cty.Value{
			"Accept":        cty.StringVal("application/json"),
			"Authorization": cty.StringVal("Bearer abc").Mark("sensitive"),
		}),
		"body": cty.ObjectVal(map[string]cty.Value{
			"name":  cty.StringVal("widget"),
			"count": cty.NumberIntVal(3),
			"tags":  cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")}),
		}),
		"timeout":            cty.StringVal("30s"),
		"max_response_bytes": cty.StringVal("10MiB"),
	})
	b.ReportAllocs()
	for b.Loop() {
		if _, ps := s.Check(in); len(ps) != 0 {
			b.Fatal(ps)
		}
	}
}

// Schemas are shared by every run of a workflow; checking must not write to them.
func TestCheckConcurrently(t *testing.T) {
	in := cty.ObjectVal(map[string]cty.Value{
		"url":     cty.StringVal("https://example.com"),
		"timeout": cty.StringVal("nope"),
		"headers": cty.ObjectVal(map[string]cty.Value{"X": cty.NumberIntVal(1)}),
	})
	done := make(chan []schema.Problem)
	for range 8 {
		go func() {
			s, _ := InputSchema("http")
			_, ps := s.Check(in)
			done <- ps
		}()
	}
	for range 8 {
		if ps := <-done; len(ps) != 1 || ps[0].Path != "timeout" {
			t.Errorf("problems = %v", ps)
		}
	}
}

func obj(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }

func strs(ps []schema.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// TestTable: every builtin of the table has a schema, an implementation, and answers through
// Runner.Run; only transform is an identity.
func TestTable(t *testing.T) {
	for _, name := range Names() {
		b, ok := Lookup(name)
		if !ok || b.Name != name || b.Schema() == nil || b.run == nil {
			t.Errorf("Lookup(%q) = %+v, %v", name, b, ok)
		}
		if b.Identity != (name == "transform") {
			t.Errorf("%s: Identity = %v", name, b.Identity)
		}
	}
	if b, ok := Lookup("builtin.transform"); !ok || b.Name != "transform" {
		t.Errorf(`Lookup("builtin.transform") = %+v, %v`, b, ok)
	}
}

// TestIsPure: only the builtins without an effect are pure; an unknown name is not.
func TestIsPure(t *testing.T) {
	want := map[string]bool{
		"transform": true, "builtin.transform": true,
		"fail":  true,
		"http":  false,
		"sleep": false,
		"nope":  false,
	}
	for name, w := range want {
		if got := IsPure(name); got != w {
			t.Errorf("IsPure(%q) = %v, want %v", name, got, w)
		}
	}
	for _, name := range Names() {
		if _, ok := want[name]; !ok {
			t.Errorf("builtin %s: its purity is not checked here; add it to the table", name)
		}
	}
}

// TestSchemasPassTheirMetaschema compiles every embedded schema with the metaschema check that
// InputSchema skips (schema.CompileTrusted): each file in schemas/ must pass it, and each must
// be a builtin's.
func TestSchemasPassTheirMetaschema(t *testing.T) {
	entries, err := schemaDocs.ReadDir("schemas")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(Names()) {
		t.Errorf("%d schema files for %d builtins", len(entries), len(Names()))
	}
	for _, e := range entries {
		doc, err := schemaDocs.ReadFile("schemas/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schema.Compile("builtin."+e.Name(), doc); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		if _, ok := InputSchema(strings.TrimSuffix(e.Name(), ".json")); !ok {
			t.Errorf("%s is not the schema of a builtin", e.Name())
		}
	}
}
