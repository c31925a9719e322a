// Package plugin is the host side of Fuscia's plugin providers
// (docs/reference/plugin-protocol.md): with the go-plugin client it starts plugin binaries
// (found by plugin/discover) and calls them.
package plugin
