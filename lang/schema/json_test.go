package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func strVal(s string) cty.Value { return cty.StringVal(s) }

func TestJSONRoundTrip(t *testing.T) {
	docs := []string{
		`null`,
		`true`,
		`"text"`,
		`42`,
		`-1.25`,
		`12345678901234567890123`,
		`{}`,
		`[]`,
		`{"a":[1,"two",false,null,{"b":{}}],"c":"d"}`,
		`[[1],[],{"x":0.5}]`,
	}
	for _, doc := range docs {
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			t.Fatal(err)
		}
		v, err := FromJSON(x)
		if err != nil {
			t.Errorf("FromJSON(%s): %v", doc, err)
			continue
		}
		back, err := ToJSON(v)
		if err != nil {
			t.Errorf("ToJSON(FromJSON(%s)): %v", doc, err)
			continue
		}
		if !reflect.DeepEqual(back, x) {
			t.Errorf("round trip of %s: got %#v, want %#v", doc, back, x)
		}
		out, err := json.Marshal(back)
		if err != nil || string(out) != doc {
			t.Errorf("round trip of %s encodes as %s (%v)", doc, out, err)
		}
	}
}

func TestFromJSONTypes(t *testing.T) {
	tests := []struct {
		in   any
		want cty.Value
	}{
		{float64(1.5), cty.NumberFloatVal(1.5)},
		{3, cty.NumberIntVal(3)},
		{int64(-3), cty.NumberIntVal(-3)},
		{map[string]any{"a": []any{}}, cty.ObjectVal(map[string]cty.Value{"a": cty.EmptyTupleVal})},
		{nil, cty.NullVal(cty.DynamicPseudoType)},
	}
	for _, tt := range tests {
		got, err := FromJSON(tt.in)
		if err != nil || !got.RawEquals(tt.want) {
			t.Errorf("FromJSON(%#v) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []any{struct{}{}, json.Number("x"), []any{make(chan int)}} {
		if _, err := FromJSON(bad); err == nil {
			t.Errorf("FromJSON(%#v) succeeded", bad)
		}
	}
}

func TestToJSON(t *testing.T) {
	got, err := ToJSON(cty.ObjectVal(map[string]cty.Value{
		"list": cty.ListVal([]cty.Value{cty.StringVal("a")}),
		"set":  cty.SetVal([]cty.Value{cty.NumberIntVal(1)}),
		"map":  cty.MapVal(map[string]cty.Value{"k": cty.True}),
		"null": cty.NullVal(cty.String),
	}))
	want := map[string]any{
		"list": []any{"a"},
		"set":  []any{json.Number("1")},
		"map":  map[string]any{"k": true},
		"null": nil,
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ToJSON = %#v, %v; want %#v", got, err, want)
	}

	bad := []struct {
		v    cty.Value
		want string
	}{
		{cty.ObjectVal(map[string]cty.Value{"a": cty.UnknownVal(cty.String)}), "not known"},
		{cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("s").Mark("sensitive")}), "marked"},
		{cty.PositiveInfinity, "infinite"},
	}
	for _, tt := range bad {
		if _, err := ToJSON(tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ToJSON(%#v) error = %v, want one containing %q", tt.v, err, tt.want)
		}
	}
}
