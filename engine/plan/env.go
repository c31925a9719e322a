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
