//go:build !unix

package journal

import "github.com/dgraph-io/badger/v4"

// openBadger opens Badger in dir. The repair of torn log files (torn.go) needs flock, so other
// systems get Badger's own behaviour.
func openBadger(_ string, opts badger.Options) (*badger.DB, error) {
	return badger.Open(opts)
}
