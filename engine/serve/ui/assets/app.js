// The Fuscia UI: see docs/ui.md.
