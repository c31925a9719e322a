package lang

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{
			name: "misaligned equals are aligned",
			src: `workflow "w" {
  description = "d"
  timeout = "30s"
  max_parallel=4
}
`,
			want: `workflow "w" {
  description  = "d"
  timeout      = "30s"
  max_parallel = 4
}
`,
		},
		{
			name: "a task's pool is kept and aligned with the other attributes",
			src: `task "fetch" {
  uses = builtin.http
    pool="edge"
  inputs = { url = "https://example.com" }
}
`,
			want: `task "fetch" {
  uses   = builtin.http
  pool   = "edge"
  inputs = { url = "https://example.com" }
}
`,
		},
		{
			name: "indentation",
			src: `task "a" {
uses = builtin.transform
    inputs = {
  x = 1
      }
}
`,
			want: `task "a" {
  uses = builtin.transform
  inputs = {
    x = 1
  }
}
`,
		},
		{
			name: "CRLF becomes LF",
			src:  "output \"x\" {\r\n  value = 1\r\n}\r\n",
			want: "output \"x\" {\n  value = 1\n}\n",
		},
		{
			name: "trailing whitespace after code and comments",
			src:  "# header   \noutput \"x\" {   \n  value = 1\t\n  \n}  # end  \n",
			want: "# header\noutput \"x\" {\n  value = 1\n\n} # end\n",
		},
		{
			name: "heredoc whitespace is part of the value",
			src:  "output \"x\" {\n  value = <<EOT\n  keep   \n\tthis\t\nEOT\n}\n",
			want: "output \"x\" {\n  value = <<EOT\n  keep   \n\tthis\t\nEOT\n}\n",
		},
		{
			name: "missing final newline is added",
			src:  `output "x" { value = 1 }`,
			want: "output \"x\" { value = 1 }\n",
		},
		{
			name: "extra final newlines are dropped",
			src:  "output \"x\" { value = 1 }\n\n\n\n",
			want: "output \"x\" { value = 1 }\n",
		},
		{
			name: "whitespace only",
			src:  " \n\n\t\n",
			want: "",
		},
		{
			name: "empty",
			src:  "",
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := Format("test.fsc.hcl", []byte(tt.src))
			if diags.HasErrors() {
				t.Fatalf("Format: %s", diags.Error())
			}
			if string(got) != tt.want {
				t.Errorf("Format:\n%s", UnifiedDiff("want", []byte(tt.want), got))
			}
			again, _ := Format("test.fsc.hcl", got)
			if !bytes.Equal(again, got) {
				t.Errorf("Format is not idempotent:\n%s", UnifiedDiff("once", got, again))
			}
		})
	}
}

func TestFormatSyntaxError(t *testing.T) {
	for _, src := range []string{
		"task \"a\" {\n  uses = \n}\n",
		"task \"a\" {\n",
		"output \"x\" { value = \"unterminated }\n",
	} {
		got, diags := Format("bad.fsc.hcl", []byte(src))
		if got != nil {
			t.Errorf("Format(%q) = %q, want nil", src, got)
		}
		if !diags.HasErrors() {
			t.Errorf("Format(%q): no error diagnostics", src)
			continue
		}
		if r := diags[0].Subject; r == nil || r.Filename != "bad.fsc.hcl" || r.Start.Line < 1 {
			t.Errorf("Format(%q): diagnostic without a position in the file: %v", src, diags[0])
		}
	}
}

