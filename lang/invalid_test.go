package lang_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// update rewrites the `# expect:` lines of testdata/invalid from what Load reports, so that a
// change of wording or position shows up as a diff in git:
//
//	go test ./lang -run TestInvalid -update
var update = flag.Bool("update", false, "rewrite the # expect: lines of testdata/invalid/*.fsc.hcl from the actual diagnostics")

const invalidDir = "testdata/invalid"

// loadTimeout bounds one Load in these tests: a hang is reported as a failure of its case instead
// of stalling the whole package until `go test -timeout`. The slowest case (092, a 101,000-item
// document) takes about 14 s under -race alone, and twice that on a busy machine.
const loadTimeout = 2 * time.Minute

// diagKey is what the invalid corpus pins down about an error: where it points and its summary.
// File is empty for the case file itself, and relative to testdata/invalid for another file (a
// called workflow). Line is 0 for a diagnostic without a subject.
type diagKey struct {
	File    string
	Line    int
	Summary string
}

func (k diagKey) String() string {
	if k.File != "" {
		return fmt.Sprintf("%s:%d: %s", k.File, k.Line, k.Summary)
	}
	return fmt.Sprintf("%d: %s", k.Line, k.Summary)
}

func compareKeys(a, b diagKey) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Summary, b.Summary))
}

// parseKey parses the text after "# expect: ": `LINE: SUMMARY` or `FILE:LINE: SUMMARY`.
func parseKey(s string) (diagKey, error) {
	where, summary, ok := strings.Cut(s, ": ")
	if !ok || summary == "" {
		return diagKey{}, fmt.Errorf("want LINE: SUMMARY or FILE:LINE: SUMMARY, got %q", s)
	}
	var k diagKey
	k.Summary = summary
	if i := strings.LastIndexByte(where, ':'); i >= 0 {
		k.File, where = where[:i], where[i+1:]
	}
	line, err := strconv.Atoi(where)
	if err != nil || line < 0 {
		return diagKey{}, fmt.Errorf("bad line in %q", s)
	}
	k.Line = line
	return k, nil
}

// invalidCase is the header of one file of testdata/invalid.
type invalidCase struct {
	expect   []diagKey
	details  []string // `# detail:` lines: each is part of the Detail of some error
	planning bool     // a `# vars:` line was given: load as plan does
	flags    []string // the -var flags of the `# vars:` lines
}

const (
	expectPrefix = "# expect: "
	detailPrefix = "# detail: "
	varsPrefix   = "# vars:"
)

func parseCase(src []byte) (invalidCase, error) {
	var c invalidCase
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, expectPrefix):
			k, err := parseKey(strings.TrimPrefix(line, expectPrefix))
			if err != nil {
				return c, err
			}
			c.expect = append(c.expect, k)
		case strings.HasPrefix(line, detailPrefix):
			c.details = append(c.details, strings.TrimPrefix(line, detailPrefix))
		case strings.HasPrefix(line, varsPrefix):
			c.planning = true
			c.flags = append(c.flags, strings.Fields(strings.TrimPrefix(line, varsPrefix))...)
		}
	}
	slices.SortFunc(c.expect, compareKeys)
	return c, sc.Err()
}

// loadResult is what loadSafely saw.
type loadResult struct {
	w     *lang.Workflow
	diags hcl.Diagnostics
}

// loadSafely runs Load and turns a panic or a hang into a test failure that names the file, so
// that one broken case does not take the other cases down with it.
func loadSafely(t *testing.T, filename string, opts lang.Options) (*lang.Workflow, hcl.Diagnostics) {
	t.Helper()
	done := make(chan loadResult, 1)
	panicked := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				panicked <- fmt.Sprintf("%v\n%s", r, debug.Stack())
			}
		}()
		w, diags := lang.NewParser().Load(filename, opts)
		done <- loadResult{w, diags}
	}()
	select {
	case r := <-done:
		return r.w, r.diags
	case p := <-panicked:
		t.Fatalf("Load(%s) panicked: %s", filename, p)
	case <-time.After(loadTimeout):
		t.Fatalf("Load(%s) did not return within %s", filename, loadTimeout)
	}
	return nil, nil
}

