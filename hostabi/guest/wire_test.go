package guest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// requests are typical requests as the host sends them, and unusual ones the fast path must
// either read exactly as encoding/json does or leave to it.
var requests = []string{
	`{"context":{"attempt":1,"execution_id":"01JDX3J1V8W6Z3Q8B2N4K5M6P7","node":"task.upper","task_id":"01JDX3J1V8W6Z3Q8B2N4K5M6P8","workflow":"text"},"input":{"text":"x"},"kind":"task","name":"upper","state":null}`,
	`{"kind":"task","name":"t","input":{"a":[1,2.5,-3e-2,true,false,null,{"b":"c\"\\\/\b\f\n\r\t\u00e9"}]},"context":{"iteration":3,"attempt":2}}`,
	`{"kind":"task","name":"t","state":{"cursor":"abc"},"context":{"iteration":null}}`,
	` { "kind" : "task" , "name" : "t" , "future" : [ { } , [ ] ] , "input" : "x" } `,
	`{"kind":"task","name":"t","context":{"attempt":1},"context":{"node":"n"}}`,
	`{"kind":"task","kind":"trigger","name":"t"}`,
	`{"KIND":"task","name":"t"}`,
	`{"kind":"task","name":"t","context":{"Attempt":2}}`,
	`{"kind":"trigger","name":"tick","event":{"type":"poll"}}`,
	`{"kind":"t\u0061sk","name":"t"}`,
	`{"kind":"task","name":"é"}`,
	`{"kind":null,"name":"t"}`,
	`{"kind":"task","name":"t","context":{"attempt":1.5}}`,
	`{"kind":"task","name":"t","context":{"attempt":99999999999999999999}}`,
	`{"kind":"task","name":"t","context":{"attempt":"1"}}`,
	`{"kind":"task","name":"t","context":null}`,
	`{"kind":"task","name":"t","input":01}`,
	"{\"kind\":\"task\",\"name\":\"t\",\"input\":\"\x01\"}",
	`{"kind":"task","name":"t","input":"bad \q escape"}`,
	"{\"kind\":\"task\",\"name\":\"t\",\"input\":\"\\ud83d\\ude00 \xff\"}",
	`{"kind":"task","name":"t","input":[1,]}`,
	`{"kind":"task","name":"t"} x`,
	`{"kind":"task","name":"t",}`,
	`{"kind":`,
	`null`,
	`[]`,
	``,
	`{}`,
}

// FuzzParseRequest: whatever the fast path accepts, encoding/json accepts too and decodes to
// the same request.
func FuzzParseRequest(f *testing.F) {
	for _, r := range requests {
		f.Add([]byte(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast request
		if !parseRequest(data, &fast) {
			return
		}
		var slow request
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("the fast path accepted %q, which encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast path     %+v\nencoding/json %+v", data, fast, slow)
		}
	})
}

// TestParseRequestFastPath: the requests a host usually sends take the fast path (else it
// would be there for nothing).
func TestParseRequestFastPath(t *testing.T) {
	for _, r := range requests[:6] {
		var req request
		if !parseRequest([]byte(r), &req) {
			t.Errorf("%s: left to encoding/json", r)
		}
	}
}

// responses are answers of every type, typical and unusual.
var responses = []response{
	{Type: "success", Output: json.RawMessage(`{"length":1,"text":"X"}`)},
	{Type: "success", Output: json.RawMessage(` { "a" : [ 1 , "<b>&" ] } `)},
	{Type: "skip", Reason: "nothing to do <here> & \"there\"\n"},
	{Type: "branch", Selected: "yes", Output: json.RawMessage(`{}`)},
	{Type: "error", Kind: "retryable", Message: "timeout\u2028é\x00", BackoffHintMS: 1500, PartialOutput: json.RawMessage(`[1]`)},
	{Type: "completed", Payload: json.RawMessage(`{"n":"\u2029"}`)},
	{Type: "continue", State: json.RawMessage(`{"c":1}`), DelayMS: -5},
	{Type: "success", Output: json.RawMessage(`{not json}`)},
	{Type: "\xff"},
}

// FuzzResponseJSON: what the fast path writes is what json.Marshal writes, byte for byte, and
// it writes nothing json.Marshal refuses.
func FuzzResponseJSON(f *testing.F) {
	for _, r := range responses {
		f.Add(r.Type, []byte(r.Output), r.Reason, r.Message, []byte(r.State), r.DelayMS)
	}
	f.Fuzz(func(t *testing.T, typ string, output []byte, reason, message string, state []byte, delay int64) {
		r := response{Type: typ, Output: output, Reason: reason, Selected: reason, State: state,
			DelayMS: delay, Kind: message, Message: message, BackoffHintMS: delay,
			PartialOutput: state, Payload: output}
		fast, ok := r.appendJSON(nil)
		slow, err := json.Marshal(r)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%+v: the fast path wrote %s; json.Marshal refuses it: %v", r, fast, err)
		}
		if string(fast) != string(slow) {
			t.Fatalf("%+v:\nfast path    %s\njson.Marshal %s", r, fast, slow)
		}
	})
}

// TestResponseJSONFastPath: every response but a continue's (its progress) and one whose raw
// message is not JSON takes the fast path, and writes json.Marshal's bytes.
func TestResponseJSONFastPath(t *testing.T) {
	for _, r := range responses {
		fast, ok := r.appendJSON(nil)
		slow, err := json.Marshal(r)
		if want := err == nil; ok != want {
			t.Errorf("%+v: fast path %t, want %t (json.Marshal: %v)", r, ok, want, err)
			continue
		}
		if ok && string(fast) != string(slow) {
			t.Errorf("%+v:\nfast path    %s\njson.Marshal %s", r, fast, slow)
		}
	}
	p := 0.5
	if _, ok := (response{Type: "continue", Progress: &p}).appendJSON(nil); ok {
		t.Error("a continue's progress took the fast path; it is left to json.Marshal")
	}
}
