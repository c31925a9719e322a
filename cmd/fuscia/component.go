package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"strings"

	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/version"
)

// componentSubcommands are the subcommands of `fuscia component`, in the order usage lists them.
var componentSubcommands = []struct {
	name, synopsis string
	run            func(ctx context.Context, c *cli, args []string) int
}{
	{"pack", "Pack a component directory into a FILE.fcpkg package", runComponentPack},
	{"install", "Install a package into $FUSCIA_HOME/components", runComponentInstall},
	{"list", "List the installed components", runComponentList},
	{"remove", "Remove an installed component version", runComponentRemove},
	{"inspect", "Show what a package or Wasm binary is: ABI, world, imports, exports", runComponentInspect},
}

func runComponent(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		componentUsage(c.stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-help", "--help", "-h", "help":
		componentUsage(c.stdout)
		return exitOK
	}
	for _, sub := range componentSubcommands {
		if sub.name == args[0] {
			return sub.run(ctx, c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "Error: unknown subcommand %q of fuscia component.\n\n", args[0])
	componentUsage(c.stderr)
	return exitInvalid
}

func componentUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia component SUBCOMMAND [options] [args]")
	fmt.Fprintln(w, "\nSubcommands:")
	for _, sub := range componentSubcommands {
		fmt.Fprintf(w, "  %-8s %s\n", sub.name, sub.synopsis)
	}
	fmt.Fprintln(w, "\nEvery subcommand takes -help and -home DIR (default $FUSCIA_HOME or ~/.fuscia).")
}

// componentsDir is where components are installed (docs/reference/cli.md): $FUSCIA_HOME/components.
func componentsDir(fs *flagSet) string { return filepath.Join(fs.homeDir(), "components") }

const componentListHint = "See the installed components with: fuscia component list."

func runComponentPack(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "component pack", "component pack DIR -o FILE.fcpkg")
	out := fs.String("o", "", "write the package to `FILE` (required; conventionally NAME-VERSION.fcpkg, like acme-mailer-1.2.3.fcpkg)")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	switch {
	case len(args) == 0:
		return c.fail(false, "Missing component directory",
			"Give the directory that holds manifest.json and component.wasm: fuscia component pack DIR -o FILE.fcpkg.")
	case len(args) > 1:
		return c.fail(false, "Unexpected argument", fmt.Sprintf("fuscia component pack takes one directory; got %q too.", args[1]))
	case *out == "":
		return c.fail(false, "Missing -o",
			"Say where to write the package: fuscia component pack DIR -o FILE.fcpkg. By convention FILE is NAME-VERSION.fcpkg, like acme-mailer-1.2.3.fcpkg.")
	}
	m, err := registry.Pack(args[0], *out)
	if err != nil {
		return c.componentFailed("Cannot pack "+args[0], err)
	}
	fmt.Fprintf(c.stdout, "Packed %s (%s) to %s\n", m.Ref(), m.Digest, *out)
	return exitOK
}

func runComponentInstall(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "component install", "component install FILE.fcpkg")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	switch {
	case len(args) == 0:
		return c.fail(false, "Missing package file",
			"Give the package to install: fuscia component install FILE.fcpkg. Make one with fuscia component pack.")
	case len(args) > 1:
		return c.fail(false, "Unexpected argument", fmt.Sprintf("fuscia component install takes one package; got %q too. Install them one at a time.", args[1]))
	}
	inst, err := registry.Install(componentsDir(fs), args[0])
	var refused *registry.RefusedError
	switch {
	case errors.As(err, &refused) && errors.Is(err, iofs.ErrNotExist):
		return c.componentFailed("Package not found", err)
	case errors.As(err, &refused):
		return c.componentFailed("Package refused", err)
	case err != nil:
		return c.componentFailed("Cannot install "+args[0], err)
	}
	if inst.AlreadyInstalled {
		fmt.Fprintf(c.stdout, "%s is already installed (%s)\n", inst.Ref(), inst.Digest)
	} else {
		fmt.Fprintf(c.stdout, "Installed %s (%s)\n", inst.Ref(), inst.Digest)
	}
	return exitOK
}

// componentJSON is one element of `component list -json`.
type componentJSON struct {
	Name         string                `json:"name"`
	Version      string                `json:"version"`
	Digest       string                `json:"digest"`
	Description  string                `json:"description"`
	Tasks        []string              `json:"tasks"`
	Triggers     []string              `json:"triggers"`
	Capabilities registry.Capabilities `json:"capabilities"`
	Path         string                `json:"path"`
}

