package hostabi

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// frozenWorld is the sha256 of hostabi/wit/fuscia.wit without its comments and blank lines:
// the world fuscia:host@1.0.0 as components were first built against it (2026-11-26). It never
// changes: a component built against 1.0.0 must run on every later host. Additions go into a
// new version (fuscia:host@1.1.0, in a file of its own) whose host still defines all of 1.0.0.
const frozenWorld = "c86611bf9bf59a1f5d798b9f85e6073ff84cc0b55ee5cefeff4d4d062c004327"

// witSemantics is src without comments, blank lines and trailing spaces.
func witSemantics(src string) string {
	src = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
	var lines []string
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func TestWorldIsFrozen(t *testing.T) {
	src, err := os.ReadFile(witFile)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(witSemantics(string(src))))
	if got := hex.EncodeToString(sum[:]); got != frozenWorld {
		t.Fatalf("%s changed (sha256 of its declarations %s, want %s): world %s is frozen, components built against it must keep running. Put additions in a new minor version (fuscia:host@1.1.0) next to it, and keep this host defining 1.0.0",
			witFile, got, frozenWorld, World)
	}
	if !strings.Contains(string(src), "package fuscia:host@1.0.0;") {
		t.Fatalf("%s does not declare package fuscia:host@1.0.0", witFile)
	}
}

// TestComponentImportsAreTheWorlds: the host interface a component links is the WIT's, function
// for function and in order.
func TestComponentImportsAreTheWorlds(t *testing.T) {
	src, err := os.ReadFile(witFile)
	if err != nil {
		t.Fatal(err)
	}
	wit := witWorldImports(t, string(src), "component")
	var host []string
	for _, imp := range worldImports {
		host = append(host, imp.name)
	}
	if !slices.Equal(host, wit) {
		t.Fatalf("the component host interface defines %v; %s's world imports %v", host, witFile, wit)
	}
	for _, iface := range []string{HostInterface, TypesInterface} {
		name := strings.TrimSuffix(strings.TrimPrefix(iface, "fuscia:host/"), "@1.0.0")
		if _, ok := witBlock(string(src), "interface", name); !ok {
			t.Errorf("%s names interface %s, which %s does not declare", iface, name, witFile)
		}
	}
}
