package lang

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestParseChunkedIsTheWholeParse: parsing a file a few blocks at a time gives the same file,
// body, ranges and diagnostics as HCL's parse of the whole file, whatever the file holds —
// comments and blank lines between blocks, a heredoc or a comment holding lines that look like
// a block's end, a top-level attribute, syntax errors, CRLF line ends.
func TestParseChunkedIsTheWholeParse(t *testing.T) {
	chain := func(n int, sep string) string {
		var b strings.Builder
		b.WriteString("workflow \"w\" {}\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%stask \"t%d\" {\n  uses   = builtin.transform\n  inputs = { n = %d, s = \"x${%d}\" }\n}\n", sep, i, i, i)
		}
		return b.String()
	}
	heredoc := chain(20, "\n") + "task \"h\" {\n  uses = builtin.transform\n  inputs = { s = <<EOT\n" +
		strings.Repeat("}\ntask \"fake\" {\n", 60) + "EOT\n  }\n}\n" + chain(20, "")
	comment := chain(20, "# note\n") + "/*\n" + strings.Repeat("}\ntask \"c\" {\n", 60) + "*/\n" + chain(20, "// x\n") + "# end\n"
	cases := map[string]struct {
		src     string
		chunked bool // whether the file is cut into chunks at all
	}{
		"chain":           {chain(100, ""), true},
		"blank lines":     {chain(100, "\n\n") + "\n\n", true},
		"comments":        {comment, true},
		"heredoc":         {heredoc, true},
		"attribute":       {"x = 1\n" + chain(50, "") + "y = 2\n" + chain(50, "") + "x = 3\n", true},
		"late error":      {chain(60, "") + "task \"bad\" {\n  uses = \n}\n" + chain(10, ""), true},
		"unclosed":        {chain(60, "") + "task \"open\" {\n  uses = builtin.transform\n" + chain(10, ""), true},
		"nested at col 1": {chain(30, "") + "loop \"l\" {\n  for_each = [1]\n  task \"b\" {\n    uses = builtin.transform\n" + strings.Repeat(" ", 700) + "\n}\n}\n" + chain(30, ""), true},
		"crlf":            {strings.ReplaceAll(chain(60, ""), "\n", "\r\n"), false},
		"small":           {chain(3, ""), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := []byte(tc.src)
			if got := chunkEnd(src, 0) < len(src) && len(src) >= 2*chunkBytes; got != tc.chunked {
				t.Fatalf("file cut into chunks: %v, want %v", got, tc.chunked)
			}
			want, wantDiags := hclsyntax.ParseConfig(src, "w.fsc.hcl", hcl.InitialPos)
			got, gotDiags := parseChunked(src, "w.fsc.hcl")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the chunked parse differs from the whole file's")
			}
			if gotDiags.Error() != wantDiags.Error() || !reflect.DeepEqual(gotDiags, wantDiags) {
				t.Errorf("diagnostics %v, want %v", gotDiags, wantDiags)
			}
			if tc.chunked && name == "chain" && len(got.Body.(*hclsyntax.Body).Blocks) != 101 {
				t.Errorf("%d blocks, want 101", len(got.Body.(*hclsyntax.Body).Blocks))
			}
		})
	}
}
