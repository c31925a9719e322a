package funcs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/funcs/internal/refdoc"
)

// TestReferenceUpToDate fails when docs/reference/functions.md is not what `go generate
// ./lang/funcs` writes from the documentation table, so the page cannot go stale.
func TestReferenceUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", filepath.FromSlash(refdoc.Path))
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s cannot be read (%v): run `go generate ./lang/funcs`", refdoc.Path, err)
	}
	want := refdoc.Render(funcs.Docs())
	if bytes.Equal(committed, want) {
		return
	}
	line, got, exp := firstDifference(committed, want)
	t.Fatalf("%s is stale: run `go generate ./lang/funcs` and commit the result.\nFirst difference at line %d:\n  file:      %q\n  generated: %q",
		refdoc.Path, line, got, exp)
}

func firstDifference(a, b []byte) (line int, la, lb string) {
	as, bs := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y []byte
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		if !bytes.Equal(x, y) || i >= len(as) || i >= len(bs) {
			return i + 1, string(x), string(y)
		}
	}
	return 0, "", ""
}

// TestReferenceListsEverySignature checks the page against the function table itself, not
// only against the renderer: every function has its section with its signature.
func TestReferenceListsEverySignature(t *testing.T) {
	page := refdoc.Render(funcs.Docs())
	for _, name := range funcs.Names() {
		f := funcs.Table()[name]
		var sig string
		for _, d := range funcs.Docs() {
			if d.Name == name {
				sig = refdoc.Signature(d)
			}
		}
		if sig == "" {
			t.Errorf("%s is not documented", name)
			continue
		}
		if !bytes.Contains(page, []byte("\n### "+name+"\n\n`"+sig+"`\n")) {
			t.Errorf("the page has no section for %s with its signature %s", name, sig)
		}
		for _, p := range f.Params() {
			if !bytes.Contains([]byte(sig), []byte(p.Name+" ")) {
				t.Errorf("signature %s lacks parameter %s", sig, p.Name)
			}
		}
		if vp := f.VarParam(); vp != nil && !bytes.Contains([]byte(sig), []byte(vp.Name+" ...")) {
			t.Errorf("signature %s lacks the variadic parameter %s", sig, vp.Name)
		}
	}
}
