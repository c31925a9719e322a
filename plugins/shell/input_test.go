package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

func TestCheckInput(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want []string // problem paths
	}{
		{"ok", Input{Command: "/bin/echo", Args: []string{"a b"}, Workdir: "/tmp", Timeout: "5s"}, nil},
		{"relative command", Input{Command: "echo"}, []string{"/command"}},
		{"dot-relative command", Input{Command: "./run.sh"}, []string{"/command"}},
		{"missing command", Input{}, []string{"/command"}},
		{"dotdot workdir", Input{Command: "/bin/echo", Workdir: "/srv/app/../etc"}, []string{"/workdir"}},
		{"trailing dotdot workdir", Input{Command: "/bin/echo", Workdir: "/srv/.."}, []string{"/workdir"}},
		{"dots in a name are fine", Input{Command: "/bin/echo", Workdir: "/srv/a..b/.x"}, nil},
		{"relative workdir", Input{Command: "/bin/echo", Workdir: "build"}, []string{"/workdir"}},
		{"bad timeout", Input{Command: "/bin/echo", Timeout: "ten seconds"}, []string{"/timeout"}},
		{"NUL in an arg", Input{Command: "/bin/echo", Args: []string{"ok", "a\x00b"}}, []string{"/args/1"}},
		{"bad env name", Input{Command: "/bin/echo", Env: map[string]string{"A=B": "1"}}, []string{"/env/A=B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range checkInput(tt.in, execcore.AllKnown) {
				got = append(got, p.Path)
				if !strings.Contains(p.Summary, strings.Split(p.Path, "/")[1]) {
					t.Errorf("summary %q does not name the field of %s", p.Summary, p.Path)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("paths = %v, want %v", got, tt.want)
			}
		})
	}
}

// At plan time an unknown value is null in the input and must not be reported.
func TestCheckInputSkipsUnknowns(t *testing.T) {
	unknown := map[string]bool{"/command": true, "/workdir": true, "/timeout": true}
	known := func(p string) bool { return !unknown[p] }
	if ps := checkInput(Input{}, known); len(ps) != 0 {
		t.Errorf("problems with every checked value unknown: %v", ps)
	}
	ps := checkInput(Input{Command: "ls"}, func(p string) bool { return p != "/workdir" })
	if len(ps) != 1 || ps[0].Path != "/command" {
		t.Errorf("a known relative command must still be reported: %v", ps)
	}
}

func TestRunRefusesBadInputAsValidation(t *testing.T) {
	for _, in := range []Input{{Command: "echo", Args: []string{"hi"}}, {Command: "/bin/echo", Workdir: "/tmp/../etc"}} {
		_, err := run(context.Background(), in)
		var e *execcore.Error
		if !errors.As(err, &e) || e.Kind != execcore.Invalid {
			t.Fatalf("run(%+v) = %v, want a validation error", in, err)
		}
		field := strings.TrimPrefix(e.Path, "/")
		if !strings.Contains(err.Error(), field) {
			t.Errorf("message %q does not name %s", err, field)
		}
	}
}
