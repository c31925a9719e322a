package docs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckerFindsBreakage runs the checks on a small tree made for them (walked, not listed by
// git) and compares every problem they report: the links test must fail on each kind of
// breakage and on nothing else.
func TestCheckerFindsBreakage(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Title", // 1
		"",        // 2
		"[guide.md](docs/guide.md) [ok dir](docs) [ok](#title)", // 3
		"[missing](docs/nope.md) and [top](/docs/guide.md)",     // 4
		"[anchor](docs/guide.md#two-words) [bad](#nowhere)",     // 5
		"[out](../elsewhere/x.md) [web](https://example.com)",   // 6
		"See cli.md for more, and docs/guide.md too.",           // 7
		"A name in a longer span: `fuscia.md is fine`.",         // 8
		"```",                                // 9
		"[in code](no/such/file.md) cli.md",  // 10
		"```",                                // 11
		"[ref]: docs/gone.md",                // 12
		"Notes live in ../" + "shared/x.md.", // 13
		"[a link split",                      // 14
		"over lines](docs/missing-too.md) and `engine.md`.",    // 15
		"![image](docs/pic.png) [repeat](docs/guide.md#faq-1)", // 16
		"bin/ is skipped: [built](bin/tool)",                   // 17
	}, "\n"))
	write("docs/guide.md", "# Two `words`\n\n## FAQ\n\n## FAQ\n\nBack to [the top](../README.md#title).\n")
	write("docs/pic.png", "")
	write("bin/tool", "")
	write("pkg/a.go", strings.Join([]string{
		"// Package a is documented in docs/guide.md (and docs/guide.md#faq).", // 1
		"package a", // 2
		"",          // 3
		"/* See docs/missing.md, docs/guide.md#nope and", // 4
		"   cli.md. */",                    // 5
		`var s = "docs/not-a-comment.md"`,  // 6
		"// spec: shared" + "/spec/cli.md", // 7
	}, "\n"))
	write("pkg/p.proto", "// The protocol (docs/reference/gone.md).\nsyntax = \"proto3\";\n")

	r, err := loadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if r.files["bin/tool"] {
		t.Error("bin/ was listed; it holds build outputs, not repository files")
	}
	c := newChecker(r)
	var got []string
	for _, p := range r.withSuffix(".md") {
		for _, pr := range c.checkMarkdown(p) {
			got = append(got, pr.String())
		}
	}
	for _, p := range r.withSuffix(".go", ".proto") {
		src, err := r.read(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range c.checkSource(p, src) {
			got = append(got, pr.String())
		}
	}
	want := []string{
		"README.md:4: docs/nope.md: the repository has no docs/nope.md",
		"README.md:5: #nowhere: README.md has no heading with the anchor #nowhere",
		"README.md:6: ../elsewhere/x.md points outside the repository",
		"README.md:7: cli.md names no file",
		"README.md:12: docs/gone.md: the repository has no docs/gone.md",
		"README.md:13: ../" + "shared/x.md names no file",
		`README.md:13: cites "../` + `shared"`,
		"README.md:15: docs/missing-too.md: the repository has no docs/missing-too.md",
		"README.md:15: engine.md names no file",
		"README.md:17: bin/tool: the repository has no bin/tool",
		"pkg/a.go:4: cites docs/missing.md, which the repository does not have",
		"pkg/a.go:4: docs/guide.md#nope: docs/guide.md has no heading with the anchor #nope",
		"pkg/a.go:5: cites cli.md without its directory",
		`pkg/a.go:7: cites "shared` + `/spec"`,
		"pkg/p.proto:1: cites docs/reference/gone.md, which the repository does not have",
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d", len(got), len(want))
	}
	for i := range max(len(got), len(want)) {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g == "" || w == "" || !strings.HasPrefix(g, w) {
			t.Errorf("problem %d:\n got: %s\nwant: %s…", i, g, w)
		}
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Exit codes", "exit-codes"},
		{"`plan -json`", "plan--json"},
		{"API tokens and TLS", "api-tokens-and-tls"},
		{"What's new? (v1.2)", "whats-new-v12"},
		{"max_parallel and *emphasis*", "max_parallel-and-emphasis"},
		{"A [link](x.md) in it", "a-link-in-it"},
		{"Über größe", "über-größe"},
		{"Choices where the docs are silent", "choices-where-the-docs-are-silent"},
		{"  Trailing   ", "trailing"},
		{"1. Start", "1-start"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestParseMarkdownAnchors(t *testing.T) {
	doc := parseMarkdown("# Intro\n\n## Intro\n\nSetext\n======\n\n```\n# not a heading\n```\n\n<a id=\"custom\"></a>\n### Closed ###\n")
	want := []string{"closed", "custom", "intro", "intro-1", "setext"}
	var got []string
	for a := range doc.anchors {
		got = append(got, a)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("anchors = %q, want %q", got, want)
	}
}
