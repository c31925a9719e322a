package taskenv

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/schema"
)

func TestCheckOutput(t *testing.T) {
	s, err := schema.Compile("t", []byte(`{"type":"object","properties":{"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["count"]}`))
	if err != nil {
		t.Fatal(err)
	}
	const what = `component t/x@1.0.0 task "go"`
	tests := []struct {
		name   string
		res    outcome.Result
		schema *schema.Schema
		want   string // "" when res passes unchanged
	}{
		{"conforms", outcome.Result{Type: outcome.Success, Output: []byte(`{"count":3}`)}, s, ""},
		{"wrong type", outcome.Result{Type: outcome.Success, Output: []byte(`{"count":"seven"}`)}, s,
			`component t/x@1.0.0 task "go" produced an output that does not match its output_schema: at /count: must be an integer, got string "seven"`},
		{"several", outcome.Result{Type: outcome.Success, Output: []byte(`{"count":"x","tags":[1,2]}`)}, s,
			`at /count: must be an integer, got string "x" (and 2 more problems)`},
		{"one more", outcome.Result{Type: outcome.Success, Output: []byte(`{"count":"x","tags":[1]}`)}, s,
			`at /count: must be an integer, got string "x" (and 1 more problem)`},
		{"branch", outcome.Result{Type: outcome.Branch, Selected: "a", Output: []byte(`{"tags":[]}`)}, s,
			`at the output itself: attribute "count" is required`},
		{"absent output is null", outcome.Result{Type: outcome.Success}, s,
			`at the output itself: must be an object, got null`},
		{"no schema", outcome.Result{Type: outcome.Success, Output: []byte(`"anything"`)}, nil, ""},
		{"continue is progress", outcome.Result{Type: outcome.Continue, Output: []byte(`{"half":true}`)}, s, ""},
		{"a failure stays", outcome.Result{Type: outcome.Failure, Kind: outcome.Retryable, Message: "later"}, s, ""},
		{"skip", outcome.Result{Type: outcome.Skip, Reason: "nothing to do"}, s, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var into task.DecodedOutput
			got := CheckOutputInto(tc.res, tc.schema, what, &into)
			if plain := CheckOutput(tc.res, tc.schema, what); plain.Type != got.Type || plain.Message != got.Message {
				t.Errorf("CheckOutput %+v, CheckOutputInto %+v; want the same result", plain, got)
			}
			// Only a checked output that matched is handed over, as the check decoded it.
			checked := tc.schema != nil && (tc.res.Type == outcome.Success || tc.res.Type == outcome.Branch)
			if wantSet := checked && tc.want == ""; into.Set != wantSet {
				t.Errorf("decoded output handed over = %v; want %v", into.Set, wantSet)
			}
			if tc.want == "" {
				if got.Type != tc.res.Type || got.Message != tc.res.Message {
					t.Fatalf("%+v; want %+v unchanged", got, tc.res)
				}
				if into.Set {
					if d, ok := into.Doc.(map[string]any); !ok || d["count"] != json.Number("3") {
						t.Errorf("decoded output %#v; want count as json.Number 3", into.Doc)
					}
				}
				return
			}
			if got.Type != outcome.Failure || got.Kind != outcome.Fatal || !strings.Contains(got.Message, tc.want) {
				t.Fatalf("%+v; want a fatal failure with %q", got, tc.want)
			}
		})
	}
}

// BenchmarkCheckOutput is the per-attempt cost of holding an output to its output_schema: a
// small object, as most task outputs are, and one of 1,000 items.
func BenchmarkCheckOutput(b *testing.B) {
	s, err := schema.Compile("bench", []byte(`{"type":"object","properties":{"count":{"type":"integer"},"text":{"type":"string"},
		"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["id"]}}},"required":["count"]}`))
	if err != nil {
		b.Fatal(err)
	}
	var items []string
	for i := range 1000 {
		items = append(items, `{"id":`+strconv.Itoa(i)+`,"name":"item"}`)
	}
	for _, bc := range []struct{ name, output string }{
		{"small", `{"count":3,"text":"HELLO"}`},
		{"1000-items", `{"count":1000,"items":[` + strings.Join(items, ",") + `]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			res := outcome.Result{Type: outcome.Success, Output: []byte(bc.output)}
			b.SetBytes(int64(len(bc.output)))
			for b.Loop() {
				if got := CheckOutput(res, s, "bench"); got.Type != outcome.Success {
					b.Fatal(got.Message)
				}
			}
		})
	}
}