// errorKeys returns the sorted keys of the error diagnostics, relative to caseFile.
func errorKeys(caseFile string, diags hcl.Diagnostics) []diagKey {
	var keys []diagKey
	for _, d := range diags {
		if d == nil || d.Severity != hcl.DiagError {
			continue
		}
		k := diagKey{Summary: d.Summary}
		if d.Subject != nil {
			k.Line = d.Subject.Start.Line
			if filepath.Clean(d.Subject.Filename) != filepath.Clean(caseFile) {
				k.File, _ = relToInvalid(d.Subject.Filename)
			}
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// relToInvalid names a file relative to testdata/invalid; ok is false when it is outside.
func relToInvalid(name string) (rel string, ok bool) {
	abs, err1 := filepath.Abs(name)
	dir, err2 := filepath.Abs(invalidDir)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(name), false
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(name), false
	}
	return filepath.ToSlash(rel), true
}

// diffKeys renders what is missing (-) and unexpected (+), the keys being sorted.
func diffKeys(want, got []diagKey) string {
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || (i < len(want) && compareKeys(want[i], got[j]) < 0):
			fmt.Fprintf(&b, "  - %s   (expected, not reported)\n", want[i])
			i++
		case i == len(want) || compareKeys(want[i], got[j]) > 0:
			fmt.Fprintf(&b, "  + %s   (reported, not expected)\n", got[j])
			j++
		default:
			fmt.Fprintf(&b, "    %s\n", want[i])
			i++
			j++
		}
	}
	return b.String()
}

// describeDiags lists every diagnostic in full, for failure messages.
func describeDiags(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		if d == nil {
			b.WriteString("  <nil diagnostic>\n")
			continue
		}
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		where := "<no subject>"
		if d.Subject != nil {
			where = d.Subject.String()
		}
		fmt.Fprintf(&b, "  %s: %s: %s; %s\n", where, sev, d.Summary, d.Detail)
	}
	return b.String()
}

// checkDiagQuality checks what every error must have: a sentence of detail and a source range in
// the file at fault. Only diagnostics about -var flags have no range.
func checkDiagQuality(t *testing.T, caseFile string, c invalidCase, diags hcl.Diagnostics) {
	t.Helper()
	for _, d := range diags {
		if d == nil {
			t.Errorf("Load returned a nil *hcl.Diagnostic")
			continue
		}
		if d.Severity != hcl.DiagError {
			continue
		}
		if !detailIsSentence(d.Detail) {
			t.Errorf("%q: Detail must be a non-empty sentence ending with \".\": %q", d.Summary, d.Detail)
		}
		if strings.HasSuffix(d.Detail, "..") && !strings.HasSuffix(d.Detail, "...") {
			t.Errorf("%q: Detail ends with a doubled full stop: %q", d.Summary, d.Detail)
		}
		switch {
		case d.Subject == nil:
			if !c.planning || !strings.Contains(d.Detail, "-var") {
				t.Errorf("%q has no Subject; only diagnostics about -var flags may lack one (detail: %s)", d.Summary, d.Detail)
			}
		case d.Subject.Filename == "":
			t.Errorf("%q: Subject has no Filename", d.Summary)
		case filepath.Clean(d.Subject.Filename) != filepath.Clean(caseFile) && !inInvalidDir(d.Subject.Filename):
			t.Errorf("%q: Subject names %s, which is neither the case file nor a file of %s", d.Summary, d.Subject.Filename, invalidDir)
		case d.Subject.Start.Line < 1:
			t.Errorf("%q: Subject has line %d", d.Summary, d.Subject.Start.Line)
		}
	}
}

func inInvalidDir(name string) bool {
	_, ok := relToInvalid(name)
	return ok
}

// detailIsSentence accepts a detail ending with a full stop, or with HCL's own "Did you mean …?"
// suggestion.
func detailIsSentence(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, ".") || (strings.Contains(strings.ToLower(s), "did you mean") && strings.HasSuffix(s, "?"))
}

// TestInvalidWorkflows loads every testdata/invalid/*.fsc.hcl and compares its errors, as
// (line, summary), to the file's `# expect:` lines exactly. Files in subdirectories are helpers
// (called workflows), not cases. The header lines of a case are:
//
//	# expect: LINE: SUMMARY        an error whose Subject starts at LINE (0: no Subject)
//	# expect: FILE:LINE: SUMMARY   an error in another file, FILE relative to testdata/invalid
//	# detail: TEXT                 TEXT is part of the Detail of some error
//	# vars: k=v …                  load as plan does (Planning), with these -var flags
//
// Every error must also have a Detail that is a sentence and a Subject in the case file (or a
// helper), except errors about -var flags.
func TestInvalidWorkflows(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(invalidDir, "*.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 45 {
		t.Fatalf("found %d cases in %s; the corpus has at least 45", len(files), invalidDir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".fsc.hcl"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseCase(src)
			if err != nil {
				t.Fatalf("bad header: %v", err)
			}
			if len(c.expect) == 0 && !*update {
				t.Fatalf("no `# expect:` line: an invalid case must expect at least one error")
			}
			opts := lang.Options{Planning: c.planning, Vars: lang.VarInputs{Flags: c.flags}}
			_, diags := loadSafely(t, file, opts)
			got := errorKeys(file, diags)
			if *update {
				if err := rewriteExpectations(t, file, opts); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !slices.Equal(c.expect, got) {
				t.Errorf("errors differ from the `# expect:` lines (-missing +unexpected):\n%s\nall diagnostics:\n%s",
					diffKeys(c.expect, got), describeDiags(diags))
			}
			checkDiagQuality(t, file, c, diags)
			checkDetails(t, c.details, diags)
		})
	}
}

