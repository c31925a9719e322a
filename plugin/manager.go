package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fuscia/fuscia/plugin/discover"
	"github.com/fuscia/fuscia/plugin/internal/transport"
	"github.com/fuscia/fuscia/plugin/sdk"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultGracePeriod  = 5 * time.Second
	// DefaultCheckTimeout bounds a plan-time call: GetSchema, Configure, ValidateInput.
	DefaultCheckTimeout = 30 * time.Second
)

// Options configure a Manager.
type Options struct {
	// Logger receives go-plugin's log and the plugins' stderr, with the plugin's name.
	Logger *slog.Logger
	// StartTimeout bounds a plugin's start and handshake; zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// GracePeriod is how long a plugin may take to return after a call's deadline or
	// cancellation before it is killed; zero means DefaultGracePeriod.
	GracePeriod time.Duration
	// CheckTimeout bounds each plan-time call (GetSchema, Configure, ValidateInput), which
	// has no task timeout of its own; zero means DefaultCheckTimeout. A plugin blocked in one
	// held validate, plan and apply for good.
	CheckTimeout time.Duration
	// CacheDir keeps GetSchema answers by binary digest ($FUSCIA_HOME/cache); empty keeps them
	// in memory only.
	CacheDir string
	// MayStart, when set, is asked before a binary is started: a binary it refuses (with an
	// error that says why and what to do) is never run, and calls that need its process fail
	// with that error. A schema already in the cache is still answered. The language server
	// uses it so that opening a file never runs a program that came with the file.
	MayStart func(path string) error
}

// Target is the plugin binary a workflow's plugin block resolved to.
type Target struct {
	// Name is the plugin block's local name, for messages.
	Name string
	// Path is the binary; Digest its "sha256:<hex>" as locked by the plan, checked before the
	// binary starts; Version the version from its file name (empty when it has none).
	Path, Digest, Version string
}

// targetKey is what identifies a plugin process: its binary's path and digest. A struct,
// not a joined string, so that finding the process of a call allocates nothing.
type targetKey struct{ path, digest string }

func (t Target) key() targetKey { return targetKey{t.Path, t.Digest} }

func (t Target) String() string {
	return fmt.Sprintf("plugin %q (%s)", t.Name, filepath.Base(t.Path))
}

// Manager runs plugin processes: one per binary and digest, started on first use, reused by
// every call, restarted after a crash, killed by Close. Safe for concurrent use.
type Manager struct {
	opts Options

	mu       sync.Mutex
	procs    map[targetKey]*process
	starting map[targetKey]*startWait
	schemas  map[string]*Schema // by digest
	digests  *discover.Digests
	closed   bool
	restarts int

	done      chan struct{} // closed by Close: ends the grace watchers
	watchers  sync.WaitGroup
	sweepOnce sync.Once // abandoned socket directories, before the first start
}

// startWait lets concurrent first calls share one start.
type startWait struct {
	done chan struct{}
	p    *process
	err  error
}

// NewManager returns a Manager; it starts nothing until a call needs a plugin.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = DefaultCheckTimeout
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = DefaultGracePeriod
	}
	return &Manager{opts: opts, procs: map[targetKey]*process{}, starting: map[targetKey]*startWait{},
		schemas: map[string]*Schema{}, digests: discover.NewDigests(), done: make(chan struct{})}
}

// Digests is the cache of binary digests of the processes that share this Manager (the plan's
// resolution, the runtime's binding: plan.Env.Digests); nil for a nil Manager.
func (m *Manager) Digests() *discover.Digests {
	if m == nil {
		return nil
	}
	return m.digests
}

// Restarts is how many plugin processes were lost (crashed, or killed after a grace period)
// while in use; the next call of each starts a new one.
func (m *Manager) Restarts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.restarts
}

// Close kills every plugin process and waits for them and for the Manager's goroutines.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.done)
	procs := m.procs
	m.procs = map[targetKey]*process{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop()
		}()
	}
	wg.Wait()
	m.watchers.Wait()
	return nil
}

// CleanupClients kills the plugin processes of every Manager of this process: the last thing
// the CLI does before it exits, whatever path led there.
func CleanupClients() { goplugin.CleanupClients() }

// process is one running plugin binary.
type process struct {
	target   Target
	client   *goplugin.Client
	provider pluginv1.ProviderClient
	host     *hostServer
	broker   *goplugin.GRPCBroker
	pid      int
	stderr   *stderrTail
	sockDir  *socketDir // holds the plugin's sockets; removed by stop
	once     sync.Once

	streams execStreams // Execute's streams between calls

	announce sync.Once // serves host on the broker, at the first call that needs it
	hostID   uint32    // the broker id host is served under; set by announce

	// killedFor says why Fuscia killed the process while calls may be in flight on it (they
	// fail with that reason, not as a crash of the plugin's own); empty otherwise.
	killedFor atomic.Pointer[string]
}

