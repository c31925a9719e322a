//go:build !wasip1

package guest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly keeps the SDK a component can be built from with nothing but Go (or
// TinyGo): outside the standard library, hostabi/guest may depend only on
// internal/taskresult, the result model it shares with plugin/sdk, and internal/jsonenc, the
// appenders that write JSON as encoding/json does. Their dependencies are among the guest's,
// so this test keeps them stdlib-only too. Both the host build (where components'
// logic is unit-tested) and the Wasm build are checked, since abi_wasip1.go and host_other.go import different packages.
func TestStandardLibraryOnly(t *testing.T) {
	const self = "github.com/fuscia/fuscia/hostabi/guest"
	allowed := map[string]bool{
		self: true,
		"github.com/fuscia/fuscia/internal/taskresult": true,
		"github.com/fuscia/fuscia/internal/jsonenc":    true,
	}
	for _, env := range [][]string{nil, {"GOOS=wasip1", "GOARCH=wasm"}} {
		deps := nonStandardDeps(t, self, env)
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s (%s) listed nothing, not even the package itself", self, target(env))
		}
		for _, dep := range deps {
			if !allowed[dep] {
				t.Errorf("%s (%s) depends on %s, which is not in the standard library: components build with the SDK alone, so keep it out (only internal/taskresult and internal/jsonenc are allowed)",
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
