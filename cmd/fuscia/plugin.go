package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/plugin"
)

func runPlugin(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		pluginUsage(c.stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-help", "--help", "-h", "help":
		pluginUsage(c.stdout)
		return exitOK
	case "list":
		return runPluginList(ctx, c, args[1:])
	}
	fmt.Fprintf(c.stderr, "Error: unknown subcommand %q of fuscia plugin.\n\n", args[0])
	pluginUsage(c.stderr)
	return exitInvalid
}

func pluginUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia plugin list [-json] [-plugin-dir DIR]…")
	fmt.Fprintln(w, "\nLists the plugin binaries found in ./plugins, each -plugin-dir and $FUSCIA_HOME/plugins,")
	fmt.Fprintln(w, "with the version, tasks and triggers each reports and its checksum.")
}

// pluginJSON is one entry of `plugin list -json`.
type pluginJSON struct {
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	Checksum string   `json:"checksum"`
	Digest   string   `json:"digest"` // the same as checksum, under the name component list uses
	Path     string   `json:"path"`
	Tasks    []string `json:"tasks"`
	Triggers []string `json:"triggers"`
	// Error says why the plugin cannot be used: it could not describe itself (tasks and
	// triggers are then empty and the version is its file name's), or what it reports
	// disagrees with its file name.
	Error string `json:"error,omitempty"`
}

func runPluginList(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "plugin list", "plugin list [-json] [-plugin-dir DIR]…")
	asJSON := fs.Bool("json", false, "print the plugins as JSON")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	rest, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return c.fail(*asJSON, "Unexpected argument", fmt.Sprintf("fuscia plugin list takes no argument; got %q.", rest[0]))
	}
	// The search path of a workflow in the current directory: ./plugins, -plugin-dir, home.
	dirs := plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs}.PluginSearchPath("workflow.fsc.hcl")
	bins, err := plugin.Discover(dirs)
	if err != nil {
		return c.operationFailed("Cannot list the plugins", err)
	}
	m := c.pluginManager(fs.homeDir(), c.logger(""))
	defer m.Close()
	out := make([]pluginJSON, 0, len(bins))
	for _, b := range bins {
		e := pluginJSON{Name: b.Name, Version: b.Version, Path: b.Path, Tasks: []string{}, Triggers: []string{}}
		if abs, err := filepath.Abs(b.Path); err == nil {
			e.Path = abs
		}
		digest, err := plugin.Digest(b.Path)
		if err != nil {
			e.Error = sentenceOf(err)
			out = append(out, e)
			continue
		}
		e.Checksum, e.Digest = digest, digest
		// The version shown is the one the plugin reports (docs/plugins.md, "Versions").
		t := plugin.Target{Name: b.Name, Path: b.Path, Digest: digest, Version: b.Version}
		s, err := m.Describe(ctx, t)
		if err != nil {
			e.Error = sentenceOf(err)
			out = append(out, e)
			continue
		}
		e.Version, e.Tasks, e.Triggers = s.Version, sortedNames(s.Tasks), sortedNames(s.Triggers)
		if err := t.Check(s); err != nil {
			e.Error = sentenceOf(err)
		}
		out = append(out, e)
	}
	if *asJSON {
		if err := writeJSON(c.stdout, map[string]any{"plugins": out}); err != nil {
			return c.operationFailed("Cannot write the plugins", err)
		}
		return exitOK
	}
	if len(out) == 0 {
		fmt.Fprintf(c.stdout, "No plugins found in %s.\n", strings.Join(dirs, ", "))
		return exitOK
	}
	rows := [][]string{{"NAME", "VERSION", "TASKS", "TRIGGERS", "CHECKSUM", "PATH"}}
	for _, e := range out {
		rows = append(rows, []string{e.Name, orDash(e.Version), orDash(strings.Join(e.Tasks, ", ")), orDash(strings.Join(e.Triggers, ", ")), orDash(e.Checksum), e.Path})
	}
	var buf bytes.Buffer
	writeTable(&buf, "", rows)
	for _, e := range out {
		if e.Error != "" {
			fmt.Fprintf(&buf, "\nWarning: %s: %s\n", terminalText(e.Name), terminalText(e.Error))
		}
	}
	if _, err := c.stdout.Write(buf.Bytes()); err != nil {
		return c.operationFailed("Cannot write the plugins", err)
	}
	return exitOK
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
