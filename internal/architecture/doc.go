// Package architecture holds no code: its tests guard the shape of the module. The layers
// of docs/architecture.md are written down in layers_test.go, and a package may import only
// packages of lower layers; a new package must be given a layer.
package architecture
