package builtin

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
)

// A URL derived from a secret (a token in the path or the query, credentials in the user
// info) must not reach a message: builtin.http's errors are journaled, shown and logged. The
// engine's scrubber removes the secret's own forms, but not what a workflow built from it
// (base64 of it, a hash, a path segment computed from it), so such a URL is never quoted: a
// message names its scheme and host, and a response body quoted in an error has the URL's
// parts removed.

// sensitiveURL is u in a message when it is sensitive: scheme and host only.
func sensitiveURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + "/… (sensitive URL)"
}

// minHiddenPart is the shortest URL part urlHider removes: shorter ones ("v1", "id") would
// blank ordinary words of the body.
const minHiddenPart = 4

// urlHider returns a function that removes from a text the parts of u a server may repeat in
// an error page: the path and the query, whole, decoded or escaped, their segments and
// values, and the user info.
func urlHider(u *url.URL) func(string) string {
	var parts []string
	add := func(s string) {
		if len(s) >= minHiddenPart && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	add(u.RequestURI())
	add(u.Path)
	add(u.EscapedPath())
	add(u.RawQuery)
	for _, seg := range strings.Split(u.Path, "/") {
		add(seg)
		add(url.PathEscape(seg))
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		add(seg)
	}
	for k, vs := range u.Query() {
		add(k)
		for _, v := range vs {
			add(v)
			add(url.QueryEscape(v))
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	if len(parts) == 0 {
		return func(s string) string { return s }
	}
	// strings.Replacer tries its patterns in order at each position: longest first, so that
	// a whole path goes before one of its segments.
	slices.SortFunc(parts, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(parts))
	for _, p := range parts {
		pairs = append(pairs, p, "(sensitive)")
	}
	return strings.NewReplacer(pairs...).Replace
}