// checkDetails checks that each of want is part of the Detail of some error.
func checkDetails(t *testing.T, want []string, diags hcl.Diagnostics) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, d := range diags {
			found = found || (d != nil && d.Severity == hcl.DiagError && strings.Contains(d.Detail, w))
		}
		if !found {
			t.Errorf("no error detail contains %q; diagnostics:\n%s", w, describeDiags(diags))
		}
	}
}

// rewriteExpectations replaces the `# expect:` lines of file with what Load reports. Their number
// may change, which moves every line below them, so it repeats until the file is stable.
func rewriteExpectations(t *testing.T, file string, opts lang.Options) error {
	for range 5 {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		_, diags := loadSafely(t, file, opts)
		got := errorKeys(file, diags)
		out := replaceExpectLines(src, got)
		if bytes.Equal(out, src) {
			return nil
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
	}
	return errors.New("the `# expect:` lines did not converge; edit them by hand")
}

// replaceExpectLines puts one `# expect:` line per key where the first one was, or after the
// leading comment lines when there was none.
func replaceExpectLines(src []byte, keys []diagKey) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	at, leading := -1, 0
	var kept []string
	for i, l := range lines {
		if strings.HasPrefix(l, expectPrefix) {
			if at < 0 {
				at = len(kept)
			}
			continue
		}
		if leading == i && strings.HasPrefix(l, "#") {
			leading = i + 1
		}
		kept = append(kept, l)
	}
	if at < 0 {
		at = leading
	}
	var exp []string
	for _, k := range keys {
		exp = append(exp, expectPrefix+k.String()+"\n")
	}
	out := slices.Concat(kept[:at], exp, kept[at:])
	return []byte(strings.Join(out, ""))
}

// TestInvalidGenerated covers the limits on the whole file with inputs too big or too odd to
// commit: they are written into a temporary directory.
func TestInvalidGenerated(t *testing.T) {
	tasks := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("workflow \"w\" {}\n")
		for i := range n {
			fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n}\n", i)
		}
		return b.Bytes()
	}
	padded := func(size int) []byte {
		b := []byte("workflow \"w\" {}\n")
		line := "# " + strings.Repeat("x", 76) + "\n"
		for size-len(b) >= len(line) {
			b = append(b, line...)
		}
		switch rest := size - len(b); {
		case rest >= 2:
			b = append(b, "#"+strings.Repeat("x", rest-2)+"\n"...)
		case rest == 1:
			b = append(b, '\n')
		}
		return b
	}
	nested := func(depth int) []byte {
		return []byte("workflow \"w\" {}\n\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { x = " +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + " }\n}\n")
	}
	cases := []struct {
		name   string
		src    []byte
		expect []string // "LINE: SUMMARY"; empty: no errors
		// details are parts of the error's Detail: a limit's error names the limit and the value.
		details []string
	}{
		{"too-large", padded(lang.MaxFileSize + 1), []string{"1: Workflow file too large"}, []string{"1048577", "1048576"}},
		{"largest-allowed", padded(lang.MaxFileSize), nil, nil},
		{"binary", append([]byte("workflow \"w\" {}\n"), 0x00, 0xff, 0xfe, 0x01, 0x89, 'P', 'N', 'G'), []string{"1: Workflow file is not text"}, nil},
		{"invalid-utf8", []byte("workflow \"w\" {}\n# caf\xe9\n"), []string{"1: Workflow file is not text"}, nil},
		{"too-many-nodes", tasks(lang.MaxNodes + 1), []string{"1: Too many nodes"}, []string{"10001", "10000"}},
		{"most-nodes-allowed", tasks(lang.MaxNodes), nil, nil},
		{"nested-too-deeply", nested(300), []string{"5: Expression nested too deeply"}, []string{"200"}},
		{"nested-deep-but-allowed", nested(lang.MaxNestingDepth - 2), nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.name+".fsc.hcl")
			if err := os.WriteFile(file, tc.src, 0o644); err != nil {
				t.Fatal(err)
			}
			_, diags := loadSafely(t, file, lang.Options{})
			var want []diagKey
			for _, e := range tc.expect {
				k, err := parseKey(e)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, k)
			}
			got := errorKeys(file, diags)
			if !slices.Equal(want, got) {
				t.Errorf("errors differ (-missing +unexpected):\n%s\nall diagnostics:\n%s", diffKeys(want, got), truncateText(describeDiags(diags), 4000))
			}
			checkDiagQuality(t, file, invalidCase{}, diags)
			checkDetails(t, tc.details, diags)
		})
	}
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n  …"
}

