package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/host"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/serve"
	"github.com/fuscia/fuscia/lang"
)

func runServe(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "serve", "serve [PATH…] [-listen ADDR] [-allowed-host NAME…] [-max-connections N] [-metrics-listen ADDR] [-shutdown-grace D] [-webhook-wait D] [-retain D] [-tls-cert FILE -tls-key FILE] [-ui=false] [-nats URL[,URL…] -cluster-key-file FILE [-local-worker=false] [-nats-creds FILE] [-nats-tls-ca FILE] [-nats-prefix NAME] [-nats-ack-wait D] [-max-deliver N]]")
	listen := fs.String("listen", "127.0.0.1:8080", "serve the HTTP API and the webhooks on `ADDR` (host:port; port 0 picks a free one)")
	var allowedHosts multiFlag
	fs.Var(&allowedHosts, "allowed-host", "also answer the API to the Host `NAME` (NAME or NAME:PORT; * for any), besides localhost, loopback addresses and the address listened on (repeatable)")
	tlsCert := fs.String("tls-cert", "", "answer TLS on -listen with the certificate (PEM, chain after the leaf) in `FILE`; needs -tls-key")
	tlsKey := fs.String("tls-key", "", "the private key (PEM) of -tls-cert, in `FILE`")
	maxConns := fs.Int("max-connections", serve.DefaultMaxConnections, "keep at most `N` connections open on -listen; more wait")
	webUI := fs.Bool("ui", true, "serve the web UI at /ui/ on -listen (log in with an API token); -ui=false turns it off")
	metricsListen := fs.String("metrics-listen", "", "serve Prometheus metrics at /metrics on `ADDR` (default: off)")
	grace := fs.Duration("shutdown-grace", 30*time.Second, "on SIGTERM or SIGINT, let running attempts finish for up to `D`")
	webhookWait := fs.Duration("webhook-wait", 60*time.Second, "how long a webhook's ?wait=true waits for its run (`D`)")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	logFormat := fs.String("log-format", "", "log format on stderr: `text` or json (default: text on a terminal)")
	nf := addNATSFlags(fs, false)
	localWorker := fs.Bool("local-worker", true, "with -nats, also run a worker of the default pool in this process")
	retainText := fs.String("retain", "", "prune the runs that finished more than `D` ago (720h, 30d), with their artifacts, KV and logs, at start and every tenth of D (default: keep every run)")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if code, ok := fs.checkLogFormat(*logFormat); !ok {
		return code
	}
	if c.getenv("GOMAXPROCS") == "" {
		// Badger's compactors each keep a P busy for up to hundreds of milliseconds at a time,
		// and Go preempts a goroutine only after 10 ms: with one P per CPU, while both
		// compacted, the requests waited 20-40 ms for a P. With as many Ps more, the kernel
		// shares the CPUs among serve's threads in its own, shorter slices. At half the
		// maximum rate the request p99 fell from 22-37 to 8-12 ms, and the maximum rate rose
		// by 10-25%; paced, a run costs 7% more CPU (docs/performance.md, issue 20 item 4,
		// session 21).
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + journal.Compactors)
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return c.fail(false, "Workflow path not found", fmt.Sprintf("%s does not exist. Give workflow files or directories: fuscia serve [PATH…].", p))
		}
	}
	if *grace < 0 || *webhookWait <= 0 {
		return fs.invalid(false, "Invalid duration", "-shutdown-grace must be 0 or more and -webhook-wait more than 0.")
	}
	if *maxConns < 1 {
		return fs.invalid(false, "Invalid -max-connections", fmt.Sprintf("-max-connections must be 1 or more, not %d.", *maxConns))
	}
	for _, l := range []struct{ flag, addr string }{{"-listen", *listen}, {"-metrics-listen", *metricsListen}} {
		if l.addr == "" && l.flag == "-metrics-listen" {
			continue
		}
		if err := checkListenAddr(l.addr); err != nil {
			return fs.invalid(false, "Invalid "+l.flag, fmt.Sprintf("%s %q: %s. Give HOST:PORT, such as 127.0.0.1:8080 or :8080, with a port from 0 to 65535.", l.flag, l.addr, err))
		}
	}
	guard := serve.GuardConfig{ListenAddr: *listen}
	for _, v := range allowedHosts {
		ah, err := serve.ParseAllowedHost(v)
		if err != nil {
			return fs.invalid(false, "Invalid -allowed-host", sentenceOf(err))
		}
		guard.AllowedHosts = append(guard.AllowedHosts, ah)
	}
	tlsConf, err := serve.LoadTLS(*tlsCert, *tlsKey)
	if err != nil {
		return c.fail(false, "Invalid TLS certificate or key", sentenceOf(err))
	}
	var retain time.Duration
	if *retainText != "" {
		if retain, ok = parseAge(*retainText); !ok {
			return fs.invalid(false, "Invalid -retain", fmt.Sprintf("%q is not a duration: use one such as 720h or 30d, or 0 to keep every run.", *retainText))
		}
	}
	clusterCfg, clustered, err := nf.config(c)
	if err != nil {
		return c.fail(false, "Invalid cluster settings", sentenceOf(err))
	}
	now, err := c.serveClock()
	if err != nil {
		return c.fail(false, "Invalid FUSCIA_NOW", sentenceOf(err))
	}
	home := fs.homeDir()
	level := slog.LevelInfo
	if c.getenv("FUSCIA_LOG_LEVEL") != "" {
		level = c.logLevel()
	}
	_ = c.maxCheckHeap() // warns of a FUSCIA_MAX_CHECK_HEAP that is not a size: the check child's warning is not shown
	var diagMu sync.Mutex
	// The check child (check_child.go); without one (a test binary) serve evaluates each file
	// in its own process.
	var checkElsewhere func(ctx context.Context, file string, src []byte) (map[string][sha256.Size]byte, error)
	if checker := daemonChecker(c.environ()); checker != nil {
		checkElsewhere = checker.Check
		defer checker.Close() // after the host's Close (deferred below, so run first)
	}
	opts, err := c.hostOptions(host.Options{
		Home: home, Command: fs.invocation(paths), LogFormat: *logFormat, LogLevel: level, PluginDirs: pluginDirs,
		CompileElsewhere: daemonCompiler(),
		Serve: &host.ServeOptions{
			Paths: paths, Vars: lang.VarInputs{Env: c.environ()}, Now: now, WebhookWait: *webhookWait, Retain: retain,
			CheckElsewhere: checkElsewhere,
			// The diagnostics go to stderr as validate shows them; the log gets their summary.
			OnInvalid: func(_ string, files map[string]*hcl.File, diags hcl.Diagnostics) {
				var b bytes.Buffer
				writeDiags(&b, files, diags)
				diagMu.Lock()
				_, _ = c.stderr.Write(b.Bytes())
				diagMu.Unlock()
			},
		},
	})
	if err != nil {
		return c.storeFailed("Cannot open the state store", home, err)
	}
	if clustered {
		opts.Cluster = &host.ClusterOptions{Config: clusterCfg, LocalWorker: *localWorker}
	}
	h, err := host.New(opts)
	if err != nil {
		return c.operationFailed("Cannot set up metrics", err)
	}
	defer func() { _ = h.Close() }()
	srv := h.Server()
	tcp, err := srv.TCPHandler(serve.TCPConfig{Guard: guard, UI: *webUI})
	if err != nil {
		return c.operationFailed("Cannot serve the web UI", err)
	}
	// The listener is bound before the store is opened: a request in the first moments of a
	// (re)start is answered 503 with Retry-After (serve's Handler, docs/serve.md "Readiness")
	// rather than refused. An address in use may be the serve this one replaces, still
	// draining: it frees the address before the store, so then it is bound once the store is
	// ours.
	httpLog := slog.NewLogLogger(c.logger(*logFormat).Handler(), slog.LevelWarn)
	var servers []*serve.Listener
	closeServers := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	// announce prints where the API listens. An address other machines reach is announced only
	// once refuseOpenListen has let it be served: a script waiting for the line must not take
	// a serve about to refuse for a started one.
	var announce func()
	listenAPI := func() error {
		api, err := serve.Listen(serve.ListenConfig{Addr: *listen, Handler: redact.HTTP(tcp, c.secrets),
			MaxConnections: *maxConns, ErrorLog: httpLog, TLS: tlsConf})
		if err != nil {
			return err
		}
		servers = append(servers, api)
		announce = func() {
			fmt.Fprintf(c.stdout, "API and webhooks on %s\n", api.URL())
			if *webUI {
				fmt.Fprintf(c.stdout, "Web UI on %s/ui/\n", api.URL())
			}
		}
		if serve.Loopback(*listen) && !clustered {
			// Said at once: until the store is open the listener answers 503 "starting". With
			// -nats not before the cluster was reached: a serve that then exits 2 with "Cannot
			// reach the cluster" had printed an address a script took for a started serve.
			announce()
			announce = nil
		}
		return nil
	}
	lerr := listenAPI()
	if lerr != nil && !errors.Is(lerr, syscall.EADDRINUSE) {
		return c.operationFailed("Cannot listen for the API and webhooks", lerr)
	}

	if err := h.Open(ctx); err != nil {
		closeServers()
		if errors.Is(err, context.Canceled) {
			// SIGTERM or SIGINT while waiting for the store: a stop asked for, not a failure.
			fmt.Fprintln(c.stdout, "Stopped.")
			return exitOK
		}
		if errors.Is(err, host.ErrCluster) {
			return c.fail(false, "Cannot reach the cluster", sentenceOf(err))
		}
		return c.storeFailed("Cannot open the state store", home, err)
	}
	if code, refused := c.refuseOpenListen(*listen, h.Store()); refused {
		closeServers()
		return code
	}
	if lerr != nil {
		if err := listenAPI(); err != nil {
			return c.operationFailed("Cannot listen for the API and webhooks", err)
		}
	}
	if announce != nil {
		announce()
	}
	// Webhooks answer 503 "starting" until Start has loaded the workflows.
	srv.ServeAPI(h.Owner().Handler())
	if *metricsListen != "" {
		mm := http.NewServeMux()
		mm.Handle("/metrics", h.MetricsHandler())
		ml, err := serve.Listen(serve.ListenConfig{Addr: *metricsListen, Handler: mm, ErrorLog: httpLog})
		if err != nil {
			closeServers()
			return c.operationFailed("Cannot listen for metrics", err)
		}
		servers = append(servers, ml)
		fmt.Fprintf(c.stdout, "Metrics on %s/metrics\n", ml.URL())
	}

	n, err := srv.Start(ctx)
	if err != nil {
		closeServers()
		return c.operationFailed("Cannot start serving", err)
	}
	fmt.Fprintf(c.stdout, "Serving %d workflow(s) from %s; state in %s. Stop with Ctrl-C or SIGTERM.\n", n, strings.Join(paths, ", "), home)
	// Bound the garbage between collections unless the user tuned the collector (docs/serve.md,
	// "Memory"). Only from here: the start's own allocations are not the steady state's.
	heapCtx, stopHeap := context.WithCancel(ctx)
	heapDone := make(chan struct{})
	go func() {
		defer close(heapDone)
		serve.KeepHeapSmall(heapCtx, serve.DefaultHeapFloor, c.getenv("GOMEMLIMIT") != "" || c.getenv("GOGC") != "")
	}()
	defer func() { stopHeap(); <-heapDone }()

	<-ctx.Done()
	fmt.Fprintf(c.stdout, "Shutting down: no new runs; running attempts have %s to finish.\n", *grace)
	graceCtx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	stopSecond := c.onSecondSignal(cancel)
	defer stopSecond()
	srv.Stop(graceCtx)
	for _, s := range servers {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.Shutdown(sctx) // closes what is left when sctx ends
		scancel()
	}
	if err := h.Close(); err != nil {
		fmt.Fprintf(c.stderr, "Warning: closing the state store: %v\n", err)
	}
	fmt.Fprintln(c.stdout, "Stopped. Unfinished runs resume at the next start.")
	return exitOK
}

