// Package local gives the commands of one machine access to its state store. The store is
// owned by one process at a time (docs/reference/cli.md): the owner (Own) opens it, runs the engine on it and
// serves an HTTP API on the unix socket $FUSCIA_HOME/fuscia.sock; every other command reads
// and changes the store through that API, or opens the store itself when nobody owns it
// (OpenBackend).
package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
)

// File names under the home directory.
const (
	// SocketName is the owner's API socket.
	SocketName = "fuscia.sock"
	// OwnerFileName holds "PID COMMAND LINE" of the owner, for messages about who holds the store.
	OwnerFileName = "fuscia.owner"
	stateDirName  = "state"
	artifactsName = "artifacts"
)

var (
	// ErrFinished is returned by Cancel for a run that already ended.
	ErrFinished = errors.New("execution already finished")
	// ErrOwned is returned by Own when another process owns the store and answers on its
	// socket: use OpenBackend (or the API) instead.
	ErrOwned = errors.New("another fuscia process owns the state store")
	// ErrBusy is returned by OpenBackend when another process holds the store but does not
	// answer on its socket.
	ErrBusy = errors.New("another fuscia process holds the state store and is not answering on its socket")
)

// Backend is what the read and cancel commands use: the owner's API when a process owns the
// store, else the store opened directly by this command (released at Close). Execution ids may
// be given as a unique prefix of at least 6 characters. A Backend is used by one goroutine at a
// time.
type Backend interface {
	// List returns the runs f selects, newest first.
	List(ctx context.Context, f journal.Filter) ([]journal.Summary, error)
	// Execution returns one run; errors wrap journal.ErrNotFound for unknown ids and
	// journal.ErrAmbiguous for a prefix several ids share.
	Execution(ctx context.Context, id string) (*journal.Execution, error)
	// Logs calls fn with the run's log lines of the nodes node selects (all when empty; see
	// MatchNode), in order. With follow it goes on with new lines until the run has finished
	// and every line was delivered, or ctx ends, whichever process runs the run meanwhile: a
	// store opened directly is released during the follow, so that a process can resume it.
	Logs(ctx context.Context, id, node string, follow bool, fn func(journal.LogLine) error) error
	// Events calls fn with the run's events as `apply -json` reports them (engine.Replayer:
	// node starts, waits, retries, ends and log lines, no execution_finished), in order; with
	// follow it goes on like Logs.
	Events(ctx context.Context, id string, follow bool, fn func(engine.Event) error) error
	// Cancel cancels a running or waiting run and returns its status afterwards ("cancelled"
	// when nobody was running it; still "running" while an active run winds down). For a run
	// that already ended it returns its status and an error wrapping ErrFinished.
	Cancel(ctx context.Context, id string) (status string, err error)
	// Signal answers an approval or callback wait of run id (see SignalResult.Status for
	// what it came to). Errors wrap ErrFinished, ErrNotWaiting or ErrInvalidSignal.
	Signal(ctx context.Context, id, node string, data json.RawMessage, reject bool) (SignalResult, error)
	// Prune deletes the runs that finished before before, with their artifacts, and returns
	// their ids (on an error, those it did delete).
	Prune(ctx context.Context, before time.Time) ([]string, error)
	// Artifacts returns the run's artifacts, and those deleted from it. Errors wrap
	// journal.ErrNotFound and journal.ErrAmbiguous as Execution's do.
	Artifacts(ctx context.Context, id string) (*Artifacts, error)
	// DeleteArtifacts deletes a finished run's artifacts and keeps its record (outputs keep
	// the references; reading one says it was deleted). A file another run's artifact shares
	// stays. Errors wrap ErrNotFinished for a run that has not ended.
	DeleteArtifacts(ctx context.Context, id string) (*ArtifactsDeleted, error)
	// Artifact returns the bytes and reference of one of the run's artifacts. Errors wrap
	// artifact.ErrNotFound, with artifact.ErrDeleted once the run's artifacts were deleted.
	Artifact(ctx context.Context, id, artifactID string) ([]byte, artifact.Ref, error)
	// CreateToken makes an API token for serve's TCP listener (tokens.go) and returns it: the
	// only time the secret is seen. A home without a store gets one. Errors wrap
	// ErrInvalidToken and ErrTokenExists.
	CreateToken(ctx context.Context, name string, scope Scope, ttl time.Duration) (NewToken, error)
	// Tokens lists the API tokens by name, without their secrets.
	Tokens(ctx context.Context) ([]TokenInfo, error)
	// RevokeToken deletes an API token; serve refuses it from then on. Errors wrap ErrNoToken.
	RevokeToken(ctx context.Context, name string) error
	// Close releases the backend (the store, when this process opened it).
	Close() error
}

