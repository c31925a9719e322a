package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/lang/schema"
)

// The output types of TestOutputSchemaAcceptsNil: every way encoding/json writes null.

type nullLeaf struct {
	ID string `json:"id"`
}

type nullBase struct {
	Origin string `json:"origin"`
}

type nullOut struct {
	*nullBase                        // nil: "origin" is left out
	Name      string                 `json:"name"`
	Tags      []string               `json:"tags"`
	Labels    map[string]string      `json:"labels"`
	Parent    *nullLeaf              `json:"parent"`
	Count     *int                   `json:"count"`
	Raw       []byte                 `json:"raw"`
	Any       any                    `json:"any"`
	Leaves    []*nullLeaf            `json:"leaves"`
	Groups    map[string][]string    `json:"groups"`
	ByNumber  map[int]*nullLeaf      `json:"by_number"`
	Matrix    [][]int                `json:"matrix"`
	Kind      *string                `json:"kind" jsonschema:"enum=a,enum=b"`
	Tagged    []int                  `json:"tagged" jsonschema:"nullable"`
	Skipped   []string               `json:"skipped,omitempty"`
	Zeroed    map[string]int         `json:"zeroed,omitzero"`
	Nested    struct{ Items []int }  `json:"nested"`
	Refs      []ArtifactRef          `json:"refs"`
	Free      map[string]interface{} `json:"free"`
}

// nullTree is recursive, so its schema has $defs and $refs.
type nullTree struct {
	Name     string               `json:"name"`
	Children []nullTree           `json:"children"`
	Next     *nullTree            `json:"next"`
	Index    map[string]*nullTree `json:"index"`
}

// sent is the output the SDK sends for out: what a Task returning out answers.
func sent(t *testing.T, out any) []byte {
	t.Helper()
	b, err := marshalOutput(sendable(out))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outputSchema compiles the output schema derived from typ as the engine compiles a plugin's.
func outputSchema(t *testing.T, typ reflect.Type) *schema.Schema {
	t.Helper()
	doc, err := outputSchemaFor(typ)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile("plugin test task "+typ.String()+" output", doc)
	if err != nil {
		t.Fatalf("%s does not compile: %v", doc, err)
	}
	return s
}

// validate checks doc against s with the validator the engine holds outputs to.
func validate(t *testing.T, s *schema.Schema, doc []byte) string {
	t.Helper()
	ps, err := s.ValidateJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, "at "+p.Pointer+": "+p.Message)
	}
	return strings.Join(msgs, "; ")
}

// TestOutputSchemaAcceptsNil: the schema derived from an output type accepts what the SDK sends
// for its zero value and for values holding nil inside (lists, maps, recursive types), and
// still refuses what the type cannot produce.
func TestOutputSchemaAcceptsNil(t *testing.T) {
	one := 1
	kind := "a"
	tests := []struct {
		name string
		out  any
	}{
		{"zero struct", nullOut{}},
		{"nil elements", nullOut{
			nullBase: &nullBase{Origin: "o"}, Count: &one, Kind: &kind, Any: []any{nil},
			Leaves: []*nullLeaf{nil, {ID: "x"}}, Groups: map[string][]string{"g": nil},
			ByNumber: map[int]*nullLeaf{1: nil}, Matrix: [][]int{nil, {1}},
			Refs: []ArtifactRef{{ArtifactID: "sha256:x"}}, Free: map[string]any{"k": nil},
		}},
		{"nil pointer output", (*nullOut)(nil)},
		{"zero tree", nullTree{}},
		{"tree with nil inside", nullTree{Name: "a", Children: []nullTree{{Name: "b"}},
			Next: &nullTree{}, Index: map[string]*nullTree{"x": nil, "y": {}}}},
		{"nil slice output", []nullLeaf(nil)},
		{"nil map output", map[string][]int(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := outputSchema(t, reflect.TypeOf(tt.out))
			doc := sent(t, tt.out)
			if got := validate(t, s, doc); got != "" {
				t.Errorf("the SDK sends %s, which its own output schema %s refuses: %s", doc, s.Raw(), got)
			}
		})
	}

	s := outputSchema(t, reflect.TypeFor[nullOut]())
	zero := string(sent(t, nullOut{}))
	refused := []struct{ doc, want string }{
		{strings.Replace(zero, `"tags":null`, `"tags":3`, 1), "/tags"},
		{strings.Replace(zero, `"tags":null`, `"tags":[1]`, 1), "/tags/0"},
		{strings.Replace(zero, `"kind":null`, `"kind":"c"`, 1), "/kind"},
		{strings.Replace(zero, `"leaves":null`, `"leaves":[{}]`, 1), `"id" is required`},
		{strings.Replace(zero, `"tags":null,`, ``, 1), `"tags" is required`},
		{strings.Replace(zero, `"name":""`, `"name":null`, 1), "/name"},
		{strings.Replace(zero, `"nested":{"Items":null}`, `"nested":null`, 1), "/nested"},
	}
	for _, tt := range refused {
		if tt.doc == zero {
			t.Fatalf("the test's edit did not apply to %s", zero)
		}
		if got := validate(t, s, []byte(tt.doc)); !strings.Contains(got, tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.doc, got, tt.want)
		}
	}
	tree := outputSchema(t, reflect.TypeFor[nullTree]())
	if got := validate(t, tree, []byte(`{"name":"a","children":[{"name":1,"children":null,"next":null,"index":null}],"next":null,"index":null}`)); !strings.Contains(got, "at /children/0/name:") {
		t.Errorf("a tree with a bad child: problems %q", got)
	}
}