func runComponentList(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "component list", "component list [-json]")
	asJSON := fs.Bool("json", false, "print the components as JSON")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) > 0 {
		return c.fail(*asJSON, "Unexpected argument", fmt.Sprintf("fuscia component list takes no argument; got %q.", args[0]))
	}
	dir := componentsDir(fs)
	all, err := registry.List(dir)
	if err != nil {
		return c.operationFailed("Cannot list the components", err)
	}
	if *asJSON {
		out := make([]componentJSON, 0, len(all))
		for _, i := range all {
			e := componentJSON{Name: i.Source, Version: i.Version, Digest: i.Digest, Tasks: []string{}, Triggers: []string{},
				Capabilities: registry.Capabilities{AllowedHosts: []string{}, AllowedPaths: []string{}}, Path: i.Dir}
			if abs, err := filepath.Abs(i.Dir); err == nil {
				e.Path = abs
			}
			if m := i.Parsed; m != nil {
				e.Description, e.Tasks, e.Triggers, e.Capabilities = m.Description, m.TaskNames(), m.TriggerNames(), m.Capabilities
			}
			out = append(out, e)
		}
		if err := writeJSON(c.stdout, map[string]any{"components": out}); err != nil {
			return c.operationFailed("Cannot write the components", err)
		}
		return exitOK
	}
	if len(all) == 0 {
		fmt.Fprintf(c.stdout, "No components installed in %s.\n", dir)
		return exitOK
	}
	rows := [][]string{{"NAME", "VERSION", "DIGEST", "TASKS", "TRIGGERS"}}
	for _, i := range all {
		digest, tasks, triggers := orDash(i.Digest), "-", "-"
		if m := i.Parsed; m != nil {
			tasks, triggers = orDash(strings.Join(m.TaskNames(), ", ")), orDash(strings.Join(m.TriggerNames(), ", "))
		}
		rows = append(rows, []string{i.Source, i.Version, digest, tasks, triggers})
	}
	var out bytes.Buffer
	writeTable(&out, "", rows)
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return c.operationFailed("Cannot write the components", err)
	}
	return exitOK
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runComponentRemove(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "component remove", "component remove NAME@VERSION")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	const which = "Say which version to remove: fuscia component remove NAME@VERSION, for example acme/mailer@1.2.3. " + componentListHint
	switch {
	case len(args) == 0:
		return c.fail(false, "Missing component", which)
	case len(args) > 1:
		return c.fail(false, "Unexpected argument", fmt.Sprintf("fuscia component remove takes one NAME@VERSION; got %q too. Remove them one at a time.", args[1]))
	}
	source, ver, found := strings.Cut(args[0], "@")
	if !found || ver == "" || source == "" {
		return c.fail(false, "Missing version", fmt.Sprintf("%q does not say which version. %s", args[0], which))
	}
	if err := registry.Remove(componentsDir(fs), source, ver); err != nil {
		return c.componentFailed("Cannot remove "+args[0], err)
	}
	fmt.Fprintf(c.stdout, "Removed %s@%s\n", source, ver)
	return exitOK
}

// componentFailed reports an error of the registry: exit 2 with its reason and hint when the
// input was refused or the version is not installed, exit 1 for an operation that failed.
func (c *cli) componentFailed(summary string, err error) int {
	var refused *registry.RefusedError
	switch {
	case errors.As(err, &refused):
		detail := refused.Reason
		if !strings.Contains(detail, "\n") && !strings.HasSuffix(detail, ".") {
			detail += "."
		}
		if refused.Hint != "" {
			detail += "\n\n" + refused.Hint
		}
		return c.fail(false, summary, detail)
	case errors.Is(err, registry.ErrNotInstalled):
		return c.fail(false, "Component not installed", err.Error()+". "+componentListHint)
	}
	return c.operationFailed(summary, err)
}

// inspectJSON is `component inspect -json` (docs/reference/cli.md).
type inspectJSON struct {
	File     string            `json:"file"`
	Package  bool              `json:"package"`
	Name     *string           `json:"name"`
	Version  *string           `json:"version"`
	ABI      *int              `json:"abi"`
	Kind     *string           `json:"kind"`
	World    *string           `json:"world"`
	Size     int64             `json:"size"`
	Digest   string            `json:"digest"`
	Imports  []registry.Extern `json:"imports"`
	Exports  []registry.Extern `json:"exports"`
	Problems []string          `json:"problems"`
}

