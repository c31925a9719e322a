package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cliReference is the CLI's reference page, relative to this package.
const cliReference = "../../docs/reference/cli.md"

// TestCLIReferenceCoversEveryFlag asks the CLI itself (its -help output, as a user sees it) for
// its commands, subcommands and flags, and fails when docs/reference/cli.md has no section for
// a command or does not name one of its flags (as `-flag`) in that section. Flags every command
// has (-home) are documented once, under "Conventions".
func TestCLIReferenceCoversEveryFlag(t *testing.T) {
	sections := docSections(t)

	commands := helpList(help(t), "Commands:")
	if len(commands) < 10 || !slices.Contains(commands, "apply") {
		t.Fatalf("fuscia -help listed the commands %q; the test cannot read them", commands)
	}
	type leaf struct {
		name  string // "validate", "executions list"
		flags []string
	}
	var leaves []leaf
	for _, cmd := range commands {
		out := help(t, cmd, "-help")
		subs := subcommands(out, cmd)
		if len(subs) == 0 {
			leaves = append(leaves, leaf{cmd, helpFlags(out)})
			continue
		}
		for _, sub := range subs {
			leaves = append(leaves, leaf{cmd + " " + sub, helpFlags(help(t, cmd, sub, "-help"))})
		}
	}

	// The flags every command has are the global ones.
	global := slices.Clone(leaves[0].flags)
	for _, l := range leaves[1:] {
		global = slices.DeleteFunc(global, func(f string) bool { return !slices.Contains(l.flags, f) })
	}
	if !slices.Contains(global, "home") {
		t.Fatalf("-home is not among the flags every command has (%q); the test cannot read the flags", global)
	}
	for _, f := range global {
		if !documentsFlag(sections["Conventions"], f) {
			t.Errorf("%s: the section \"Conventions\" does not document -%s, which every command takes", cliReference, f)
		}
	}

	checked := 0
	for _, l := range leaves {
		body, ok := sections[l.name]
		if !ok {
			t.Errorf("%s has no section \"### %s\" for the command fuscia %s", cliReference, l.name, l.name)
			continue
		}
		for _, f := range l.flags {
			if slices.Contains(global, f) {
				continue
			}
			checked++
			if !documentsFlag(body, f) {
				t.Errorf("%s: the section \"%s\" does not document -%s (write it as `-%s` in the section)", cliReference, l.name, f, f)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("checked only %d flags of %d commands; the test cannot read the flags", checked, len(leaves))
	}
}

// TestCLIReferenceCoversEveryEnvVar fails when the code reads an environment variable (a
// literal passed to Getenv or LookupEnv, or any FUSCIA_ or OTEL_ name in a string) that
// docs/reference/cli.md's "Environment variables" section does not name.
func TestCLIReferenceCoversEveryEnvVar(t *testing.T) {
	section := docSections(t)["Environment variables"]
	if section == "" {
		t.Fatalf("%s has no section \"Environment variables\"", cliReference)
	}
	vars := envVarsInCode(t, "../..")
	for _, must := range []string{"FUSCIA_HOME", "FUSCIA_LOG_LEVEL", "FUSCIA_VAR_"} {
		if !slices.Contains(vars, must) {
			t.Fatalf("found the variables %q in the code, not %s; the test cannot read the code", vars, must)
		}
	}
	for _, v := range vars {
		if !strings.Contains(section, "`"+v) {
			t.Errorf("%s: the section \"Environment variables\" does not name %s, which the code reads", cliReference, v)
		}
	}
}

// help runs fuscia with args in this process and returns what it printed; -help must succeed.
func help(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &cli{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, environ: func() []string { return nil }}
	if args == nil {
		args = []string{"-help"}
	}
	if code := c.main(context.Background(), args); code != exitOK {
		t.Fatalf("fuscia %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

// helpList returns the first word of each indented line under the line title ("Commands:").
func helpList(out, title string) []string {
	_, rest, ok := strings.Cut(out, "\n"+title+"\n")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

var (
	usageSub = regexp.MustCompile(`(?m)^Usage: fuscia \S+ ([a-z][a-z-]*)\b`)
	helpFlag = regexp.MustCompile(`(?m)^  -([A-Za-z0-9][A-Za-z0-9-]*)`)
)

// subcommands are the subcommands of cmd its help lists, or the one its usage line names
// (`Usage: fuscia plugin list …`); none for a command without.
func subcommands(out, cmd string) []string {
	if subs := helpList(out, "Subcommands:"); len(subs) > 0 {
		return subs
	}
	if m := usageSub.FindStringSubmatch(out); m != nil {
		return []string{m[1]}
	}
	return nil
}

// helpFlags are the flags listed under "Options:".
func helpFlags(out string) []string {
	_, opts, ok := strings.Cut(out, "\nOptions:\n")
	if !ok {
		return nil
	}
	var flags []string
	for _, m := range helpFlag.FindAllStringSubmatch(opts, -1) {
		flags = append(flags, m[1])
	}
	return flags
}

func documentsFlag(section, flag string) bool {
	return regexp.MustCompile("`-" + regexp.QuoteMeta(flag) + "([^A-Za-z0-9-]|$)").MatchString(section)
}

var docHeading = regexp.MustCompile(`^(#{2,6})\s+(.*?)\s*$`)

// docSections reads the reference page into its sections by heading (without backticks and a
// leading "fuscia "): each runs to the next heading of its level or above.
func docSections(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile(cliReference)
	if err != nil {
		t.Fatal(err)
	}
	type open struct {
		title string
		level int
		lines []string
	}
	sections := map[string]string{}
	var stack []*open
	closeTo := func(level int) {
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sections[o.title] = strings.Join(o.lines, "\n")
		}
	}
	fenced := false
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if m := docHeading.FindStringSubmatch(line); m != nil && !fenced {
			closeTo(len(m[1]))
			title := strings.TrimPrefix(strings.ReplaceAll(m[2], "`", ""), "fuscia ")
			stack = append(stack, &open{title: title, level: len(m[1])})
			continue
		}
		for _, o := range stack {
			o.lines = append(o.lines, line)
		}
	}
	closeTo(0)
	if len(sections) < 20 {
		t.Fatalf("%s has only %d sections; the test cannot read it", cliReference, len(sections))
	}
	return sections
}

var envName = regexp.MustCompile(`^(?:FUSCIA|OTEL)_[A-Z0-9_]*$`)

// envVarsInCode lists, sorted, the environment variables the non-test Go code under root reads:
// string literals given to a Getenv or LookupEnv function (os's, or a cli's getenv), and string
// literals that are FUSCIA_ or OTEL_ names. Test files and testdata are not the product.
func envVarsInCode(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			// third_party holds copies of dependencies (internal/third_party), whose variables
			// are theirs, as when they lived in the module cache: go-plugin's PLUGIN_* carry its
			// handshake from the host to a plugin.
			case ".git", "bin", "testdata", "node_modules", "third_party":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, _ := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if f == nil {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && envName.MatchString(s) {
					seen[s] = true
				}
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				if len(n.Args) == 0 || !slices.Contains([]string{"Getenv", "getenv", "LookupEnv"}, name) {
					return true
				}
				if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						seen[s] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var vars []string
	for v := range seen {
		vars = append(vars, v)
	}
	slices.Sort(vars)
	return vars
}
