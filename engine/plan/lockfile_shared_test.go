package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpdateLockSharedSource: two blocks of one source share the lock file's entry. With one
// version between them the entry records both constraints and stays put whatever the map
// order (a second plan, and -lockfile=readonly, see no change); two versions are an error that
// names the source, and nothing is written.
func TestUpdateLockSharedSource(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "w.fsc.hcl")
	same := &Resolution{Components: map[string]*ComponentLock{
		"a": {Source: "acme/text", Version: "1.2.0", Constraints: ">= 1.0", Digest: "sha256:aa"},
		"b": {Source: "acme/text", Version: "1.2.0", Constraints: "~> 1.2", Digest: "sha256:aa"},
	}, Plugins: map[string]*PluginLock{}}
	if changed, diags := UpdateLock(wf, same, false); diags.HasErrors() || !changed {
		t.Fatalf("first plan: changed %v, %v", changed, diags)
	}
	for i := range 20 { // map order differs from call to call
		if changed, diags := UpdateLock(wf, same, true); diags.HasErrors() || changed {
			t.Fatalf("plan %d: changed %v, %v; want no change", i+2, changed, diags)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, LockFileName))
	if err != nil || !strings.Contains(string(b), `constraints = ">= 1.0; ~> 1.2"`) {
		t.Fatalf("lock file %q (%v); want both constraints", b, err)
	}

	split := &Resolution{Components: map[string]*ComponentLock{
		"a": {Source: "acme/text", Version: "1.2.0", Digest: "sha256:aa"},
		"b": {Source: "acme/text", Version: "2.0.0", Digest: "sha256:bb"},
	}, Plugins: map[string]*PluginLock{}}
	changed, diags := UpdateLock(wf, split, false)
	if changed || !diags.HasErrors() || !strings.Contains(diags.Error(), "acme/text") || !strings.Contains(diags.Error(), "1.2.0 and 2.0.0") {
		t.Fatalf("two versions: changed %v, %v; want an error naming the source and both versions", changed, diags)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, LockFileName)); string(after) != string(b) {
		t.Errorf("the lock file changed after an error:\n%s", after)
	}
}
