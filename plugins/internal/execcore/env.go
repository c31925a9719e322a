package execcore

import (
	"maps"
	"slices"
)

// SortedKeys returns m's keys in order, so problems and environments are deterministic.
func SortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// EnvList returns m as NAME=value strings, sorted by name. It never returns nil: for os/exec a
// nil Env means "inherit the plugin's environment", which is exactly what an exec task must not do.
func EnvList(m map[string]string) []string {
	env := make([]string, 0, len(m))
	for _, k := range SortedKeys(m) {
		env = append(env, k+"="+m[k])
	}
	return env
}
