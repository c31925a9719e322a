//go:build !unix

package journal

import "github.com/dgraph-io/badger/v4"

// openBadger opens Badger in dir with open. The repair of torn log files and the checks of
// damaged files before Open (torn.go) need the directory lock, a flock, so other systems get
// Badger's own behaviour.
func openBadger(_ string, opts badger.Options, open func(badger.Options) (*badger.DB, error)) (*badger.DB, error) {
	return open(opts)
}
