package ui

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The rules the UI's files keep (docs/ui.md, docs/security.md): the Content-Security-Policy
// allows no inline script, no style attribute and no other origin, and text that comes from
// workflows and runs (names, outputs, errors) goes in as text, never as HTML.

// assetText returns every embedded file with the given extension, by name.
func assetText(t *testing.T, ext string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := fs.WalkDir(Assets, assetsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ext {
			return err
		}
		b, err := fs.ReadFile(Assets, p)
		files[strings.TrimPrefix(p, assetsDir+"/")] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestAssetsHTMLHasNothingInline: index.html loads its one module script and style sheet from
// /ui/assets/ and has no inline script, event handler or style attribute, which the CSP refuses.
func TestAssetsHTMLHasNothingInline(t *testing.T) {
	for name, html := range assetText(t, ".html") {
		for _, m := range regexp.MustCompile(`(?is)<script\b[^>]*>`).FindAllString(html, -1) {
			if !regexp.MustCompile(`\bsrc="/ui/assets/[^"]+\.js"`).MatchString(m) || !strings.Contains(m, `type="module"`) {
				t.Errorf("%s: %s is not a module script from /ui/assets/", name, m)
			}
		}
		if regexp.MustCompile(`(?is)<script\b[^>]*>\s*[^<\s]`).MatchString(html) {
			t.Errorf("%s: an inline script", name)
		}
		if m := regexp.MustCompile(`(?i)<[^>]+\s(on[a-z]+|style)\s*=`).FindString(html); m != "" {
			t.Errorf("%s: an inline handler or style attribute: %s", name, m)
		}
		if m := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).FindString(html); m != "" {
			t.Errorf("%s: loads from another origin: %s", name, m)
		}
	}
}

// TestAssetsScriptsKeepTextAsText: no script writes HTML from strings or evaluates code, sets a
// style attribute, or names another origin (but the SVG namespace).
func TestAssetsScriptsKeepTextAsText(t *testing.T) {
	forbidden := []struct {
		re  *regexp.Regexp
		why string
	}{
		{regexp.MustCompile(`\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment`), "HTML from a string"},
		{regexp.MustCompile(`\beval\s*\(|new\s+Function\b|setTimeout\s*\(\s*['"\x60]`), "code from a string"},
		{regexp.MustCompile(`setAttribute\(\s*['"]style['"]|\bstyle:\s*['"]`), "a style attribute (refused by the CSP)"},
		{regexp.MustCompile(`(?:https?:)?//(?:[a-z0-9-]+\.)+[a-z]{2,}`), "another origin"},
	}
	scripts := assetText(t, ".js")
	if len(scripts) == 0 {
		t.Fatal("no scripts in the assets")
	}
	for name, js := range scripts {
		for i, line := range strings.Split(js, "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "//") {
				continue
			}
			code = strings.ReplaceAll(code, "http://www.w3.org/2000/svg", "")
			for _, f := range forbidden {
				if m := f.re.FindString(code); m != "" {
					t.Errorf("%s:%d: %s (%q)", name, i+1, f.why, m)
				}
			}
		}
	}
}

// TestAssetsImportsResolve: every module a script imports is an embedded asset, so a page
// never fails on a missing file.
func TestAssetsImportsResolve(t *testing.T) {
	scripts := assetText(t, ".js")
	imp := regexp.MustCompile(`(?m)^\s*import\b[^'"]*['"]([^'"]+)['"]`)
	for name, js := range scripts {
		for _, m := range imp.FindAllStringSubmatch(js, -1) {
			target := m[1]
			if !strings.HasPrefix(target, "./") {
				t.Errorf("%s imports %q: only ./ paths to the UI's own modules", name, target)
				continue
			}
			if _, ok := scripts[path.Join(path.Dir(name), target)]; !ok {
				t.Errorf("%s imports %q, which is not in the assets", name, target)
			}
		}
	}
}

// TestAssetsStylesAreLocal: the style sheets import nothing and use no web font or image
// from elsewhere.
func TestAssetsStylesAreLocal(t *testing.T) {
	for name, css := range assetText(t, ".css") {
		if m := regexp.MustCompile(`(?i)@import|@font-face|url\(\s*['"]?(https?:)?//`).FindString(css); m != "" {
			t.Errorf("%s: %s (nothing is fetched from elsewhere)", name, m)
		}
	}
}

// TestAssetsModulesPreloaded: index.html names every module with a modulepreload link (and
// nothing else), so the browser fetches them at once instead of one import level at a time.
func TestAssetsModulesPreloaded(t *testing.T) {
	html := assetText(t, ".html")["index.html"]
	preloaded := map[string]bool{}
	for _, m := range regexp.MustCompile(`<link rel="modulepreload" href="/ui/assets/([^"]+)">`).FindAllStringSubmatch(html, -1) {
		preloaded[m[1]] = true
	}
	scripts := assetText(t, ".js")
	for name := range scripts {
		if name != "app.js" && !preloaded[name] {
			t.Errorf("index.html does not preload %s", name)
		}
	}
	for name := range preloaded {
		if _, ok := scripts[name]; !ok {
			t.Errorf("index.html preloads %s, which is not in the assets", name)
		}
	}
}
