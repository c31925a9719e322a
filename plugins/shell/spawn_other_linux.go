//go:build linux && !(amd64 && cgo)

package main

// spawnFast needs cgo on amd64 (spawn_linux_amd64.c); elsewhere the plugin uses Go's fork.
func spawnFast(spawnSpec) (started, error) {
	return started{pid: -1, pidfd: -1}, errNoFastSpawn
}
