package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// lookInterval is how often a follow without an owner opens the store to look for new lines.
// Each look holds the store's lock for a moment; a process that starts owning it meanwhile
// retries its open within 100 ms, so looks are kept rare.
const lookInterval = time.Second

// followDetached follows run ref from seq after while this process does not hold the store:
// through the socket while a process owns the store, else by opening the store now and then,
// until the run has finished or ctx ends.
func followDetached(ctx context.Context, home, ref string, after uint64, node string, fn func(journal.LogLine) error, logger *slog.Logger) error {
	return followWithoutStore(ctx, home, ref, logger,
		func(c *client) (err error) {
			after, err = c.logs(ctx, ref, after, node, true, fn)
			return err
		},
		func(o *ops, id string) (finished bool, err error) {
			after, finished, err = o.catchUp(id, after, node, fn)
			return finished, err
		})
}

// followWithoutStore follows run ref while this process does not hold the store: through
// viaOwner while a process answers on the socket (it returns an error wrapping errOwnerGone when
// that owner stops before the run ends), else by opening the store now and then and catching up
// with look, until look reports the run finished or ctx ends.
func followWithoutStore(ctx context.Context, home, ref string, logger *slog.Logger, viaOwner func(*client) error,
	look func(o *ops, id string) (finished bool, err error)) error {
	sock := filepath.Join(home, SocketName)
	var lastLook time.Time
	for {
		if answers(ctx, sock) {
			c := newClient(home, logger)
			err := viaOwner(c)
			_ = c.Close()
			if !errors.Is(err, errOwnerGone) {
				return err
			}
			// The owner stopped before the run ended: go on without it.
		} else if time.Since(lastLook) >= lookInterval {
			lastLook = time.Now()
			finished, err := lookStore(home, ref, logger, look)
			if err != nil || finished {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followPoll):
		}
	}
}

// lookStore opens the store, lets look catch up with run ref, and closes it again. A store
// another process holds is not an error: the next look, or its socket, will do.
func lookStore(home, ref string, logger *slog.Logger, look func(o *ops, id string) (bool, error)) (bool, error) {
	st, err := openJournal(filepath.Join(home, stateDirName), journal.Options{Logger: logger})
	if errors.Is(err, journal.ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	o := &ops{st: st}
	id, err := o.resolve(ref)
	var finished bool
	if err == nil {
		finished, err = look(o, id)
	}
	if cerr := st.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close the state store: %w", cerr)
	}
	return finished, err
}