// TestOutputSchemaNullForm: a nullable field keeps its properties and items beside a type
// list, where plan-time reference checks look; only a schema that other keywords also decide
// is wrapped in anyOf. Input schemas stay strict.
func TestOutputSchemaNullForm(t *testing.T) {
	doc, err := outputSchemaFor(reflect.TypeFor[nullOut]())
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(doc, &out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"tags":    `{"items":{"type":"string"},"type":["array","null"]}`,
		"parent":  `{"properties":{"id":{"type":"string"}},"additionalProperties":false,"required":["id"],"type":["object","null"]}`,
		"leaves":  `{"items":{"properties":{"id":{"type":"string"}},"additionalProperties":false,"required":["id"],"type":["object","null"]},"type":["array","null"]}`,
		"kind":    `{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}]}`,
		"tagged":  `{"oneOf":[{"items":{"type":"integer"},"type":"array"},{"type":"null"}]}`,
		"any":     `true`,
		"skipped": `{"items":{"type":"string"},"type":"array"}`,
		"name":    `{"type":"string"}`,
	}
	for name, w := range want {
		if got := string(out.Properties[name]); got != w {
			t.Errorf("%s: %s\nwant %s", name, got, w)
		}
	}
	if strings.Contains(strings.Join(out.Required, ","), "origin") {
		t.Errorf("required %v: a field of a nil embedded pointer is left out, so it is not required", out.Required)
	}

	in, err := inputSchemaFor(reflect.TypeFor[nullOut]())
	if err != nil {
		t.Fatal(err)
	}
	// Only the field tagged nullable takes null as an input: a task asks for a list.
	if n := strings.Count(string(in), "null"); n != 1 {
		t.Errorf("input schema admits null %d times: %s", n, in)
	}
}

func TestSendable(t *testing.T) {
	tests := []struct {
		name string
		out  any
		want string
	}{
		{"nil pointer", (*echoOut)(nil), `{"message":""}`},
		{"nil slice", []string(nil), `[]`},
		{"nil bytes", []byte(nil), `""`},
		{"nil map", map[string]int(nil), `{}`},
		{"nil raw message", json.RawMessage(nil), `{}`},
		{"nil interface", nil, `{}`},
		{"pointer to nil interface", (*any)(nil), `{}`},
		{"value", echoOut{Message: "hi"}, `{"message":"hi"}`},
	}
	for _, tt := range tests {
		if got := string(sent(t, tt.out)); got != tt.want {
			t.Errorf("%s: sends %s, want %s", tt.name, got, tt.want)
		}
	}
}