// killed is why Fuscia killed p (killedFor), or "".
func (p *process) killed() string {
	if why := p.killedFor.Load(); why != nil {
		return *why
	}
	return ""
}

// stop kills the process (gracefully first, as go-plugin does) and anything left in its
// process group, and reaps it.
func (p *process) stop() {
	p.once.Do(func() {
		p.streams.close()
		p.client.Kill()
		if p.pid > 0 {
			// The plugin leads its own process group; children it left behind go with it.
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		}
		p.sockDir.remove()
	})
}

// hostBrokerID returns the broker id Host is served under, serving it on the first call.
//
// Host is announced when a call that carries its id is about to be sent, not when the process
// starts: go-plugin's broker in the plugin forgets an announced address that nothing dialed
// within 5 s, and a process can sit idle far longer before its first call (serve starts a
// workflow's plugins when it loads the workflow). The SDK dials as the call starts.
func (p *process) hostBrokerID() uint32 {
	p.announce.Do(func() {
		p.hostID = p.broker.NextId()
		// AcceptAndServe returns when the broker closes, that is when the client is killed.
		go p.broker.AcceptAndServe(p.hostID, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(append(opts, transport.ServerOptions()...)...)
			pluginv1.RegisterHostServer(s, p.host)
			return s
		})
	})
	return p.hostID
}

// exited reports whether the process is gone.
func (p *process) exited() bool { return p.client.Exited() }

// process returns the running process for t, starting it when there is none or the last one
// exited.
func (m *Manager) process(ctx context.Context, t Target) (*process, error) {
	key := t.key()
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, fmt.Errorf("%s: the plugin manager is closed", t)
		}
		if p, ok := m.procs[key]; ok {
			if !p.exited() {
				m.mu.Unlock()
				return p, nil
			}
			delete(m.procs, key)
			m.restarts++
			go p.stop() // reap it; the process is gone already
		}
		if w, ok := m.starting[key]; ok {
			m.mu.Unlock()
			select {
			case <-w.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if w.err != nil {
				return nil, w.err
			}
			continue
		}
		w := &startWait{done: make(chan struct{})}
		m.starting[key] = w
		m.mu.Unlock()

		w.p, w.err = m.start(t)
		if w.err == nil {
			m.learnStreams(ctx, t, w.p)
		}
		m.mu.Lock()
		delete(m.starting, key)
		if w.err == nil {
			if m.closed {
				w.err = fmt.Errorf("%s: the plugin manager is closed", t)
				go w.p.stop()
			} else {
				m.procs[key] = w.p
			}
		}
		m.mu.Unlock()
		close(w.done)
		return w.p, w.err
	}
}

