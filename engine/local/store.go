package local

import (
	"errors"

	"github.com/fuscia/fuscia/engine/journal"
)

// openJournal opens the journal in dir for this process, which then owns every run in it: the
// runs a process that died left running are moved to interrupted first
// (journal.Store.InterruptRunning), so that list, show and the API never show them as running
// while nobody runs them. Resume (and serve, at start) continues them.
func openJournal(dir string, opts journal.Options) (*journal.Store, error) {
	st, err := journal.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	ids, err := st.InterruptRunning()
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	if len(ids) > 0 && opts.Logger != nil {
		opts.Logger.Info("runs a process that ended had left running are interrupted until resumed",
			"component", "journal", "executions", ids)
	}
	return st, nil
}
