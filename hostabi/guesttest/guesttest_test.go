package guesttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSDKDirsCoverItsDeps: every package of this module that a component's build compiles
// (the SDK and what it imports here) is hashed into the build's cache key, so that a change to
// it rebuilds the test components instead of reusing a stale one.
func TestSDKDirsCoverItsDeps(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./hostabi/guest")
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	hashed := sdkDirs()
	for i, d := range hashed {
		hashed[i] = filepath.Clean(d)
	}
	for _, dir := range strings.Fields(string(out)) {
		if !slices.Contains(hashed, filepath.Clean(dir)) {
			t.Errorf("the SDK builds %s, which sdkDirs leaves out of the components' cache key", dir)
		}
	}
}