// learnStreams tells p's calls whether the binary serves ExecuteStream, from its schema: the
// one known already (a plan fetched it; the disk cache keeps it), else one fetched now, once
// per process. A plugin whose schema cannot be had is called unary.
func (m *Manager) learnStreams(ctx context.Context, t Target, p *process) {
	if s := m.known(t.Digest); s != nil {
		p.streams.allow(s.ExecuteStream)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	resp, err := p.provider.GetSchema(ctx, &pluginv1.GetSchemaRequest{})
	if err != nil {
		return // the call that started p meets the failure, if it lasts
	}
	p.streams.allow(resp.ExecuteStream)
	m.remember(t.Digest, schemaFrom(resp))
}

// forget drops p so that the next call starts a new process, and stops it.
func (m *Manager) forget(p *process) {
	m.mu.Lock()
	if cur, ok := m.procs[p.target.key()]; ok && cur == p {
		delete(m.procs, p.target.key())
		m.restarts++
	}
	m.mu.Unlock()
	p.stop()
}

// start launches t's binary, checks its digest and completes the handshake.
func (m *Manager) start(t Target) (*process, error) {
	if m.opts.MayStart != nil {
		if err := m.opts.MayStart(t.Path); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
	}
	sum, err := digestBytes(t.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	// The plugin makes its socket, and go-plugin the broker's listeners on this side, in a
	// directory of their own, which this process owns and removes once the plugin has stopped
	// (sockdir.go). go-plugin's default is the temporary directory itself, and a plugin that
	// crashes, is killed or fails its handshake never removes its socket there: one file left
	// in /tmp for each.
	m.sweepOnce.Do(func() { sweepAbandonedSocketDirs(os.TempDir(), time.Now()) })
	sockDir, err := newSocketDir()
	if err != nil {
		return nil, fmt.Errorf("%s: a directory for its socket: %w", t, err)
	}
	cmd := exec.Command(t.Path)
	// go-plugin appends this process's environment and its own variables after this one.
	cmd.Env = []string{goplugin.EnvUnixSocketDir + "=" + sockDir.path}
	// Its own process group, so stop can kill what it leaves behind, and a parent-death signal,
	// so it dies with us even when we are SIGKILLed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	logger := newHclogBridge(m.opts.Logger, t.Name, filepath.Base(t.Path))
	host := newHostServer()
	tail := &stderrTail{}
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          goplugin.PluginSet{sdk.PluginKey: &grpcPlugin{}},
		Cmd:              cmd,
		SecureConfig:     &goplugin.SecureConfig{Checksum: sum, Hash: sha256.New()},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		Managed:          true,
		StartTimeout:     m.opts.StartTimeout,
		Logger:           logger,
		SyncStdout: &lineLogger{log: func(line string) {
			logger.Warn("plugin wrote to stdout, which is reserved for go-plugin", "line", line)
		}},
		SyncStderr:      io.MultiWriter(tail, logger.StandardWriter(nil)),
		Stderr:          tail,
		GRPCDialOptions: transport.DialOptions(),
	})
	failed := func() {
		client.Kill()
		sockDir.remove()
	}
	rpc, err := client.Client()
	if err != nil {
		failed()
		return nil, withStderr(startError(t, err), tail)
	}
	raw, err := rpc.Dispense(sdk.PluginKey)
	if err != nil {
		failed()
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	r := raw.(*remote)
	p := &process{target: t, client: client, provider: r.provider, host: host, broker: r.broker, stderr: tail, sockDir: sockDir}
	p.streams.log = m.opts.Logger.With("plugin", t.Name)
	if rc := client.ReattachConfig(); rc != nil {
		p.pid = rc.Pid
	}
	m.opts.Logger.Debug("plugin started", "plugin", t.Name, "path", t.Path, "pid", p.pid)
	return p, nil
}

// startError says why a plugin did not start, in words that point at the fix.
func startError(t Target, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, goplugin.ErrChecksumsDoNotMatch):
		return fmt.Errorf("%s: the binary %s changed since it was planned (locked %s); run `fuscia plan` again to lock the new one", t, t.Path, t.Digest)
	case strings.Contains(msg, "exited before we could connect") || strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		return fmt.Errorf("%s: the binary exited before the handshake; it is not a Fuscia plugin, or it expects another magic cookie or protocol version (Fuscia speaks %s=%s, protocol %d); its stderr is in Fuscia's log",
			t, sdk.Handshake.MagicCookieKey, sdk.Handshake.MagicCookieValue, sdk.Handshake.ProtocolVersion)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		first := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(msg, "Unrecognized remote plugin message: "), "\n", 2)[0])
		return fmt.Errorf("%s: the plugin wrote %q to stdout before its handshake; stdout is reserved for go-plugin, so a plugin must log to stderr (or it is not a Fuscia plugin built with plugin/sdk)", t, first)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%s: no handshake within the start timeout; is it a Fuscia plugin that calls sdk.Serve?", t)
	case strings.Contains(msg, "Incompatible API version") || strings.Contains(msg, "Incompatible core API version"):
		return fmt.Errorf("%s: it speaks another plugin protocol version than Fuscia's %d: %v", t, sdk.Handshake.ProtocolVersion, err)
	}
	return fmt.Errorf("%s: start: %w", t, err)
}

// withStderr appends what the plugin last wrote to stderr to err.
func withStderr(err error, tail *stderrTail) error {
	if s := tail.String(); s != "" {
		return fmt.Errorf("%w (its stderr: %s)", err, s)
	}
	return err
}

func digestBytes(d string) ([]byte, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok {
		return nil, fmt.Errorf("digest %q is not sha256:<hex>", d)
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("digest %q is not sha256:<hex>", d)
	}
	return b, nil
}

// grpcPlugin is go-plugin's view of a Fuscia provider, host side.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

// remote is what Dispense returns: the provider client and the broker Host is served on.
type remote struct {
	provider pluginv1.ProviderClient
	broker   *goplugin.GRPCBroker
}

func (grpcPlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host side of a Fuscia plugin serves no provider")
}

func (grpcPlugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &remote{provider: pluginv1.NewProviderClient(conn), broker: broker}, nil
}