// The examples are what users copy, so they must be canonical already.
func TestFormatExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no examples")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		once, diags := Format(f, src)
		if diags.HasErrors() {
			t.Errorf("%s: %s", f, diags.Error())
			continue
		}
		twice, _ := Format(f, once)
		if !bytes.Equal(once, twice) {
			t.Errorf("%s: Format is not idempotent:\n%s", f, UnifiedDiff(f, once, twice))
		}
		if !bytes.Equal(src, once) {
			t.Errorf("%s is not formatted:\n%s", f, UnifiedDiff(f, src, once))
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{name: "equal", old: "a\nb\n", new: "a\nb\n", want: ""},
		{name: "both empty", old: "", new: "", want: ""},
		{
			name: "one line changed",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			new:  "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
`,
		},
		{
			name: "insertion at start",
			old:  "a\nb\nc\nd\ne\n",
			new:  "new\na\nb\nc\nd\ne\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -1,3 +1,4 @@
+new
 a
 b
 c
`,
		},
		{
			name: "insertion at end",
			old:  "a\nb\nc\nd\ne\n",
			new:  "a\nb\nc\nd\ne\nf\ng\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -3,3 +3,5 @@
 c
 d
 e
+f
+g
`,
		},
		{
			name: "deletion of the only line",
			old:  "a\n",
			new:  "",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -1 +0,0 @@
-a
`,
		},
		{
			name: "into an empty file",
			old:  "",
			new:  "a\nb\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -0,0 +1,2 @@
+a
+b
`,
		},
		{
			name: "missing final newline",
			old:  "a\nb",
			new:  "a\nb\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+b
`,
		},
		{
			name: "two hunks and a merged one",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
			new:  "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\nsixteen+\n18\n19\n20\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -1,4 +1,4 @@
-1
+one
 2
 3
 4
@@ -14,7 +14,7 @@
 14
 15
 16
-17
+sixteen+
 18
 19
 20
`,
		},
		{
			name: "changes six lines apart share a hunk",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			new:  "1\nB\n3\n4\n5\n6\n7\nH\n9\n",
			want: `--- a/f.hcl
+++ b/f.hcl
@@ -1,9 +1,9 @@
 1
-2
+B
 3
 4
 5
 6
 7
-8
+H
 9
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UnifiedDiff("f.hcl", []byte(tt.old), []byte(tt.new))
			if got != tt.want {
				t.Errorf("UnifiedDiff:\n--- got ---\n%s--- want ---\n%s", got, tt.want)
			}
			if got != "" {
				checkPatch(t, tt.old, tt.new, got)
			}
		})
	}
}

// checkPatch applies diff to old with patch(1), the tool the format is for, and expects new.
func checkPatch(t *testing.T, old, new, diff string) {
	t.Helper()
	patch, err := exec.LookPath("patch")
	if err != nil {
		return
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "sub", "f.hcl")
	if err := os.WriteFile(target, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	// Names are given relative to the tree, so -p1 strips the a/ and b/ prefixes.
	diff = strings.ReplaceAll(diff, "a/f.hcl\n", "a/sub/f.hcl\n")
	diff = strings.ReplaceAll(diff, "b/f.hcl\n", "b/sub/f.hcl\n")
	cmd := exec.Command(patch, "-p1", "--batch", "--no-backup-if-mismatch", "--posix")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s\ndiff:\n%s", err, out, diff)
	}
	got, err := os.ReadFile(target) // --posix: a file that becomes empty is kept
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != new {
		t.Errorf("patched file = %q, want %q\ndiff:\n%s", got, new, diff)
	}
}

// The script must turn a into b and be as short as the longest common subsequence allows.
func TestDiffLinesMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		a := randomLines(rng, rng.IntN(30), 1+rng.IntN(5))
		b := mutate(rng, a, 1+rng.IntN(5))
		ops := diffLines(a, b)
		checkScript(t, a, b, ops)
		if edits, want := countEdits(ops), len(a)+len(b)-2*lcsLen(a, b); edits != want {
			t.Fatalf("diff of %q and %q has %d edits, want %d", a, b, edits, want)
		}
	}
}

