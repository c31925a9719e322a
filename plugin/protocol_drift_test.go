package plugin

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/plugin/sdk"
)

// The plugin protocol's version is written down more than once on purpose: as
// internal/version.PluginProtocol (what saved plans and `fuscia version` report), as
// plugin/sdk's ProtocolVersion (what a plugin sends in GetSchema), in sdk.Handshake (what
// go-plugin checks on both ends), and in what this host accepts. These tests fail when one
// copy moves without the others.

func TestProtocolVersionDrift(t *testing.T) {
	if sdk.ProtocolVersion != version.PluginProtocol {
		t.Errorf("sdk.ProtocolVersion is %d, internal/version.PluginProtocol %d", sdk.ProtocolVersion, version.PluginProtocol)
	}
	if int(sdk.Handshake.ProtocolVersion) != version.PluginProtocol {
		t.Errorf("sdk.Handshake.ProtocolVersion is %d, internal/version.PluginProtocol %d", sdk.Handshake.ProtocolVersion, version.PluginProtocol)
	}

	// The host accepts the schema of a plugin that speaks internal/version's protocol, and no
	// other.
	target := Target{Name: "drift"}
	if err := target.Check(&Schema{Name: "drift", ProtocolVersion: version.PluginProtocol}); err != nil {
		t.Errorf("Check refuses a plugin that speaks protocol %d: %v", version.PluginProtocol, err)
	}
	if err := target.Check(&Schema{Name: "drift", ProtocolVersion: version.PluginProtocol + 1}); err == nil {
		t.Errorf("Check accepts a plugin that speaks protocol %d", version.PluginProtocol+1)
	}
}

// TestHostHandshakeIsTheSDKs: every go-plugin client this package configures uses
// sdk.Handshake itself, so that the host's cookie and protocol version cannot drift from the
// plugins': a literal handshake here would be a second copy.
func TestHostHandshakeIsTheSDKs(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	configs := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isSelector(lit.Type, "goplugin", "ClientConfig") {
				return true
			}
			configs++
			for _, elt := range lit.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "HandshakeConfig" {
					if !isSelector(kv.Value, "sdk", "Handshake") {
						t.Errorf("%s: a goplugin.ClientConfig's HandshakeConfig is not sdk.Handshake", fset.Position(kv.Pos()))
					}
					return true
				}
			}
			t.Errorf("%s: a goplugin.ClientConfig without HandshakeConfig: sdk.Handshake", fset.Position(lit.Pos()))
			return true
		})
	}
	if configs == 0 {
		t.Fatal("found no goplugin.ClientConfig in package plugin; this test's reading of manager.go is out of date")
	}
}

// isSelector reports whether e is pkg.name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
