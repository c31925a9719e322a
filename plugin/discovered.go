package plugin

import "github.com/fuscia/fuscia/plugin/discover"

// These keep the discovery API where callers of this package found it; the code is in
// plugin/discover, which does not need go-plugin.

// FilePrefix starts the file name of every plugin binary.
const FilePrefix = discover.FilePrefix

// Binary is a plugin executable found on disk.
type Binary = discover.Binary

// ErrNotFound is returned by Find when no binary matches.
var ErrNotFound = discover.ErrNotFound

// Discover lists the plugin binaries in dirs; see discover.Discover.
func Discover(dirs []string) ([]Binary, error) { return discover.Discover(dirs) }

// Find is discover.Find.
func Find(dirs []string, name, constraint string) (Binary, error) {
	return discover.Find(dirs, name, constraint)
}

// Digest is discover.Digest: the sha256 of the file at path, hex.
func Digest(path string) (string, error) { return discover.Digest(path) }
