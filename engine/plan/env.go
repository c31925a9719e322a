package plan

import (
	"path/filepath"

	"github.com/fuscia/fuscia/plugin/discover"
)

// Env says where installed components and plugins are.
type Env struct {
	Home       string   // $FUSCIA_HOME
	PluginDirs []string // -plugin-dir, in order
	// Digests keeps the plugin binaries' digests this process has read (the plugin manager's);
	// nil reads a binary each time its digest is asked.
	Digests *discover.Digests
	// Upgrade resolves the newest installed component version each constraint allows, not the
	// one the lock file beside the workflow records (`plan -upgrade`, as Terraform's
	// `init -upgrade`).
	Upgrade bool
}

// ComponentsDir is where installed components live.
func (e Env) ComponentsDir() string { return filepath.Join(e.Home, "components") }

// PluginSearchPath is the plugin discovery order of docs/reference/plugin-protocol.md: ./plugins beside the workflow,
// each -plugin-dir, then $FUSCIA_HOME/plugins.
func (e Env) PluginSearchPath(workflowFile string) []string {
	dirs := []string{filepath.Join(filepath.Dir(workflowFile), "plugins")}
	dirs = append(dirs, e.PluginDirs...)
	return append(dirs, filepath.Join(e.Home, "plugins"))
}
