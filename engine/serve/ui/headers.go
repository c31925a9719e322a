package ui

import "net/http"

// ContentSecurityPolicy is the policy of every /ui/ answer: the page runs only the scripts and
// style sheets it is served from /ui/assets/ (no inline script, no style attribute in HTML, no
// eval), talks only to its own origin, and no other site may frame it.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// SetHeaders sets the security headers every /ui/ answer carries (docs/security.md, "Web UI
// sessions"), whatever the answer: a page, an asset, a session's JSON or an error.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// frame-ancestors says it to current browsers; X-Frame-Options to older ones.
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
