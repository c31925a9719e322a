package diagrender

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestWrite(t *testing.T) {
	src := []byte("task \"a\" {\n\tuses = builtin.nope\n}\n")
	f, diags := hclsyntax.ParseConfig(src, "w.fsc.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files := map[string]*hcl.File{"w.fsc.hcl": f}
	at := func(line, col, byteOff, endCol, endByte int) *hcl.Range {
		return &hcl.Range{Filename: "w.fsc.hcl", Start: hcl.Pos{Line: line, Column: col, Byte: byteOff}, End: hcl.Pos{Line: line, Column: endCol, Byte: endByte}}
	}
	tests := []struct {
		name  string
		files map[string]*hcl.File
		diag  *hcl.Diagnostic
		want  string
	}{
		{"underline keeps tabs", files,
			&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid uses", Detail: "No builtin nope.", Subject: at(2, 9, 19, 21, 31)},
			"Error: Invalid uses\n\n  on w.fsc.hcl line 2, in task \"a\":\n   2: \tuses = builtin.nope\n      \t       ^^^^^^^^^^^^\n\nNo builtin nope.\n\n"},
		{"empty range gets one caret", files,
			&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Here", Subject: at(1, 1, 0, 1, 0)},
			"Warning: Here\n\n  on w.fsc.hcl line 1, in task \"a\":\n   1: task \"a\" {\n      ^\n\n"},
		{"unknown file", nil,
			&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Gone", Subject: at(3, 1, 0, 2, 1)},
			"Error: Gone\n\n  on w.fsc.hcl line 3:\n  (source code not available)\n\n"},
		{"no subject", nil,
			&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No workflows", Detail: "None found."},
			"Error: No workflows\n\nNone found.\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			Write(&b, tt.files, hcl.Diagnostics{tt.diag})
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	r := hcl.Range{Filename: "a.hcl", Start: hcl.Pos{Line: 1, Column: 2, Byte: 1}, End: hcl.Pos{Line: 1, Column: 5, Byte: 4}}
	got, err := json.Marshal(JSON(hcl.Diagnostics{
		{Severity: hcl.DiagWarning, Summary: "W", Subject: &r},
		{Severity: hcl.DiagError, Summary: "E", Detail: "d"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"severity":"warning","summary":"W","detail":"","range":{"filename":"a.hcl","start":{"line":1,"column":2,"byte":1},"end":{"line":1,"column":5,"byte":4}}},{"severity":"error","summary":"E","detail":"d"}]`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if b, _ := json.Marshal(JSON(nil)); string(b) != "[]" {
		t.Errorf("JSON(nil) encodes as %s, want []", b)
	}
}
