package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// SSH sends a command to the server as one string, which sshd hands to the remote user's
// login shell (`$SHELL -c STRING`): there is no way to pass an argument vector. So, as the
// shell plugin passes `args` verbatim, this plugin quotes each argument for the remote shell
// and joins them; no value reaches the shell as code. A command line for the shell itself is
// taken only when the input says `shell = true`.

// Command is the exec task's `command`: a list of arguments (the program first) or a string,
// which is one program name, or with `shell = true` a command line for the remote shell.
type Command struct {
	// List holds the arguments when the input gave a list; nil when it gave a string.
	List []string
	// Line is the string the input gave.
	Line string
}

// UnmarshalJSON takes a string or a list of strings. At plan time an unknown element is null,
// which leaves "" in its place (checkInput does not look at it).
func (c *Command) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '[':
		var list []*string
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("command must be a string or a list of strings: %w", err)
		}
		c.List, c.Line = make([]string, len(list)), ""
		for i, s := range list {
			if s != nil {
				c.List[i] = *s
			}
		}
		return nil
	case len(b) > 0 && b[0] == '"':
		c.List = nil
		return json.Unmarshal(b, &c.Line)
	}
	return fmt.Errorf("command must be a string or a list of strings, not %s", b)
}

// MarshalJSON writes the form the input used.
func (c Command) MarshalJSON() ([]byte, error) {
	if c.List != nil {
		return json.Marshal(c.List)
	}
	return json.Marshal(c.Line)
}

// JSONSchema says what UnmarshalJSON takes, for the task's input schema.
func (Command) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MinItems: ptr(uint64(1))},
			{Type: "string"},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// shellSpecial are the characters that make a string more than a program name to a POSIX
// shell: separators, quotes, expansions, redirections, globs, comments, assignments.
const shellSpecial = " \t\n\r\v\f|&;<>()$`\\\"'*?[]#~={}!"

// argv is the argument vector of a command given without `shell = true`: the command's list,
// or its one program name, then args. checkInput has refused what this would misread.
func argv(in Input) []string {
	if in.Command.List != nil {
		return append(append([]string(nil), in.Command.List...), in.Args...)
	}
	return append([]string{in.Command.Line}, in.Args...)
}

// commandLine is what the plugin sends to the server: the arguments, each quoted, or with
// `shell = true` the command line as the input gave it.
func commandLine(in Input) string {
	if in.Shell {
		return in.Command.Line
	}
	args := argv(in)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// shellQuote quotes s as one word for a POSIX shell (sh, bash, dash, ksh, zsh): inside single
// quotes every byte is literal except the single quote itself, which is written as '\” (end
// the quoted part, an escaped quote, start another). Every word is quoted, even a plain one, so
// that the first cannot be read as a keyword (if, !) or an assignment (A=b).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commandName is how an error names the remote command: the program only, since the rest
// may carry secrets and the node's input already has it.
func commandName(in Input) string {
	if in.Command.List != nil {
		if len(in.Command.List) > 0 {
			return in.Command.List[0]
		}
		return ""
	}
	if f := strings.Fields(in.Command.Line); len(f) > 0 {
		return f[0]
	}
	return ""
}

// checkCommand returns what is wrong with the command, args and shell of in.
func checkCommand(in Input, known execcore.Known) []execcore.Problem {
	var ps []execcore.Problem
	switch {
	case !known("/command") && in.Command.List == nil:
		// Unknown as a whole: its form is not known either.
	case in.Shell:
		ps = checkShellLine(in, known)
	default:
		ps = checkArgv(in, known)
	}
	for i, a := range in.Args {
		if strings.ContainsRune(a, 0) {
			ps = append(ps, execcore.Problem{Path: fmt.Sprintf("/args/%d", i), Summary: "args contains a NUL byte"})
		}
	}
	return ps
}

// checkShellLine checks a command with shell = true: one command line, no args.
func checkShellLine(in Input, known execcore.Known) []execcore.Problem {
	switch {
	case in.Command.List != nil:
		return []execcore.Problem{{Path: "/command", Summary: "command must be a string with shell = true",
			Detail: "shell = true sends the command line to the remote shell as it is; give it as one string, or drop shell and keep the list"}}
	case len(in.Args) > 0 || !known("/args"):
		return []execcore.Problem{{Path: "/args", Summary: "args cannot be used with shell = true",
			Detail: "the remote shell reads one command line; put the arguments in it, quoted, or drop shell and give the program and its arguments as a list"}}
	case !known("/command"):
		return nil
	case strings.TrimSpace(in.Command.Line) == "":
		return []execcore.Problem{{Path: "/command", Summary: "command is required",
			Detail: "the command line the remote shell runs, e.g. \"systemctl restart app && systemctl is-active app\""}}
	case strings.ContainsRune(in.Command.Line, 0):
		return []execcore.Problem{{Path: "/command", Summary: "command contains a NUL byte"}}
	}
	return nil
}

// checkArgv checks a command without shell: a list, or a program name alone.
func checkArgv(in Input, known execcore.Known) []execcore.Problem {
	if in.Command.List != nil {
		if len(in.Command.List) == 0 {
			return []execcore.Problem{{Path: "/command", Summary: "command is required",
				Detail: "the program and its arguments, e.g. [\"systemctl\", \"restart\", \"app\"]"}}
		}
		var ps []execcore.Problem
		if known("/command/0") && in.Command.List[0] == "" {
			ps = append(ps, execcore.Problem{Path: "/command/0", Summary: "command has no program",
				Detail: "the first element is the program to run, e.g. \"systemctl\""})
		}
		for i, a := range in.Command.List {
			if strings.ContainsRune(a, 0) {
				ps = append(ps, execcore.Problem{Path: fmt.Sprintf("/command/%d", i), Summary: "command contains a NUL byte"})
			}
		}
		return ps
	}
	switch line := in.Command.Line; {
	case strings.TrimSpace(line) == "":
		return []execcore.Problem{{Path: "/command", Summary: "command is required",
			Detail: "the program and its arguments as a list, e.g. [\"systemctl\", \"restart\", \"app\"]"}}
	case strings.ContainsAny(line, shellSpecial) || strings.ContainsRune(line, 0):
		// A command line written for a shell. Quoted, it would name a program after the whole
		// line; sent as it is, a value spliced into it would be shell code. The message names
		// the first word only: the rest may hold a secret.
		return []execcore.Problem{{Path: "/command", Summary: "command needs a shell",
			Detail: fmt.Sprintf("the command starting with %q has spaces or shell syntax. Give the program and its arguments as a list, each passed as it is: command = [\"systemctl\", \"restart\", \"app\"]. Or set shell = true to have the remote shell interpret the line, and quote for it any value spliced in",
				commandName(in))}}
	}
	return nil
}
