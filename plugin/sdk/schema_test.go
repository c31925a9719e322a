package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/fuscia/fuscia/lang/schema"
)

type schemaIn struct {
	Command string            `json:"command" jsonschema:"description=absolute path"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Timeout time.Duration     `json:"timeout,omitempty"`
	When    time.Time         `json:"when,omitzero"`
	Limits  *struct {
		Max int `json:"max"`
	} `json:"limits,omitempty"`
	File    ArtifactRef `json:"file,omitzero"`
	private int
}

type tree struct {
	Name     string `json:"name"`
	Children []tree `json:"children,omitempty"`
}

// compile compiles a derived schema the way Fuscia compiles a plugin's schemas.
func compile(t *testing.T, typ reflect.Type) *schema.Schema {
	t.Helper()
	doc, err := deriveSchema(typ, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile("plugin.test."+typ.Name(), doc)
	if err != nil {
		t.Fatalf("derived schema %s does not compile: %v", doc, err)
	}
	return s
}

// problems validates a JSON document against s, as Fuscia validates a task's input.
func problems(t *testing.T, s *schema.Schema, doc string) []string {
	t.Helper()
	typ, err := ctyjson.ImpliedType([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ctyjson.Unmarshal([]byte(doc), typ)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range s.Validate(v) {
		out = append(out, p.String())
	}
	return out
}

func TestDeriveSchema(t *testing.T) {
	s := compile(t, reflect.TypeFor[schemaIn]())
	var doc map[string]any
	if err := json.Unmarshal(s.Raw(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["$id"]; ok {
		t.Errorf("derived schema has an $id: %s", s.Raw())
	}
	if _, ok := doc["$defs"]; ok {
		t.Errorf("derived schema has $defs: %s", s.Raw())
	}
	if req, _ := json.Marshal(doc["required"]); string(req) != `["command"]` {
		t.Errorf("required = %s, want [command]", req)
	}
	if doc["additionalProperties"] != false {
		t.Errorf("additionalProperties = %v, want false", doc["additionalProperties"])
	}
	if props := doc["properties"].(map[string]any); props["private"] != nil || props["command"].(map[string]any)["description"] != "absolute path" {
		t.Errorf("properties = %v", props)
	}

	tests := []struct {
		doc  string
		want string // "" for valid, else a substring of the problems
	}{
		{`{"command":"/bin/ls"}`, ""},
		{`{"command":"/bin/ls","args":["-l"],"env":{"A":"b"},"timeout":5,"limits":{"max":2},` +
			`"file":{"artifact_id":"sha256:x","content_type":"text/plain","size":1,"extra":true}}`, ""},
		{`{}`, `"command" is required`},
		{`{"command":"x","comand":"y"}`, `comand`},
		{`{"command":1}`, `string`},
		{`{"command":"x","file":{"size":1}}`, `"artifact_id" is required`},
	}
	for _, tt := range tests {
		got := strings.Join(problems(t, s, tt.doc), "; ")
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.doc, got, tt.want)
		}
	}
}

func TestDeriveSchemaRecursive(t *testing.T) {
	s := compile(t, reflect.TypeFor[tree]())
	if got := problems(t, s, `{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}`); len(got) != 0 {
		t.Errorf("valid tree: %q", got)
	}
	if got := problems(t, s, `{"name":"a","children":[{"children":[]}]}`); len(got) == 0 {
		t.Error("a child without a name validates")
	}
}

func TestDeriveSchemaErrors(t *testing.T) {
	if _, err := deriveSchema(reflect.TypeFor[struct {
		C chan int `json:"c"`
	}](), nil); err == nil || !strings.Contains(err.Error(), "cannot derive a JSON Schema") {
		t.Errorf("chan field: %v", err)
	}
}

func TestSchemaFor(t *testing.T) {
	tests := []struct {
		name      string
		in, out   reflect.Type
		wantIn    string
		wantNoOut bool
	}{
		{"raw", reflect.TypeFor[json.RawMessage](), reflect.TypeFor[json.RawMessage](), `{"type":"object"}`, true},
		{"any", reflect.TypeFor[any](), reflect.TypeFor[any](), `{"type":"object"}`, true},
		{"result", reflect.TypeFor[map[string]any](), reflect.TypeFor[Result](), `"type":"object"`, true},
		{"pointer", reflect.TypeFor[*echoIn](), reflect.TypeFor[*echoOut](), `"required":["name"]`, false},
	}
	for _, tt := range tests {
		in, err := inputSchemaFor(tt.in)
		if err != nil || !strings.Contains(string(in), tt.wantIn) {
			t.Errorf("%s: input schema %s, %v; want %s", tt.name, in, err, tt.wantIn)
		}
		out, err := outputSchemaFor(tt.out)
		if err != nil || (out == nil) != tt.wantNoOut {
			t.Errorf("%s: output schema %s, %v", tt.name, out, err)
		}
		for _, doc := range [][]byte{in, out} {
			if doc != nil {
				if _, err := schema.Compile("x", doc); err != nil {
					t.Errorf("%s: %s does not compile: %v", tt.name, doc, err)
				}
			}
		}
	}
}