// lockRetry is how long OpenBackend waits for a store that is locked by a process that does
// not answer on the socket: an owner starting up opens the store a moment before it listens,
// and a command that used the store directly holds it only briefly.
const lockRetry = 2 * time.Second

// OpenBackend returns the owner's API when a process answers on home's socket, else the store
// under home opened by this process. It creates nothing: when home has no store, List finds no
// run and every id is unknown. logger (nil: discard) receives the store's warnings.
func OpenBackend(ctx context.Context, home string, logger *slog.Logger) (Backend, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sock := filepath.Join(home, SocketName)
	if answers(ctx, sock) {
		return newClient(home, logger), nil
	}
	d := &direct{home: home, logger: logger}
	stateDir := filepath.Join(home, stateDirName)
	if _, err := os.Stat(stateDir); errors.Is(err, os.ErrNotExist) {
		d.ops = &ops{}
		return d, nil
	}
	deadline := time.Now().Add(lockRetry)
	for {
		st, err := openJournal(stateDir, journal.Options{Logger: logger})
		if err == nil {
			d.ops = &ops{st: st, artifacts: artifact.NewDir(filepath.Join(home, artifactsName))}
			return d, nil
		}
		if !errors.Is(err, journal.ErrLocked) {
			return nil, err
		}
		// The owner may have started listening since the first look.
		if answers(ctx, sock) {
			return newClient(home, logger), nil
		}
		if time.Now().After(deadline) {
			return nil, busyError(home, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open the state store in %s: %w", home, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// busyError says which process holds the store.
func busyError(home string, lockErr error) error {
	return fmt.Errorf("%w: %s holds the state store in %s and is not answering on %s; wait for it to finish or stop it (%w)",
		ErrBusy, lockedBy(home), home, filepath.Join(home, SocketName), lockErr)
}

// lockedBy names the process the owner file says holds the store: "process 1234 (fuscia
// apply x.fsc.hcl)", or "another process" when there is no owner file (a process that only
// opened the store to read it writes none) or the process it names is gone (an owner that
// crashed leaves its file behind).
func lockedBy(home string) string {
	const unknown = "another process"
	b, err := os.ReadFile(filepath.Join(home, OwnerFileName))
	line := strings.TrimSpace(string(b))
	if err != nil || line == "" {
		return unknown
	}
	pidText, cmd, _ := strings.Cut(line, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || !alive(pid) {
		return unknown
	}
	if cmd == "" {
		return "process " + pidText
	}
	return fmt.Sprintf("process %d (%s)", pid, cmd)
}

// alive reports whether process pid exists (signal 0 checks without sending anything).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	// EPERM: it exists but belongs to another user.
	return err == nil || errors.Is(err, syscall.EPERM)
}

// answers reports whether a process accepts connections on the unix socket sock. A socket file
// left by a process that died refuses them.
func answers(ctx context.Context, sock string) bool {
	if _, err := os.Stat(sock); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// direct is a Backend on a store this process opened; a nil store stands for a home without
// one. A follow releases the store (see Logs); the next call takes it again, or goes through
// the socket of the process that took it meanwhile.
type direct struct {
	home   string
	logger *slog.Logger
	ops    *ops
	// released is set while the store is not held after a follow; remote is the owner's API
	// when a process owned the store by the time it was needed again.
	released bool
	remote   *client
}

// acquire takes the store again after a follow released it.
func (d *direct) acquire(ctx context.Context) error {
	if !d.released {
		return nil
	}
	b, err := OpenBackend(ctx, d.home, d.logger)
	if err != nil {
		return err
	}
	d.released = false
	switch b := b.(type) {
	case *client:
		d.remote = b
	case *direct:
		d.ops = b.ops
	}
	return nil
}

func (d *direct) List(ctx context.Context, f journal.Filter) ([]journal.Summary, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	if d.remote != nil {
		return d.remote.List(ctx, f)
	}
	return d.ops.List(ctx, f)
}

func (d *direct) Execution(ctx context.Context, id string) (*journal.Execution, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	if d.remote != nil {
		return d.remote.Execution(ctx, id)
	}
	return d.ops.Execution(ctx, id)
}

func (d *direct) Cancel(ctx context.Context, id string) (string, error) {
	if err := d.acquire(ctx); err != nil {
		return "", err
	}
	if d.remote != nil {
		return d.remote.Cancel(ctx, id)
	}
	return d.ops.Cancel(ctx, id)
}

func (d *direct) Prune(ctx context.Context, before time.Time) ([]string, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	if d.remote != nil {
		return d.remote.Prune(ctx, before)
	}
	return d.ops.Prune(ctx, before)
}

func (d *direct) Artifacts(ctx context.Context, id string) (*Artifacts, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	if d.remote != nil {
		return d.remote.Artifacts(ctx, id)
	}
	return d.ops.Artifacts(ctx, id)
}

func (d *direct) DeleteArtifacts(ctx context.Context, id string) (*ArtifactsDeleted, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	if d.remote != nil {
		return d.remote.DeleteArtifacts(ctx, id)
	}
	return d.ops.DeleteArtifacts(ctx, id)
}

func (d *direct) Artifact(ctx context.Context, id, artifactID string) ([]byte, artifact.Ref, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, artifact.Ref{}, err
	}
	if d.remote != nil {
		return d.remote.Artifact(ctx, id, artifactID)
	}
	return d.ops.Artifact(ctx, id, artifactID)
}

// Logs reads the lines from the store. A follow of a run that has not finished releases the
// store first: while this process holds it, no process can resume the run, so its end would
// never come. It then follows the run through the socket of whichever process takes the store,
// or by looking at the store now and then (followDetached).
func (d *direct) Logs(ctx context.Context, ref, node string, follow bool, fn func(journal.LogLine) error) error {
	if err := d.acquire(ctx); err != nil {
		return err
	}
	if d.remote != nil {
		return d.remote.Logs(ctx, ref, node, follow, fn)
	}
	id, err := d.ops.resolve(ref)
	if err != nil {
		return err
	}
	after, finished, err := d.ops.catchUp(id, 0, node, fn)
	if err != nil || !follow || finished {
		return err
	}
	if err := d.release(); err != nil {
		return err
	}
	return followDetached(ctx, d.home, id, after, node, fn, d.logger)
}

// release closes the store until the next call needs it.
func (d *direct) release() error {
	d.released = true
	st := d.ops.st
	d.ops = nil
	if err := st.Close(); err != nil {
		return fmt.Errorf("release the state store: %w", err)
	}
	return nil
}

func (d *direct) Close() error {
	var err error
	if d.remote != nil {
		err = d.remote.Close()
	}
	if !d.released && d.ops != nil && d.ops.st != nil {
		err = errors.Join(err, d.ops.st.Close())
	}
	return err
}

// MatchNode reports whether the log line of node address addr is selected by filter: every
// line when filter is empty, else the exact address (`task.fetch`, `loop.notify/task.send`),
// the bare name (`fetch`, `send`), the loop-local address (`task.send`), or a loop's address
// for the lines of its body too.
func MatchNode(filter, addr string) bool {
	if filter == "" || filter == addr {
		return true
	}
	a, ok := lang.ParseAddr(addr)
	if !ok {
		return false
	}
	return filter == a.Local() || filter == a.Name || a.Loop != "" && filter == a.LoopAddr().String()
}
