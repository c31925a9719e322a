package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/redact"
)

// OwnerConfig configures Own.
type OwnerConfig struct {
	// Home is $FUSCIA_HOME; Own creates it when needed and makes it private (PrepareHome).
	Home string
	// Command names this process in the owner file, which other commands quote when they find
	// the store held ("fuscia apply x.fsc.hcl"): the command and its positional arguments, never
	// flag values, which may be secrets (-var, -payload). Empty: the program's file name.
	Command string
	// Logger receives the store's and the API's warnings and errors; nil discards them.
	Logger *slog.Logger
	// OnWait is called once if the store is locked by another process that does not answer on
	// the socket, before Own waits for the lock (polling every 100ms until ctx ends). lockedBy
	// names that process: "process 1234 (fuscia apply x.fsc.hcl)" from the owner file it
	// wrote, else "another process".
	OnWait func(lockedBy string)
	// NewEngine builds the engine on the opened store (the caller wires dispatchers, tracer…).
	// Nil builds one that can only cancel runs.
	NewEngine func(st *journal.Store, artifacts artifact.Store) *engine.Engine
	// Artifacts replaces the artifact directory under Home (a cluster keeps its artifacts in
	// JetStream, where its workers write them); nil keeps the directory.
	Artifacts artifact.Store
	// Forget, when set, is told the runs that pruning deletes, before their records go, to
	// delete what the process keeps of them elsewhere (a cluster's KV and results). An error
	// stops the pruning, which a later prune finishes.
	Forget func(ctx context.Context, ids ...string) error
	// Extend adds endpoints to the API (serve's start, resume, health).
	Extend func(mux *http.ServeMux)
	// Signaled is told about a signal journaled for a run no process runs (serve resumes it).
	// Nil: the run waits for `fuscia resume`.
	Signaled func(id string)
	// StoreSizes replaces the sizes of the store's files (the zero value keeps the defaults;
	// the crash matrix shrinks them, see journal.Sizes).
	StoreSizes journal.Sizes
	// StoreHoldRelaxed opens the store with journal.Options.HoldRelaxed: crash tests only.
	StoreHoldRelaxed bool
}

// Owner is the process's ownership of the store under a home directory: the open store, the
// engine on it, and the API served on the home's socket for the other commands.
type Owner struct {
	Store     *journal.Store
	Engine    *engine.Engine
	Artifacts artifact.Store

	home      string
	sock      string
	ownerFile string
	ownerLine string
	logger    *slog.Logger
	srv       *http.Server
	api       *server
	handler   http.Handler
	stop      chan struct{} // closed by Close: follows end
	served    chan struct{} // closed when Serve has returned

	closeOnce sync.Once
	closeErr  error
}

// waitGrace is how long Own retries a locked store silently before calling OnWait: a command
// that opened the store directly (OpenBackend) holds it only for a moment.
const waitGrace = 500 * time.Millisecond

// maxSocketPath is the longest unix socket path that fits every platform's sockaddr_un
// (104 bytes on macOS and the BSDs, 108 on Linux, with the terminating NUL).
const maxSocketPath = 103

// shutdownGrace bounds how long Close waits for API requests under way.
const shutdownGrace = 2 * time.Second

// Own makes this process the owner of the store under cfg.Home: it creates Home, opens the
// journal at Home/state and the artifacts at Home/artifacts, writes Home/fuscia.owner, and
// serves the API on Home/fuscia.sock (removing a stale socket file first). While another
// process holds the store, Own returns an error wrapping ErrOwned if that process answers on
// the socket, and otherwise waits (see OnWait) until the store is free or ctx ends.
func Own(ctx context.Context, cfg OwnerConfig) (*Owner, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sock := filepath.Join(cfg.Home, SocketName)
	if len(sock) > maxSocketPath {
		return nil, fmt.Errorf("the home directory %s is too deep: its API socket path would be %d bytes, over the %d a unix socket allows; use a shorter -home or FUSCIA_HOME",
			cfg.Home, len(sock), maxSocketPath)
	}
	// Private before anything is created in it: the socket is then out of other users' reach
	// from the moment it exists, whatever the umask (HomeMode).
	tightened, err := PrepareHome(cfg.Home)
	if err != nil {
		return nil, err
	}
	if tightened != 0 {
		logger.Info("the fuscia home was open to other users; it is now private",
			"home", cfg.Home, "mode_was", fmt.Sprintf("%04o", tightened), "mode", fmt.Sprintf("%04o", HomeMode))
	}
	st, err := lock(ctx, cfg, logger, sock)
	if err != nil {
		return nil, err
	}
	arts := cfg.Artifacts
	if arts == nil {
		arts = artifact.NewDir(filepath.Join(cfg.Home, artifactsName))
	}
	o := &Owner{
		Store:     st,
		Artifacts: arts,
		home:      cfg.Home,
		sock:      sock,
		ownerFile: filepath.Join(cfg.Home, OwnerFileName),
		ownerLine: ownerLine(cfg.Command),
		logger:    logger,
		stop:      make(chan struct{}),
		served:    make(chan struct{}),
	}
	if cfg.NewEngine != nil {
		o.Engine = cfg.NewEngine(st, o.Artifacts)
	} else {
		o.Engine = engine.New(engine.Config{Store: st, Artifacts: o.Artifacts, Logger: logger})
	}
	if err := o.serve(cfg); err != nil {
		_ = os.Remove(o.ownerFile)
		return nil, errors.Join(err, st.Close())
	}
	return o, nil
}