func runComponentInspect(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "component inspect", "component inspect FILE.fcpkg|FILE.wasm [-json]")
	asJSON := fs.Bool("json", false, "print the description as JSON")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	switch {
	case len(args) == 0:
		return c.fail(*asJSON, "Missing file",
			"Give the package or Wasm binary to inspect: fuscia component inspect FILE.fcpkg, or fuscia component inspect component.wasm.")
	case len(args) > 1:
		return c.fail(*asJSON, "Unexpected argument", fmt.Sprintf("fuscia component inspect takes one file; got %q too. Inspect them one at a time.", args[1]))
	}
	in, err := registry.Inspect(args[0])
	var refused *registry.RefusedError
	switch {
	case errors.As(err, &refused) && errors.Is(err, iofs.ErrNotExist):
		return c.componentFailed("File not found", err)
	case err != nil:
		return c.componentFailed("Cannot inspect "+args[0], err)
	}
	if *asJSON {
		if err := writeJSON(c.stdout, inspectionJSON(in)); err != nil {
			return c.operationFailed("Cannot write the description", err)
		}
	} else {
		var out bytes.Buffer
		writeInspection(&out, in)
		if _, err := c.stdout.Write(out.Bytes()); err != nil {
			return c.operationFailed("Cannot write the description", err)
		}
	}
	if len(in.Problems) == 0 {
		return exitOK
	}
	if *asJSON { // the problems are in the JSON
		return exitInvalid
	}
	summary := args[0] + " would be refused by fuscia component pack"
	if in.Package {
		summary = "Package would be refused"
	}
	detail := strings.Join(in.Problems, "\n")
	if in.Hint != "" {
		detail += "\n\n" + in.Hint
	}
	return c.fail(false, summary, detail)
}

func inspectionJSON(in *registry.Inspection) inspectJSON {
	out := inspectJSON{File: in.File, Package: in.Package, Size: in.Wasm.Size, Digest: in.Wasm.Digest,
		Imports: in.Wasm.Imports, Exports: in.Wasm.Exports, Problems: in.Problems}
	if m := in.Manifest; m != nil {
		out.Name, out.Version = &m.Name, &m.Version
	}
	if in.ABI != 0 {
		out.ABI = &in.ABI
	}
	if in.Wasm.Kind != "" {
		out.Kind = &in.Wasm.Kind
	}
	if in.Wasm.World != "" {
		out.World = &in.Wasm.World
	}
	return out
}

// writeInspection writes what `component inspect` shows people.
func writeInspection(w io.Writer, in *registry.Inspection) {
	rows := [][]string{{"File:", in.File}}
	if in.Package {
		pkg := "-"
		if m := in.Manifest; m != nil {
			pkg = m.Ref()
		}
		rows = append(rows, []string{"Package:", pkg})
	}
	abi := "-"
	switch in.ABI {
	case 0:
	case version.ABI:
		abi = fmt.Sprintf("%d (a core module of the host ABI v%d)", in.ABI, version.ABI)
	case version.ComponentABI:
		abi = fmt.Sprintf("%d (a component)", in.ABI)
	default:
		abi = fmt.Sprint(in.ABI)
	}
	rows = append(rows,
		[]string{"ABI:", abi},
		[]string{"Kind:", orDash(in.Wasm.Kind)},
		[]string{"World:", orDash(in.Wasm.World)},
		[]string{"Size:", sizeLine(in.Wasm.Size)},
		[]string{"Digest:", in.Wasm.Digest},
	)
	writeTable(w, "", rows)
	for _, list := range []struct {
		title   string
		externs []registry.Extern
	}{{"Imports", in.Wasm.Imports}, {"Exports", in.Wasm.Exports}} {
		if len(list.externs) == 0 {
			fmt.Fprintf(w, "\n%s: none\n", list.title)
			continue
		}
		fmt.Fprintf(w, "\n%s (%d):\n", list.title, len(list.externs))
		rows := make([][]string, 0, len(list.externs))
		for _, e := range list.externs {
			name := e.Name
			if e.Implements != "" {
				name += " (implements " + e.Implements + ")"
			}
			rows = append(rows, []string{e.Kind, name})
		}
		writeTable(w, "  ", rows)
	}
}

// sizeLine is a size in bytes, and as people read it when it is a KiB or more.
func sizeLine(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d bytes (%s)", n, fmtBytes(n))
}