// refuseOpenListen refuses (exit 2) to serve the API on a -listen address other machines may
// reach while the store holds no API token: nothing would keep them out of it. Until the store
// is open the listener only answers 503, so this comes before any request is served.
func (c *cli) refuseOpenListen(listen string, st *journal.Store) (int, bool) {
	if serve.Loopback(listen) {
		return 0, false
	}
	toks, err := st.Tokens()
	if err != nil {
		return c.operationFailed("Cannot read the API tokens", err), true
	}
	if len(toks) > 0 {
		return 0, false
	}
	return c.fail(false, "No API token for a -listen other machines can reach",
		fmt.Sprintf("-listen %s is not a loopback address, and no API token exists: anyone who reaches it could run, approve and delete runs. "+
			"Create a token first (it works while serve is stopped), start serve again, and send the token as Authorization: Bearer TOKEN:\n"+
			"  fuscia token create NAME -scope admin\n"+
			"Or listen on a loopback address such as 127.0.0.1:8080.", listen)), true
}

// onSecondSignal calls f when SIGINT or SIGTERM arrives again during the shutdown: the
// attempts still running are interrupted at once (they are journaled as such).
func (c *cli) onSecondSignal(f func()) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			fmt.Fprintln(c.stderr, "Interrupting the running attempts now.")
			f()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// serveClock is the schedules' clock: the real one, or with FUSCIA_NOW (RFC 3339) one that
// starts at that instant and runs at the real pace — for testing schedules without waiting
// for the wall clock.
func (c *cli) serveClock() (func() time.Time, error) {
	v := c.getenv("FUSCIA_NOW")
	if v == "" {
		return time.Now, nil
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("FUSCIA_NOW=%q is not an RFC 3339 time such as 2026-11-21T09:59:58Z", v)
	}
	offset := time.Until(at)
	return func() time.Time { return time.Now().Add(offset) }, nil
}
