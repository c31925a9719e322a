package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fuscia/fuscia/engine/journal"
)

// testStoreEnv names a test-only variable read by the commands that own the state store (apply,
// resume, serve), a comma-separated list of settings:
//
//   - "small" opens the store with journal.SmallSizes: Badger rotates its memtables and
//     value-log files, flushes and compacts tables, and the WAL rotates segments every few
//     dozen runs, which the crash matrix needs to kill a process at those moments
//     (docs/state.md, "Crash matrix"). The largest value such a store takes is 1 MiB.
//   - "lossy" opens it with journal.Options.HoldRelaxed: relaxed writes stay in memory until
//     something syncs them, so that a kill loses them as a power loss would lose what was
//     not synced (docs/engine.md, "Durability").
//
// Not for real use.
const testStoreEnv = "FUSCIA_TEST_STORE"

// errTestStore is returned for a value of FUSCIA_TEST_STORE that is not a list of its settings.
var errTestStore = errors.New("invalid " + testStoreEnv)

// testStore is what FUSCIA_TEST_STORE asks for.
type testStore struct {
	sizes journal.Sizes // the defaults when unset
	hold  bool          // journal.Options.HoldRelaxed
}

// testStore reads FUSCIA_TEST_STORE.
func (c *cli) testStore() (testStore, error) {
	var ts testStore
	v := c.getenv(testStoreEnv)
	if v == "" {
		return ts, nil
	}
	for _, s := range strings.Split(v, ",") {
		switch strings.TrimSpace(s) {
		case "small":
			ts.sizes = journal.SmallSizes()
		case "lossy":
			ts.hold = true
		default:
			return testStore{}, fmt.Errorf("%w: %q; the values are small and lossy (test settings, comma-separated), or leave it unset", errTestStore, v)
		}
	}
	return ts, nil
}
