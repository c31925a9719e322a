package schema

import (
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
