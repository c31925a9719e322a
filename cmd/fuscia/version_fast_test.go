package main

import (
	"testing"
)

// TestVersionFastPathMatchesGo: what version_fast.c prints before the Go runtime starts is
// byte for byte what runVersion prints, as text and as JSON (version_fast.h must change with
// internal/version).
func TestVersionFastPathMatchesGo(t *testing.T) {
	text, json := fastVersionTexts()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, text},
		{[]string{"version", "-json"}, json},
	} {
		code, stdout, stderr := runInProcess(t, c.args...)
		if code != exitOK || stderr != "" {
			t.Fatalf("fuscia %v in process: exit %d, stderr %q", c.args, code, stderr)
		}
		if stdout != c.want {
			t.Errorf("fuscia %v: runVersion prints\n%s\nversion_fast.h prints\n%s\nchange cmd/fuscia/version_fast.h with internal/version", c.args, stdout, c.want)
		}
	}
}

// TestVersionFastPathTaken: through the binary, `fuscia version` and its -json, -version and
// --version forms are answered before the Go runtime starts (GODEBUG=inittrace=1 would make
// the runtime print one line per package initializer on stderr), with Go's exact output; any
// other command line reaches Go.
func TestVersionFastPathTaken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = append(h.env, "GODEBUG=inittrace=1")
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}, {"version", "-json"}, {"--version", "--json"}} {
		r := h.run(args...)
		wantCode(t, r, exitOK)
		if r.stderr != "" {
			t.Errorf("fuscia %v went through Go's package initializers:\n%s", args, r)
		}
		_, want, _ := runInProcess(t, args...)
		if r.stdout != want {
			t.Errorf("fuscia %v printed\n%s\nin process it prints\n%s", args, r.stdout, want)
		}
	}
	for _, args := range [][]string{{"version", "-json=true"}, {"version", "-home", h.home}, {"version", "-json", "extra"}} {
		r := h.run(args...)
		if r.stderr == "" {
			t.Errorf("fuscia %v did not reach Go (no package initializer traced):\n%s", args, r)
		}
	}
}
