package plan

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/lang"
)

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{500 * time.Millisecond, "500ms"},
		{45 * time.Second, "45s"},
		{2 * time.Minute, "2m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + 30*time.Second, "1h0m30s"},
		{25 * time.Hour, "25h"},
		{1500 * time.Millisecond, "1.5s"},
	} {
		if got := FormatDuration(c.d); got != c.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestDescribeRetry(t *testing.T) {
	for _, c := range []struct {
		r    Retry
		want string
	}{
		{Retry{Attempts: 1, Backoff: "exponential", InitialDelay: "1s", MaxDelay: "1m"}, "1 attempt (no retry)"},
		{Retry{Attempts: 0}, "1 attempt (no retry)"},
		{Retry{Attempts: 2, Backoff: "fixed", InitialDelay: "5s", MaxDelay: "1m"}, "2 attempts, fixed delay 5s"},
		{Retry{Attempts: 4, Backoff: "exponential", InitialDelay: "1s", MaxDelay: "30s"}, "4 attempts, exponential backoff 1s to 30s"},
	} {
		if got := describeRetry(c.r); got != c.want {
			t.Errorf("describeRetry(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

// TestGrants: the block narrows the manifest's hosts and paths where it sets them, and each limit
// is the smaller of the two, 0 meaning none.
func TestGrants(t *testing.T) {
	m := &registry.Manifest{}
	m.Capabilities.AllowedHosts = []string{"a.example", "b.example"}
	m.Capabilities.AllowedPaths = []string{"/data"}
	m.Limits.MaxMemory = "64MiB"
	m.Limits.MaxFuel = 1000
	for _, c := range []struct {
		name  string
		m     *registry.Manifest
		block lang.Component
		want  Capabilities
	}{
		{"not installed: the block alone", nil, lang.Component{AllowedHosts: []string{"x"}, MaxFuel: 7},
			Capabilities{AllowedHosts: []string{"x"}, MaxFuel: 7}},
		{"the manifest's grant", m, lang.Component{},
			Capabilities{AllowedHosts: []string{"a.example", "b.example"}, AllowedPaths: []string{"/data"}, MaxMemory: 64 << 20, MaxFuel: 1000}},
		{"narrowed", m, lang.Component{AllowedHosts: []string{"a.example"}, AllowedPaths: []string{}, MaxMemory: 1 << 20, MaxFuel: 5000},
			Capabilities{AllowedHosts: []string{"a.example"}, AllowedPaths: []string{}, MaxMemory: 1 << 20, MaxFuel: 1000}},
	} {
		got := Grants(c.m, &c.block)
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, *got, c.want)
		}
	}
	for _, c := range []struct{ a, b, want int64 }{{0, 0, 0}, {0, 5, 5}, {5, 0, 5}, {3, 5, 3}, {5, 3, 3}} {
		if got := smallerLimit(c.a, c.b); got != c.want {
			t.Errorf("smallerLimit(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestRenderValue: values render in HCL syntax, unknown parts as (known after apply) and
// sensitive ones as (sensitive), keys that are not identifiers quoted, nested lines indented.
func TestRenderValue(t *testing.T) {
	secret := cty.StringVal("hunter2").Mark(lang.Sensitive)
	for _, c := range []struct {
		name string
		v    cty.Value
		want string
	}{
		{"string", cty.StringVal(`say "hi"` + "\n"), `"say \"hi\"\n"`},
		{"template-like string", cty.StringVal("${x}"), `"$${x}"`},
		{"number", cty.NumberFloatVal(2.5), "2.5"},
		{"bool", cty.True, "true"},
		{"null", cty.NullVal(cty.String), "null"},
		{"unknown", cty.UnknownVal(cty.String), "(known after apply)"},
		{"sensitive", secret, "(sensitive)"},
		{"empty list", cty.ListValEmpty(cty.String), "[]"},
		{"empty object", cty.EmptyObjectVal, "{}"},
		{"list", cty.ListVal([]cty.Value{cty.StringVal("a"), cty.UnknownVal(cty.String)}), "[\n    \"a\",\n    (known after apply),\n  ]"},
		{"set", cty.SetVal([]cty.Value{cty.NumberIntVal(1)}), "[\n    1,\n  ]"},
		{"object", cty.ObjectVal(map[string]cty.Value{
			"id": cty.NumberIntVal(7), "a-b": cty.True, "two words": cty.StringVal("x"), "9lives": cty.NullVal(cty.Bool),
			"nested": cty.MapVal(map[string]cty.Value{"k": secret}),
		}), "{\n    \"9lives\"    = null\n    a-b         = true\n    id          = 7\n    nested      = {\n      k = (sensitive)\n    }\n    \"two words\" = \"x\"\n  }"},
		{"marked list", cty.ListVal([]cty.Value{cty.StringVal("a")}).Mark(lang.Sensitive), "(sensitive)"},
	} {
		if got := RenderValue(c.v, "  "); got != c.want {
			t.Errorf("%s: RenderValue =\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// TestValueJSON: JSON-ready values keep numbers exact, and hide unknown and sensitive parts at
// any depth; UnknownJSON turns them into null and lists their JSON Pointers, keys escaped.
func TestValueJSON(t *testing.T) {
	// Neither an int64 nor a float64: written with all its digits.
	big := cty.MustParseNumberVal("123456789012345678901234567890")
	v := cty.ObjectVal(map[string]cty.Value{
		"n":    cty.NumberIntVal(42),
		"f":    cty.NumberFloatVal(0.1),
		"big":  big,
		"s":    cty.StringVal("x"),
		"b":    cty.False,
		"null": cty.NullVal(cty.String),
		"list": cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.UnknownVal(cty.Number)}),
		"a/b":  cty.ObjectVal(map[string]cty.Value{"~k": cty.StringVal("s").Mark(lang.Sensitive)}),
		"u":    cty.DynamicVal,
	})
	b, err := json.Marshal(ValueJSON(v))
	must(t, err)
	want := `{"a/b":{"~k":{"sensitive":true}},"b":false,"big":1.2345678901234567890123456789e+29,"f":0.1,"list":["a",{"unknown":true}],"n":42,"null":null,"s":"x","u":{"unknown":true}}`
	if string(b) != want {
		t.Errorf("ValueJSON =\n%s\nwant\n%s", b, want)
	}

	raw, ptrs, err := UnknownJSON(v)
	must(t, err)
	wantRaw := `{"a/b":{"~k":null},"b":false,"big":1.2345678901234567890123456789e+29,"f":0.1,"list":["a",null],"n":42,"null":null,"s":"x","u":null}`
	if string(raw) != wantRaw {
		t.Errorf("UnknownJSON =\n%s\nwant\n%s", raw, wantRaw)
	}
	got := map[string]bool{}
	for _, p := range ptrs {
		got[p] = true
	}
	if !reflect.DeepEqual(got, map[string]bool{"/a~1b/~0k": true, "/list/1": true, "/u": true}) {
		t.Errorf("UnknownJSON pointers %v", ptrs)
	}
	// A wholly sensitive value is hidden at the root.
	if raw, ptrs, _ := UnknownJSON(cty.StringVal("s").Mark(lang.Sensitive)); string(raw) != "null" || len(ptrs) != 1 || ptrs[0] != "" {
		t.Errorf("UnknownJSON of a sensitive string = %s %v", raw, ptrs)
	}
}

func TestRenderJSONish(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]bool{"sensitive": true}, "(sensitive)"},
		{map[string]bool{"unknown": true}, "(known after apply)"},
		{true, "true"},
		{false, "false"},
		{json.Number("3"), "3"},
	} {
		if got := renderJSONish(c.v); got != c.want {
			t.Errorf("renderJSONish(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}
