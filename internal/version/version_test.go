package version

import (
	"os"
	"regexp"
	"testing"
)

// TestWorldIsTheWIT: World names the package and the world of hostabi/wit/fuscia.wit, the
// contract components are built against, so that what `fuscia version` and the registry say
// is what the WIT file declares.
func TestWorldIsTheWIT(t *testing.T) {
	src, err := os.ReadFile("../../hostabi/wit/fuscia.wit")
	if err != nil {
		t.Fatal(err)
	}
	pkg := regexp.MustCompile(`(?m)^package ([a-z][a-z0-9-]*:[a-z][a-z0-9-]*)@([0-9]+\.[0-9]+\.[0-9]+);`).FindSubmatch(src)
	if pkg == nil {
		t.Fatal("hostabi/wit/fuscia.wit has no `package ns:name@x.y.z;` line")
	}
	worlds := regexp.MustCompile(`(?m)^world ([a-z][a-z0-9-]*) \{`).FindAllSubmatch(src, -1)
	if len(worlds) != 1 {
		t.Fatalf("hostabi/wit/fuscia.wit declares %d worlds; want exactly one", len(worlds))
	}
	if got := string(pkg[1]) + "/" + string(worlds[0][1]) + "@" + string(pkg[2]); got != World {
		t.Errorf("hostabi/wit/fuscia.wit declares the world %s; version.World is %s", got, World)
	}
	if ComponentABI == ABI {
		t.Errorf("ComponentABI and ABI are both %d: a manifest's abi must tell a component from a core module", ABI)
	}
}
