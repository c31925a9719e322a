package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// Input is the exec task's input.
type Input struct {
	Command        string            `json:"command" jsonschema_description:"Absolute path of the program to run. No shell and no PATH search."`
	Args           []string          `json:"args,omitempty" jsonschema_description:"Arguments, passed verbatim: no shell, no globbing, no interpolation."`
	Workdir        string            `json:"workdir,omitempty" jsonschema_description:"Absolute working directory; no '..' element. Default: the plugin process's working directory."`
	Env            map[string]string `json:"env,omitempty" jsonschema_description:"The child's whole environment: nothing is inherited, not even PATH or HOME."`
	Stdin          string            `json:"stdin,omitempty" jsonschema_description:"Written to the child's standard input, which is then closed. Empty: /dev/null."`
	Timeout        string            `json:"timeout,omitempty" jsonschema_description:"Go duration such as 30s or 5m. The process group is killed when it elapses; the attempt's deadline also applies."`
	AllowExitCodes []int             `json:"allow_exit_codes,omitempty" jsonschema_description:"Non-zero exit codes that count as success."`
}

// checkInput returns what is wrong with in. known tells which values are known: at plan time
// unknown values are skipped (they are null in in); at run time everything is known.
func checkInput(in Input, known execcore.Known) []execcore.Problem {
	var ps []execcore.Problem
	if known("/command") {
		switch {
		case in.Command == "":
			ps = append(ps, execcore.Problem{Path: "/command", Summary: "command is required",
				Detail: "name the program by its absolute path, e.g. /bin/echo"})
		case !filepath.IsAbs(in.Command):
			ps = append(ps, execcore.Problem{Path: "/command", Summary: "command must be an absolute path",
				Detail: fmt.Sprintf("got %q; the shell plugin runs no shell and does not search PATH, so name the program by its full path (e.g. /usr/bin/%s)", in.Command, filepath.Base(in.Command))})
		case strings.ContainsRune(in.Command, 0):
			ps = append(ps, execcore.Problem{Path: "/command", Summary: "command contains a NUL byte"})
		}
	}
	for i, a := range in.Args {
		if strings.ContainsRune(a, 0) {
			ps = append(ps, execcore.Problem{Path: fmt.Sprintf("/args/%d", i), Summary: "args contains a NUL byte",
				Detail: "a program cannot receive a NUL inside an argument"})
		}
	}
	if known("/workdir") && in.Workdir != "" {
		switch {
		case !filepath.IsAbs(in.Workdir):
			ps = append(ps, execcore.Problem{Path: "/workdir", Summary: "workdir must be an absolute path",
				Detail: fmt.Sprintf("got %q; a relative path would be resolved against the plugin process's directory, which a workflow does not control", in.Workdir)})
		case hasDotDot(in.Workdir):
			ps = append(ps, execcore.Problem{Path: "/workdir", Summary: "workdir must not contain a '..' element",
				Detail: fmt.Sprintf("got %q; name the directory directly", in.Workdir)})
		case strings.ContainsRune(in.Workdir, 0):
			ps = append(ps, execcore.Problem{Path: "/workdir", Summary: "workdir contains a NUL byte"})
		}
	}
	return append(ps, execcore.CheckCommon(in.Timeout, in.Env, in.AllowExitCodes, known)...)
}

// hasDotDot reports whether p has a ".." element. It looks at p as written, not cleaned:
// filepath.Clean would silently resolve the very elements the rule refuses.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}