// TestInvalidCallOfSpecialFile: a `call` names its child by path, so a workflow can point it at a
// FIFO or a device. Load must refuse anything but a regular file instead of blocking on it (a
// FIFO without writer) or reading forever (/dev/zero).
func TestInvalidCallOfSpecialFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "child.fsc.hcl")
	if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
		t.Skipf("cannot create a FIFO here: %v %s", err, out)
	}
	file := filepath.Join(dir, "parent.fsc.hcl")
	src := fmt.Sprintf("workflow \"w\" {}\n\ncall \"c\" {\n  workflow = %q\n}\n", fifo)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan hcl.Diagnostics, 1)
	go func() {
		_, diags := lang.NewParser().Load(file, lang.Options{})
		done <- diags
	}()
	select {
	case diags := <-done:
		got := errorKeys(file, diags)
		if len(got) == 0 || got[0].Line != 4 {
			t.Errorf("want an error at line 4 (the workflow path) for a call of a FIFO; got:\n%s", describeDiags(diags))
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Load blocks on a call whose workflow is a FIFO; it must refuse files that are not regular files")
		// Unblock the reader so that the goroutine ends with the test.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
	}
}

// crashChildEnv names the file that TestLoadCrashChild loads, in a child process of
// TestInvalidNoCrash.
const crashChildEnv = "FUSCIA_LANG_TEST_CRASH_CHILD"

// TestInvalidNoCrash loads pathological files in a child process, because what it guards against
// (a stack overflow, running out of memory) kills a Go process without a chance to recover. Load
// must report an error, not crash. The child's address space is capped so that a runaway
// allocation fails fast instead of thrashing the machine.
func TestInvalidNoCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: loads files of 1 MiB in a child process")
	}
	expr := func(e string) []byte {
		return []byte("workflow \"w\" {}\n\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { x = " + e + " }\n}\n")
	}
	const room = lang.MaxFileSize - 200
	cases := []struct {
		name string
		src  []byte
	}{
		// About a million prefix operators: no bracket, so the nesting limit does not see them,
		// but the parser recurses once per operator.
		{"not-chain", expr(strings.Repeat("!", room) + "true")},
		{"minus-chain", expr(strings.Repeat("-", room) + "1")},
		// Checking the known inputs at validate evaluates a product of 2^40 elements.
		{"setproduct", expr("length(setproduct(range(1024), range(1024), range(1024), range(1024)))")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.name+".fsc.hcl")
			if err := os.WriteFile(file, tc.src, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := []string{os.Args[0], "-test.run=^TestLoadCrashChild$", "-test.v"}
			if sh, err := exec.LookPath("sh"); err == nil {
				// 8 GiB of address space: ample for a 1 MiB file.
				args = append([]string{sh, "-c", `ulimit -v 8388608 2>/dev/null; exec "$@"`, "sh"}, args...)
			}
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Env = append(os.Environ(), crashChildEnv+"="+file)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("Load crashed (%v); it must report an error instead:\n%s", err, crashSummary(string(out)))
			}
			if !strings.Contains(string(out), "ERROR ") {
				t.Errorf("Load accepted the file without an error; want a diagnostic such as \"Expression nested too deeply\". Output:\n%s", crashSummary(string(out)))
			}
		})
	}
}

// TestLoadCrashChild is the child process of TestInvalidNoCrash.
func TestLoadCrashChild(t *testing.T) {
	file := os.Getenv(crashChildEnv)
	if file == "" {
		t.Skip("only runs as the child process of TestInvalidNoCrash")
	}
	_, diags := lang.NewParser().Load(file, lang.Options{})
	for _, d := range diags {
		if d != nil && d.Severity == hcl.DiagError {
			line := 0
			if d.Subject != nil {
				line = d.Subject.Start.Line
			}
			fmt.Printf("ERROR %d: %s\n", line, d.Summary)
		}
	}
}

// crashSummary keeps what says why a child process died: the fatal error and the top frames of
// the goroutine that was running.
func crashSummary(out string) string {
	lines := strings.Split(out, "\n")
	var keep []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "fatal error:"), strings.HasPrefix(l, "panic:"),
			strings.HasPrefix(l, "runtime: out of memory"), strings.HasPrefix(l, "runtime: goroutine stack exceeds"),
			strings.HasPrefix(l, "ERROR "), strings.HasPrefix(l, "signal: "):
			keep = append(keep, l)
		case strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(l, "[running]:"):
			end := min(i+13, len(lines))
			keep = append(keep, lines[i:end]...)
			i = end - 1
		}
	}
	if len(keep) == 0 {
		if len(lines) > 30 {
			lines = lines[len(lines)-30:]
		}
		return strings.Join(lines, "\n")
	}
	return strings.Join(keep, "\n")
}