// ownerLine is the owner file's content: "PID COMMAND\n" (lockedBy reads it).
func ownerLine(command string) string {
	if command == "" {
		command = filepath.Base(os.Args[0])
	}
	// One line: a newline in a path must not make a second one.
	command = strings.Join(strings.Fields(command), " ")
	return fmt.Sprintf("%d %s\n", os.Getpid(), command)
}

// lock opens the store, waiting while another process holds it.
func lock(ctx context.Context, cfg OwnerConfig, logger *slog.Logger, sock string) (*journal.Store, error) {
	stateDir := filepath.Join(cfg.Home, stateDirName)
	start := time.Now()
	waited := false
	for {
		st, err := openJournal(stateDir, journal.Options{Logger: logger, GCInterval: 10 * time.Minute, Sizes: cfg.StoreSizes, HoldRelaxed: cfg.StoreHoldRelaxed})
		if err == nil {
			return st, nil
		}
		if !errors.Is(err, journal.ErrLocked) {
			return nil, err
		}
		if answers(ctx, sock) {
			return nil, fmt.Errorf("%w: %s serves it on %s", ErrOwned, lockedBy(cfg.Home), sock)
		}
		if !waited && time.Since(start) >= waitGrace {
			waited = true
			if cfg.OnWait != nil {
				cfg.OnWait(lockedBy(cfg.Home))
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the state store in %s: %w", cfg.Home, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serve writes the owner file and starts the API on the socket.
func (o *Owner) serve(cfg OwnerConfig) error {
	if err := writePrivate(o.ownerFile, []byte(o.ownerLine)); err != nil {
		return fmt.Errorf("write %s: %w", o.ownerFile, err)
	}
	// This process holds the store's lock, so a socket file left behind belongs to an owner
	// that died; one that still answers is not a fuscia owner of this store.
	if _, err := os.Lstat(o.sock); err == nil {
		if answers(context.Background(), o.sock) {
			return fmt.Errorf("another process answers on %s although this process holds the state store; stop it or remove the file", o.sock)
		}
		if err := os.Remove(o.sock); err != nil {
			return fmt.Errorf("remove the stale socket %s: %w", o.sock, err)
		}
	}
	// The API cancels and prunes runs and starts code: only the user may use it. The socket is
	// created with the umask's mode, but inside the private home (Own), so nobody else can reach
	// it before the chmod below; peerListener refuses other users' connections besides.
	ul, err := net.Listen("unix", o.sock)
	if err != nil {
		return fmt.Errorf("serve the API: %w", err)
	}
	if err := os.Chmod(o.sock, 0o600); err != nil {
		_ = ul.Close()
		return fmt.Errorf("serve the API: %w", err)
	}
	ln := newPeerListener(ul, o.logger)
	o.api = &server{
		ops:    &ops{st: o.Store, artifacts: o.Artifacts, forget: cfg.Forget, eng: o.Engine, stop: o.stop, signaled: cfg.Signaled},
		logger: o.logger,
		extend: cfg.Extend,
	}
	// Every answer is scrubbed of the secrets the process has read (engine/redact).
	o.handler = redact.HTTP(o.api.routes(), o.Engine.Redact())
	o.srv = &http.Server{
		Handler:           o.handler,
		ConnContext:       markOwnerSocket,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(o.logger.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(o.served)
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.logger.Error("the API server stopped", "socket", o.sock, "error", err)
		}
	}()
	return nil
}

// writePrivate replaces file with data, readable by the user only (0600 whatever the umask,
// even over an older file of a wider mode): the file is written aside and renamed into place.
func writePrivate(file string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*") // 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// Handler is the API, to serve on another listener too (serve's -listen).
func (o *Owner) Handler() http.Handler { return o.handler }

// Home is the home directory the owner owns.
func (o *Owner) Home() string { return o.home }

// Close stops the API (letting requests under way finish for a short while; follows end at
// once), removes the socket and the owner file, and closes the store. It neither cancels nor
// waits for the engine's runs: end them first (Engine.Wait). Every goroutine Own started has
// exited when Close returns; later calls return the first's result.
func (o *Owner) Close() error {
	o.closeOnce.Do(func() {
		close(o.stop)
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		var errs []error
		if err := o.srv.Shutdown(ctx); err != nil {
			// Requests still under way are cut: their handlers see their contexts end.
			_ = o.srv.Close()
		}
		<-o.served
		o.api.drain()
		// Serve's listener unlinks the socket on close; this is for one it could not.
		if err := os.Remove(o.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", o.sock, err))
		}
		// Remove the owner file only while it is ours: it is, as long as the store is locked.
		if b, err := os.ReadFile(o.ownerFile); err == nil && string(b) == o.ownerLine {
			if err := os.Remove(o.ownerFile); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", o.ownerFile, err))
			}
		}
		errs = append(errs, o.Store.Close())
		o.closeErr = errors.Join(errs...)
	})
	return o.closeErr
}
