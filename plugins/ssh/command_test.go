package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// quotingCases are arguments a remote shell must receive exactly.
var quotingCases = []string{
	"plain",
	"",
	"two words",
	"  leading and trailing  ",
	"it's",
	"''",
	`"double"`,
	"$(id)",
	"`id`",
	"${HOME}",
	"$HOME",
	"a;b",
	"a && b || c | d",
	"> /tmp/x < /etc/passwd",
	"line1\nline2\n",
	"tab\there",
	"*",
	"?[a-z]",
	"~",
	"~root/x",
	"#comment",
	"A=b",
	"!",
	"if",
	`back\slash\`,
	`'\''`,
	"ünïcödé ✓ 日本",
	"-n",
	"{a,b}",
}

// TestShellQuote runs every quoted case through a real POSIX shell, /bin/sh, and checks that
// it arrives as one argument, byte for byte.
func TestShellQuote(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to check the quoting with")
	}
	for _, arg := range quotingCases {
		q := shellQuote(arg)
		out, err := exec.Command("/bin/sh", "-c", `printf '%s\0' `+q+` "end"`).Output()
		if err != nil {
			t.Errorf("%q quoted as %s: sh: %v", arg, q, err)
			continue
		}
		if got := string(out); got != arg+"\x00end\x00" {
			t.Errorf("%q quoted as %s arrived as %q", arg, q, got)
		}
	}
	// The table of the README.
	for in, want := range map[string]string{"plain": "'plain'", "": "''", "it's": `'it'\''s'`, "$(id)": "'$(id)'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"list", Input{Command: Command{List: []string{"echo", "$(id)", "a;b"}}}, `'echo' '$(id)' 'a;b'`},
		{"list and args", Input{Command: Command{List: []string{"ls"}}, Args: []string{"-l", "my dir"}}, `'ls' '-l' 'my dir'`},
		{"program name and args", Input{Command: Command{Line: "grep"}, Args: []string{"-c", "it's"}}, `'grep' '-c' 'it'\''s'`},
		{"program name alone", Input{Command: Command{Line: "uptime"}}, `'uptime'`},
		{"shell", Input{Command: Command{Line: "echo $HOME; ls | wc -l"}, Shell: true}, `echo $HOME; ls | wc -l`},
	}
	for _, tt := range tests {
		if got := commandLine(tt.in); got != tt.want {
			t.Errorf("%s: commandLine = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestCheckCommand(t *testing.T) {
	list := func(args ...string) Command { return Command{List: args} }
	line := func(s string) Command { return Command{Line: s} }
	tests := []struct {
		name    string
		in      Input
		unknown []string
		want    string // problem paths and summaries, "; "-separated
	}{
		{"list", Input{Command: list("echo", "$(id)")}, nil, ""},
		{"program name", Input{Command: line("uptime")}, nil, ""},
		{"program path and args", Input{Command: line("/usr/bin/env"), Args: []string{"a b"}}, nil, ""},
		{"non-ASCII program", Input{Command: line("café")}, nil, ""},
		{"shell line", Input{Command: line("systemctl restart app"), Shell: true}, nil, ""},
		{"line without shell", Input{Command: line("systemctl restart app")}, nil, "/command command needs a shell"},
		{"substitution without shell", Input{Command: line("echo$(id)")}, nil, "/command command needs a shell"},
		{"semicolon without shell", Input{Command: line("true;id")}, nil, "/command command needs a shell"},
		{"assignment without shell", Input{Command: line("A=b")}, nil, "/command command needs a shell"},
		{"no command", Input{}, nil, "/command command is required"},
		{"blank command", Input{Command: line(" ")}, nil, "/command command is required"},
		{"empty list", Input{Command: list()}, nil, "/command command is required"},
		{"empty program", Input{Command: list("", "x")}, nil, "/command/0 command has no program"},
		{"empty argument", Input{Command: list("printf", "%s|", "")}, nil, ""},
		{"NUL in list", Input{Command: list("echo", "a\x00b")}, nil, "/command/1 command contains a NUL byte"},
		{"NUL in args", Input{Command: list("echo"), Args: []string{"\x00"}}, nil, "/args/0 args contains a NUL byte"},
		{"list with shell", Input{Command: list("echo", "x"), Shell: true}, nil, "/command command must be a string with shell = true"},
		{"args with shell", Input{Command: line("echo"), Args: []string{"x"}, Shell: true}, nil, "/args args cannot be used with shell = true"},
		{"blank line with shell", Input{Command: line(""), Shell: true}, nil, "/command command is required"},
		{"unknown command", Input{}, []string{"/command"}, ""},
		{"unknown program", Input{Command: list("", "x")}, []string{"/command/0"}, ""},
		{"unknown argument", Input{Command: list("echo", "")}, []string{"/command/1"}, ""},
		{"unknown args with shell", Input{Command: line("echo x"), Shell: true}, []string{"/args"}, "/args args cannot be used with shell = true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			known := func(p string) bool {
				for _, u := range tt.unknown {
					if p == u || strings.HasPrefix(u, p+"/") || strings.HasPrefix(p, u+"/") {
						return false
					}
				}
				return true
			}
			var got []string
			for _, p := range checkCommand(tt.in, known) {
				got = append(got, p.Path+" "+p.Summary)
			}
			if g := strings.Join(got, "; "); g != tt.want {
				t.Errorf("problems = %q, want %q", g, tt.want)
			}
		})
	}
}

