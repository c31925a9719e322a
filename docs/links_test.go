// Package docs holds the checks that keep the repository's documentation whole: every link in
// a Markdown file and every docs/ path in a Go or proto comment leads to a file of the
// repository, and nothing cites the team's working notes, which a clone does not contain.
package docs

import (
	"fmt"
	"go/scanner"
	"go/token"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestLinks fails on a relative link in a Markdown file to a file, directory or heading the
// repository does not have, on a bare .md file name in prose that names no file of it, and on
// a mention of the notes outside the repository.
func TestLinks(t *testing.T) {
	r := openRepo(t)
	c := newChecker(r)
	pages := r.withSuffix(".md")
	// A walk that finds nothing would pass whatever the docs say.
	if len(pages) < 10 || !r.files["README.md"] {
		t.Fatalf("found %d Markdown files under %s (README.md: %v); the repository listing is broken", len(pages), r.root, r.files["README.md"])
	}
	var probs []problem
	for _, p := range pages {
		probs = append(probs, c.checkMarkdown(p)...)
	}
	if c.links < 50 {
		t.Fatalf("checked only %d links in %d pages; the Markdown reader is broken", c.links, len(pages))
	}
	report(t, probs)
}

// TestCommentPaths fails on a comment in Go or proto source that cites a docs/ path (or a
// heading of it) that does not exist, a reference page by its bare name, or the notes outside
// the repository.
func TestCommentPaths(t *testing.T) {
	r := openRepo(t)
	c := newChecker(r)
	files := r.withSuffix(".go", ".proto")
	if len(files) < 50 {
		t.Fatalf("found only %d Go and proto files under %s; the repository listing is broken", len(files), r.root)
	}
	var probs []problem
	for _, f := range files {
		src, err := r.read(f)
		if err != nil {
			t.Fatal(err)
		}
		probs = append(probs, c.checkSource(f, src)...)
	}
	if c.docPaths < 50 {
		t.Fatalf("found only %d docs/ paths in comments; the comment reader is broken", c.docPaths)
	}
	report(t, probs)
}

func openRepo(t *testing.T) *repo {
	t.Helper()
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := loadRepo(root)
	if err != nil {
		t.Fatalf("list the repository's files: %v", err)
	}
	return r
}

func report(t *testing.T, probs []problem) {
	t.Helper()
	sort.Slice(probs, func(i, j int) bool {
		if probs[i].file != probs[j].file {
			return probs[i].file < probs[j].file
		}
		return probs[i].line < probs[j].line
	})
	for _, p := range probs {
		t.Error(p)
	}
}

// problem is one broken reference, at a file's line.
type problem struct {
	file string
	line int
	msg  string
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: %s", p.file, p.line, p.msg) }

// outsideNotes are the ways a page or a comment cites the spec notes kept beside the
// repository, which a clone does not have.
var outsideNotes = []string{"../" + "shared", "shared" + "/spec"}

// checker checks references against one repository, reading each page it links to once.
type checker struct {
	r     *repo
	pages map[string]*mdDoc
	// links and docPaths count what was checked, so that a reader that finds nothing fails.
	links, docPaths int
}

func newChecker(r *repo) *checker { return &checker{r: r, pages: map[string]*mdDoc{}} }

// page parses the Markdown file rel, once.
func (c *checker) page(rel string) (*mdDoc, error) {
	if d, ok := c.pages[rel]; ok {
		return d, nil
	}
	src, err := c.r.read(rel)
	if err != nil {
		return nil, err
	}
	d := parseMarkdown(src)
	c.pages[rel] = d
	return d, nil
}

func (c *checker) checkMarkdown(rel string) []problem {
	src, err := c.r.read(rel)
	if err != nil {
		return []problem{{rel, 0, err.Error()}}
	}
	probs := outsideMentions(rel, src, 1)
	doc, err := c.page(rel)
	if err != nil {
		return append(probs, problem{rel, 0, err.Error()})
	}
	for _, l := range doc.links {
		c.links++
		if msg := c.checkLink(rel, l.dest); msg != "" {
			probs = append(probs, problem{rel, l.line, msg})
		}
	}
	for _, m := range doc.mentions {
		if !c.mentionResolves(rel, m.name) {
			probs = append(probs, problem{rel, m.line, fmt.Sprintf(
				"%s names no file of the repository: link to the page meant (docs/reference/…); a name that is not meant as a repository file goes in a code span with more than the bare name", m.name)})
		}
	}
	return probs
}

// outsideMentions reports each line of text (whose first line is first) that cites the notes
// outside the repository.
func outsideMentions(file, text string, first int) []problem {
	var probs []problem
	for i, line := range strings.Split(text, "\n") {
		for _, s := range outsideNotes {
			if strings.Contains(line, s) {
				probs = append(probs, problem{file, first + i, fmt.Sprintf(
					"cites %q, which is outside the repository: say it in the repository's own docs and link to them", s)})
			}
		}
	}
	return probs
}

var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkLink checks the destination of a link in page from; it returns what is wrong, or "".
func (c *checker) checkLink(from, dest string) string {
	dest = strings.TrimSpace(dest)
	switch {
	case dest == "":
		return "a link without a destination"
	case strings.HasPrefix(dest, "//"):
		return "" // another host
	case scheme.MatchString(dest):
		if strings.HasPrefix(strings.ToLower(dest), "file:") {
			return fmt.Sprintf("%s is a file on one machine, not in the repository", dest)
		}
		return "" // http, https, mailto: not ours to check
	}
	p, frag, _ := strings.Cut(dest, "#")
	p, _, _ = strings.Cut(p, "?")
	p, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Sprintf("%s: %v", dest, err)
	}
	target, ok := resolve(from, p)
	if !ok {
		return fmt.Sprintf("%s points outside the repository", dest)
	}
	if !c.r.exists(target) {
		return fmt.Sprintf("%s: the repository has no %s", dest, target)
	}
	if frag == "" || !strings.HasSuffix(target, ".md") || !c.r.files[target] {
		return ""
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	doc, err := c.page(target)
	if err != nil {
		return fmt.Sprintf("%s: %v", dest, err)
	}
	if !doc.anchors[frag] {
		return fmt.Sprintf("%s: %s has no heading with the anchor #%s", dest, target, frag)
	}
	return ""
}

// resolve is the repository path that p, written in file from, names: relative to from's
// directory, or to the root when it starts with "/" (as on GitHub). ok is false when it
// leads outside the repository.
func resolve(from, p string) (target string, ok bool) {
	switch {
	case p == "":
		target = from
	case strings.HasPrefix(p, "/"):
		target = path.Clean(strings.TrimLeft(p, "/"))
	default:
		target = path.Clean(path.Join(path.Dir(from), p))
	}
	if target == ".." || strings.HasPrefix(target, "../") {
		return "", false
	}
	return target, true
}

// mentionResolves reports whether a file name written in prose in page from names a file of
// the repository, relative to the page or to the root.
func (c *checker) mentionResolves(from, name string) bool {
	for _, base := range []string{path.Dir(from), "."} {
		if t, ok := resolve(base+"/x", name); ok && c.r.exists(t) {
			return true
		}
	}
	return false
}

var (
	// docPath is a docs/ path in a comment, with the heading anchor it may carry.
	docPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])(#[A-Za-z0-9_-]+)?`)
	// bareRef is a reference page named without its directory: a reader cannot tell which
	// file it is, and the names are those of the notes outside the repository.
	bareRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:cli|hostabi|engine|language|plugins|functions|abi-v1|plugin-protocol|api)\.md)\b`)
)

// checkSource checks the comments of a Go or proto file.
func (c *checker) checkSource(rel, src string) []problem {
	var probs []problem
	for _, cm := range comments(rel, src) {
		probs = append(probs, outsideMentions(rel, cm.text, cm.line)...)
		for i, line := range strings.Split(cm.text, "\n") {
			for _, m := range docPath.FindAllStringSubmatch(line, -1) {
				c.docPaths++
				p := path.Clean(m[1])
				if !c.r.exists(p) {
					probs = append(probs, problem{rel, cm.line + i, fmt.Sprintf("cites %s, which the repository does not have", m[1])})
					continue
				}
				if m[2] != "" {
					if msg := c.checkLink("x", p+m[2]); msg != "" {
						probs = append(probs, problem{rel, cm.line + i, msg})
					}
				}
			}
			for _, m := range bareRef.FindAllStringSubmatch(line, -1) {
				probs = append(probs, problem{rel, cm.line + i, fmt.Sprintf(
					"cites %s without its directory: write its path, such as docs/reference/%s or docs/%s", m[1], m[1], m[1])})
			}
		}
	}
	return probs
}

// comment is the text of one comment and the line it starts on.
type comment struct {
	text string
	line int
}

// comments returns the comments of a Go file (found by Go's own scanner, so that strings are
// not taken for comments, and a file that does not compile is still read) or of a proto file
// (// to the end of the line).
func comments(rel, src string) []comment {
	var out []comment
	if strings.HasSuffix(rel, ".proto") {
		for i, line := range strings.Split(src, "\n") {
			if _, text, ok := strings.Cut(line, "//"); ok {
				out = append(out, comment{text, i + 1})
			}
		}
		return out
	}
	fset := token.NewFileSet()
	file := fset.AddFile(rel, -1, len(src))
	var s scanner.Scanner
	s.Init(file, []byte(src), func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			out = append(out, comment{lit, fset.Position(pos).Line})
		}
	}
}
