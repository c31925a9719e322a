// Package ui is the web UI that `fuscia serve` serves at /ui/ on -listen (docs/ui.md): its
// assets, embedded in the binary, and the login that exchanges an API token for a session
// cookie.
package ui

import "embed"

// Assets are the UI's files: index.html, the scripts and the style sheet. Nothing is fetched
// from elsewhere.
//
//go:embed assets
var Assets embed.FS