// TestNeedsShellMessageHidesTheRest: the refusal of a command line names its first word only,
// as run-time errors do: the rest may hold a secret.
func TestNeedsShellMessageHidesTheRest(t *testing.T) {
	ps := checkCommand(Input{Command: Command{Line: "curl -H token:s3cr3t https://x"}}, execcore.AllKnown)
	if len(ps) != 1 || !strings.Contains(ps[0].Detail, `"curl"`) || !strings.Contains(ps[0].Detail, "shell = true") || strings.Contains(ps[0].Detail, "s3cr3t") {
		t.Errorf("problems = %+v", ps)
	}
}

func TestCommandJSON(t *testing.T) {
	tests := []struct {
		doc  string
		want Command
		bad  bool
	}{
		{`{"command": "uptime"}`, Command{Line: "uptime"}, false},
		{`{"command": ["echo", "a b"]}`, Command{List: []string{"echo", "a b"}}, false},
		{`{"command": []}`, Command{List: []string{}}, false},
		{`{"command": ["echo", null]}`, Command{List: []string{"echo", ""}}, false}, // an unknown at plan time
		{`{"command": null}`, Command{}, false},
		{`{"command": 42}`, Command{}, true},
		{`{"command": ["echo", 42]}`, Command{}, true},
		{`{"command": {"a": 1}}`, Command{}, true},
	}
	for _, tt := range tests {
		var in Input
		err := json.Unmarshal([]byte(tt.doc), &in)
		if tt.bad {
			if err == nil || !strings.Contains(err.Error(), "string or a list of strings") {
				t.Errorf("%s: err = %v, want a refusal", tt.doc, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.doc, err)
			continue
		}
		if in.Command.Line != tt.want.Line || strings.Join(in.Command.List, "\x00") != strings.Join(tt.want.List, "\x00") || (in.Command.List == nil) != (tt.want.List == nil) {
			t.Errorf("%s: decoded %#v, want %#v", tt.doc, in.Command, tt.want)
		}
		if out, _ := json.Marshal(in.Command); tt.want.List != nil && string(out) != mustMarshal(t, tt.want.List) {
			t.Errorf("%s: encodes back as %s", tt.doc, out)
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestArgumentsReachTheRemoteProgram runs commands on the test server, which hands each
// command line to /bin/sh -c as sshd does: every argument arrives as it was given, none runs
// as shell code.
func TestArgumentsReachTheRemoteProgram(t *testing.T) {
	f := newFixture(t)
	out, err := f.r.Run(context.Background(), f.argvInput("echo", "$(id)", "a;b"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stdout != "$(id) a;b\n" {
		t.Errorf("echo $(id) a;b printed %q", out.Stdout)
	}

	canary := filepath.Join(t.TempDir(), "pwned")
	args := append([]string{"printf", `%s\0`}, quotingCases...)
	args = append(args, "; touch "+canary, "$(touch "+canary+")", "`touch "+canary+"`", "'; touch "+canary+"; '")
	out, err = f.r.Run(context.Background(), f.argvInput(args...), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(args[2:], "\x00") + "\x00"; out.Stdout != want {
		t.Errorf("printf of the arguments printed %q,\nwant %q", out.Stdout, want)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("an argument ran as shell code: the canary file exists")
	}

	// The program name and args form, as the shell plugin's.
	in := f.argvInput()
	in.Command, in.Args = Command{Line: "printf"}, []string{"%s|", "a b", "$HOME", ""}
	if out, err = f.r.Run(context.Background(), in, Config{}); err != nil || out.Stdout != "a b|$HOME||" {
		t.Errorf("printf with args: %q, %v", out.Stdout, err)
	}

	// A command line without shell = true is refused before anything runs.
	in = f.argvInput()
	in.Command = Command{Line: "touch " + canary}
	_, err = f.r.Run(context.Background(), in, Config{})
	if execcore.KindOf(err) != execcore.Invalid || !strings.Contains(err.Error(), "command needs a shell") {
		t.Errorf("a command line without shell: %v, want a validation error", err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("a command line without shell = true ran")
	}
	// With shell = true it is the remote shell's.
	in.Shell = true
	if _, err := f.r.Run(context.Background(), in, Config{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Errorf("shell = true did not run the line: %v", err)
	}
}
