package guest

import (
	"encoding/json"
	"reflect"
)

// prepare builds, ahead of any request, the encoding/json codecs that answering one needs:
// those of the request and response, of the outputs handlers usually return (maps and slices
// of strings, numbers, booleans), and of each task's input type. encoding/json builds a type's
// codec on first use and keeps it; in a snapshot taken after prepare (preinit_wasip1.go) every
// attempt finds them built, which saves the Go text component three quarters of its call.
//
// It runs no handler and no method of a component's types: an input type with its own
// UnmarshalJSON is left alone.
func (r *registry) prepare() {
	var req request
	_ = json.Unmarshal([]byte(sampleRequest), &req)
	progress := 0.5
	_, _ = json.Marshal(response{Type: "continue", Output: json.RawMessage(`{}`), Progress: &progress})
	_, _ = json.Marshal(map[string]any{
		"string": "", "int": 1, "float": 0.5, "bool": true, "null": nil,
		"list": []any{""}, "map": map[string]any{"": ""},
		"strings": []string{""}, "ints": []int{1}, "string map": map[string]string{"": ""},
	})
	for _, warm := range r.warmers {
		warm()
	}
}

// sampleRequest has every field of request, so that decoding it builds every codec a request
// needs (TestSampleRequestIsComplete keeps it complete).
const sampleRequest = `{"kind":"task","name":"n","input":{},"state":{},
"context":{"execution_id":"e","workflow":"w","node":"task.n","task_id":"t","attempt":1,"iteration":0},
"event":{"type":"webhook","request":{"method":"POST","path":"/","query":{"q":["v"]},"headers":{"h":"v"},"body_base64":""}}}`

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// warmInput builds the decoder of a task's input type In, when it is a struct whose decoding
// runs no code of the component's.
func warmInput[In any]() {
	t := reflect.TypeFor[In]()
	if t.Kind() != reflect.Struct || t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return
	}
	var in In
	_ = json.Unmarshal([]byte(`{}`), &in)
}
