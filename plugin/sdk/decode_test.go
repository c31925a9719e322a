package sdk

import "testing"

func TestDecodeStrict(t *testing.T) {
	type inner struct {
		X int `json:"x"`
	}
	type doc struct {
		Name  string           `json:"name"`
		List  []inner          `json:"list"`
		Map   map[string]inner `json:"map"`
		Inner inner            `json:"inner"`
	}
	tests := []struct {
		input, want, path string
	}{
		{`{"name":"a"}`, "", ""},
		{``, "", ""},
		{`null`, "", ""},
		{`{"name":true}`, `"/name" must be a string, not a boolean`, "/name"},
		{`{"list":[{"x":1},{"x":1.5}]}`, `"/list/1/x" must be an integer, not the number 1.5`, "/list/1/x"},
		{`{"map":{"a/b":{"x":"s"}}}`, `"/map/a~1b/x" must be an integer, not a string`, "/map/a~1b/x"},
		{`{"inner":[1]}`, `"/inner" must be an object, not an array`, "/inner"},
		{`{"list":{}}`, `"/list" must be an array, not an object`, "/list"},
		{`"x"`, `the input must be an object, not a string`, ""},
		{`{"inner":{"y":1}}`, `"/inner/y" is not a known field`, "/inner/y"},
		{`{"inner":{"y":1},"list":[{"y":2}]}`, `unknown field "y"`, ""}, // ambiguous: no path
		{`{"name":"a"} {}`, `unexpected data after the JSON value`, ""},
		{`{"name":`, `unexpected EOF`, ""},
	}
	for _, tt := range tests {
		var d doc
		err := decodeStrict([]byte(tt.input), &d, "the input")
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.input, err)
			}
			continue
		}
		de, ok := err.(*decodeError)
		if !ok || err.Error() != tt.want || de.Path != tt.path {
			t.Errorf("%s: error %v (path %q), want %q (path %q)", tt.input, err, pathOf(de), tt.want, tt.path)
		}
	}
}

func pathOf(de *decodeError) string {
	if de == nil {
		return ""
	}
	return de.Path
}
