package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestValidateJSON(t *testing.T) {
	s, err := Compile("test.output", []byte(`{
		"type": "object",
		"properties": {
			"count": {"type": "integer"},
			"items": {"type": "array", "items": {"type": "string"}},
			"a/b~c": {"type": "boolean"}
		},
		"required": ["count"]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, doc string
		want      []string // "pointer: message" of each problem
	}{
		{"conforms", `{"count": 3, "items": ["a"]}`, nil},
		{"wrong type", `{"count": "seven"}`, []string{`/count: must be an integer, got string "seven"`}},
		{"a fraction", `{"count": 1.5}`, []string{`/count: must be an integer, got number 1.5`}},
		{"in an array", `{"count": 1, "items": ["a", 2]}`, []string{`/items/1: must be a string, got number 2`}},
		{"escaped key", `{"count": 1, "a/b~c": "yes"}`, []string{`/a~1b~0c: must be a boolean, got string "yes"`}},
		{"missing", `{}`, []string{`: attribute "count" is required`}},
		{"not an object", `[1]`, []string{`: must be an object, got array`}},
		{"empty is null", ``, []string{`: must be an object, got null`}},
		{"sorted by path", `{"count": "x", "items": [1]}`, []string{`/count: must be an integer, got string "x"`, `/items/0: must be a string, got number 1`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := s.ValidateJSON([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Pointer+": "+p.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
	if _, err := s.ValidateJSON([]byte(`{"count": `)); err == nil {
		t.Error("a document that is not JSON validated")
	}
}

// TestDecodeJSON: the decoding ValidateJSON checks is what a caller converts (FromJSON), so
// numbers stay exact, an empty document is null and trailing data is refused; checking the
// decoded document with ValidateDoc leaves it as it was.
func TestDecodeJSON(t *testing.T) {
	x, err := DecodeJSON([]byte(` {"count": 123456789012345678901234567890, "f": 0.1} `))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"count": json.Number("123456789012345678901234567890"), "f": json.Number("0.1")}
	if !reflect.DeepEqual(x, want) {
		t.Errorf("decoded %#v; want %#v", x, want)
	}
	s, err := Compile("test.output", []byte(`{"type": "object", "properties": {"count": {"type": "integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ps := s.ValidateDoc(x); len(ps) != 0 {
		t.Errorf("problems %v; want none", ps)
	}
	if !reflect.DeepEqual(x, want) {
		t.Errorf("after ValidateDoc: %#v; want it unchanged", x)
	}
	v, err := FromJSON(x)
	if err != nil || v.GetAttr("count").AsBigFloat().Text('f', 0) != "123456789012345678901234567890" {
		t.Errorf("FromJSON of the decoded document: %#v, %v", v, err)
	}
	if x, err := DecodeJSON([]byte("  \n")); err != nil || x != nil {
		t.Errorf("an empty document decoded to %#v, %v; want null", x, err)
	}
	if _, err := DecodeJSON([]byte(`{} {}`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("trailing data: %v; want a not-valid-JSON error", err)
	}
}