// Past the cost limit the script may be longer, but must still be right.
func TestDiffTooExpensive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		a := randomLines(rng, rng.IntN(60), 3)
		b := randomLines(rng, rng.IntN(60), 3)
		ia, ib := lineIDs(a, b)
		m := newMyers(ia, ib)
		m.tooExpensive = 1 + rng.IntN(3)
		m.compare(0, len(ia), 0, len(ib))
		var ops []diffOp
		x, y := 0, 0
		for x < len(a) || y < len(b) {
			switch {
			case x < len(a) && m.removed[x]:
				ops = append(ops, diffOp{'-', x, y})
				x++
			case y < len(b) && m.added[y]:
				ops = append(ops, diffOp{'+', x, y})
				y++
			default:
				ops = append(ops, diffOp{' ', x, y})
				x, y = x+1, y+1
			}
		}
		checkScript(t, a, b, ops)
	}
}

func TestUnifiedDiffLarge(t *testing.T) {
	var old, new bytes.Buffer
	for i := 0; i < 40000; i++ {
		old.WriteString("  name = \"value\"\n")
		if i%97 == 0 {
			new.WriteString("  name  = \"changed\"\n")
		} else {
			new.WriteString("  name = \"value\"\n")
		}
	}
	d := UnifiedDiff("f.hcl", old.Bytes(), new.Bytes())
	if got, want := strings.Count(d, "\n+  name  = \"changed\""), 413; got != want {
		t.Errorf("large diff adds %d lines, want %d", got, want)
	}
	checkPatch(t, old.String(), new.String(), d)
	// Two files with nothing in common: the unique lines are set aside before the search.
	old.Reset()
	new.Reset()
	for i := 0; i < 40000; i++ {
		old.WriteString(strings.Repeat("o", i%50) + "\n")
		new.WriteString(strings.Repeat("n", i%50+1) + "\n")
	}
	checkPatch(t, old.String(), new.String(), UnifiedDiff("f.hcl", old.Bytes(), new.Bytes()))
}

func randomLines(rng *rand.Rand, n, alphabet int) [][]byte {
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = []byte{byte('a' + rng.IntN(alphabet)), '\n'}
	}
	return lines
}

func mutate(rng *rand.Rand, a [][]byte, alphabet int) [][]byte {
	b := append([][]byte(nil), a...)
	for n := rng.IntN(6); n > 0; n-- {
		i := rng.IntN(len(b) + 1)
		switch rng.IntN(3) {
		case 0:
			b = append(b[:i], append([][]byte{{byte('a' + rng.IntN(alphabet)), '\n'}}, b[i:]...)...)
		case 1:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		default:
			if i < len(b) {
				b[i] = []byte{byte('A' + rng.IntN(alphabet)), '\n'}
			}
		}
	}
	return b
}

func lineIDs(a, b [][]byte) ([]int, []int) {
	ids := map[string]int{}
	conv := func(lines [][]byte) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			v, ok := ids[string(l)]
			if !ok {
				v = len(ids)
				ids[string(l)] = v
			}
			out[i] = v
		}
		return out
	}
	return conv(a), conv(b)
}

func checkScript(t *testing.T, a, b [][]byte, ops []diffOp) {
	t.Helper()
	var gotA, gotB [][]byte
	for _, op := range ops {
		switch op.kind {
		case ' ':
			if !bytes.Equal(a[op.a], b[op.b]) {
				t.Fatalf("kept line %q at %d is %q at %d in new", a[op.a], op.a, b[op.b], op.b)
			}
			gotA, gotB = append(gotA, a[op.a]), append(gotB, b[op.b])
		case '-':
			gotA = append(gotA, a[op.a])
		case '+':
			gotB = append(gotB, b[op.b])
		}
	}
	if !bytes.Equal(bytes.Join(gotA, nil), bytes.Join(a, nil)) || !bytes.Equal(bytes.Join(gotB, nil), bytes.Join(b, nil)) {
		t.Fatalf("script does not turn %q into %q", a, b)
	}
}

func countEdits(ops []diffOp) int {
	n := 0
	for _, op := range ops {
		if op.kind != ' ' {
			n++
		}
	}
	return n
}

func lcsLen(a, b [][]byte) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if bytes.Equal(a[i-1], b[j-1]) {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
