package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// flagSet wraps flag.FlagSet with what every command shares: -home, -help, and flags that may
// come after positional arguments (`fuscia show ID -json`).
type flagSet struct {
	*flag.FlagSet
	c     *cli
	usage string
	home  string
}

func newFlagSet(c *cli, name, usage string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), c: c, usage: usage}
	fs.SetOutput(io.Discard)
	fs.StringVar(&fs.home, "home", "", "Fuscia's home directory (default $FUSCIA_HOME or ~/.fuscia)")
	return fs
}

// parse parses args, allowing flags and positional arguments in any order. It returns the
// positional arguments, or an exit code when the command should stop (after -help, or on a bad
// flag, which it has reported).
func (fs *flagSet) parse(args []string) ([]string, int, bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.printUsage(fs.c.stdout)
				return nil, exitOK, false
			}
			fmt.Fprintf(fs.c.stderr, "Error: %s\n\n", err)
			fs.printUsage(fs.c.stderr)
			return nil, exitInvalid, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			// flag stops at "--" and drops it: everything after it is positional.
			return append(positional, rest...), 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func (fs *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: fuscia %s\n", fs.usage)
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if !has {
		return
	}
	fmt.Fprintln(w, "\nOptions:")
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		fmt.Fprintf(w, "  -%s%s\n      %s", f.Name, name, help)
		// A help text that says its default itself ("(default: the number of CPUs)") keeps it.
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && !strings.Contains(help, "(default") {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// invocation names this command for others to read, as in the owner file ("fuscia apply
// x.fsc.hcl"): its name and positional arguments, without flags, whose values may be secrets
// (-var, -payload).
func (fs *flagSet) invocation(positional []string) string {
	return strings.Join(append([]string{"fuscia", fs.Name()}, positional...), " ")
}

// homeDir is -home, else $FUSCIA_HOME, else ~/.fuscia.
func (fs *flagSet) homeDir() string {
	if fs.home != "" {
		return fs.home
	}
	if h := fs.c.getenv("FUSCIA_HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".fuscia")
	}
	return ".fuscia"
}

// multiFlag collects a repeatable flag (-var a=1 -var b=2) in order.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// invalid reports a bad flag value as parse reports a bad flag (docs/reference/cli.md): the
// error, then the command's usage on stderr, exit 2. With asJSON the error goes to stdout as
// JSON, as c.fail writes it.
func (fs *flagSet) invalid(asJSON bool, summary, detail string) int {
	code := fs.c.fail(asJSON, summary, detail)
	fs.printUsage(fs.c.stderr)
	return code
}

// checkLogFormat refuses a -log-format other than text and json (an empty one is the default)
// as a bad flag value, before anything is opened: the logger is set up later, with the store.
func (fs *flagSet) checkLogFormat(format string) (code int, ok bool) {
	switch format {
	case "", "text", "json":
		return 0, true
	}
	return fs.invalid(false, "Invalid -log-format", fmt.Sprintf("The log format is text or json; got %q.", format)), false
}

// checkListenAddr says what is wrong with a listen address (-listen, -metrics-listen) before
// anything is opened: a bad one was a listen failure, exit 1, after serve had started.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not HOST:PORT")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}
