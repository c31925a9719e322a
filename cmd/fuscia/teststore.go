package main

import (
	"errors"
	"fmt"

	"github.com/fuscia/fuscia/engine/journal"
)

// testStoreEnv names a test-only variable read by the commands that own the state store (apply,
// resume, serve). "small" opens the store with journal.SmallSizes: Badger rotates its memtables
// and value-log files, flushes and compacts tables, and the WAL rotates segments every few dozen
// runs, which the crash matrix needs to kill a process at those moments (docs/state.md, "Crash
// matrix"). Not for real use: the largest value such a store takes is 1 MiB.
const testStoreEnv = "FUSCIA_TEST_STORE"

// errTestStore is returned for a value of FUSCIA_TEST_STORE that is not "small".
var errTestStore = errors.New("invalid " + testStoreEnv)

// storeSizes returns the sizes of the state store's files that FUSCIA_TEST_STORE asks for (the
// defaults when it is unset).
func (c *cli) storeSizes() (journal.Sizes, error) {
	switch v := c.getenv(testStoreEnv); v {
	case "":
		return journal.Sizes{}, nil
	case "small":
		return journal.SmallSizes(), nil
	default:
		return journal.Sizes{}, fmt.Errorf("%w: %q; the only value is small (a test setting), or leave it unset", errTestStore, v)
	}
}
