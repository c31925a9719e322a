package taskresult

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly keeps this package free of any dependency outside the standard
// library, on the host and on the Wasm target: hostabi/guest, which components compile in
// (with Go's wasip1 port or TinyGo), imports it.
func TestStandardLibraryOnly(t *testing.T) {
	const self = "github.com/fuscia/fuscia/internal/taskresult"
	for _, env := range [][]string{nil, {"GOOS=wasip1", "GOARCH=wasm"}} {
		deps := nonStandardDeps(t, self, env)
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s (%s) listed nothing, not even the package itself", self, target(env))
		}
		for _, dep := range deps {
			if dep != self {
				t.Errorf("%s (%s) depends on %s, which is not in the standard library; keep it stdlib-only",
					self, target(env), dep)
			}
		}
	}
}

// nonStandardDeps lists what pkg depends on, itself included, outside the standard library,
// as `go list -deps` sees it in env.
func nonStandardDeps(t *testing.T, pkg string, env []string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s (%s): %s", pkg, target(env), msg)
	}
	return strings.Fields(string(out))
}

// target names the build env selects, for messages.
func target(env []string) string {
	if len(env) == 0 {
		return "host build"
	}
	return strings.Join(env, " ")
}
