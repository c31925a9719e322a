//go:build !wasip1

package guest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestSampleRequestIsComplete: prepare's sample request names every field of the request on
// the wire, nested ones included, and nothing else, so that decoding it builds every codec a
// request needs. A field added to request (or to its context, event or webhook request) without
// its sample fails here.
func TestSampleRequestIsComplete(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(sampleRequest))
	dec.DisallowUnknownFields()
	var req request
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("the sample request does not decode strictly: %v", err)
	}
	var sample map[string]any
	if err := json.Unmarshal([]byte(sampleRequest), &sample); err != nil {
		t.Fatal(err)
	}
	var missing []string
	var walk func(path string, ty reflect.Type, obj map[string]any)
	walk = func(path string, ty reflect.Type, obj map[string]any) {
		for i := range ty.NumField() {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			v, ok := obj[name]
			if !ok {
				missing = append(missing, path+name)
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				sub, _ := v.(map[string]any)
				walk(path+name+".", ft, sub)
			}
		}
	}
	walk("", reflect.TypeFor[request](), sample)
	if len(missing) > 0 {
		t.Errorf("sampleRequest lacks %v", missing)
	}
}

type preparedIn struct {
	Text string `json:"text"`
}

// customIn decodes itself: prepare must not run its method.
type customIn struct{}

var customCalled bool

func (c *customIn) UnmarshalJSON([]byte) error {
	customCalled = true
	return nil
}

// TestPrepareRunsNoComponentCode: prepare builds codecs without calling a handler or a method
// of an input type, and the registry answers as before afterwards.
func TestPrepareRunsNoComponentCode(t *testing.T) {
	var r registry
	handlerCalled := false
	r.addTask("plain", typedTask(func(_ Context, in preparedIn) (Result, error) {
		handlerCalled = true
		return Success(map[string]any{"text": in.Text}), nil
	}))
	r.warmers = append(r.warmers, warmInput[preparedIn], warmInput[customIn], warmInput[map[string]any], warmInput[string])
	customCalled = false
	r.prepare()
	if handlerCalled || customCalled {
		t.Fatalf("prepare ran component code: handler %t, UnmarshalJSON %t", handlerCalled, customCalled)
	}
	out := r.handle([]byte(`{"kind":"task","name":"plain","input":{"text":"hi"}}`))
	if !handlerCalled || !bytes.Equal(out, []byte(`{"type":"success","output":{"text":"hi"}}`)) {
		t.Fatalf("after prepare: %s (handler called: %t)", out, handlerCalled)
	}
}
