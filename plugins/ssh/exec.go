package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// connectTimeout bounds connecting and the SSH handshake of a new connection, whatever the
// attempt's deadline: a server that accepts TCP and then says nothing must not hold a slot
// forever. The input's timeout is about the command, not this.
const connectTimeout = 30 * time.Second

// errTimedOut is the cause of the command's context when the input's timeout elapses, which
// tells it apart from the attempt's own deadline.
var errTimedOut = errors.New("exec timeout elapsed")

// notRun is the output of a command that never started.
var notRun = execcore.Output{ExitCode: -1}

// Runner runs exec tasks over pooled connections. It is safe for concurrent use.
type Runner struct {
	pools *Pools
}

// NewRunner returns a Runner with empty pools.
func NewRunner() *Runner { return &Runner{pools: NewPools()} }

// Close closes the idle connections (for tests).
func (r *Runner) Close() { r.pools.Close() }

// Run is the exec task: it checks in, applies the plugin block's defaults cfg, runs the command
// on a pooled connection and applies the exit-code policy. The output is meaningful even with
// an error (what the command wrote before failing).
func (r *Runner) Run(ctx context.Context, in Input, cfg Config) (execcore.Output, error) {
	if err := execcore.ProblemsError(checkInput(in, execcore.AllKnown)); err != nil {
		return notRun, err
	}
	timeout, err := execcore.ParseTimeout(in.Timeout)
	if err != nil { // checkInput has reported it already; kept so the error is never dropped
		return notRun, execcore.Invalidf("/timeout", "timeout is invalid: %v", err)
	}
	t, err := resolve(in, cfg)
	if err != nil {
		return notRun, err
	}
	source := "private_key"
	if t.keyFile != "" {
		source = t.keyFile
	}
	signer, err := parseKey(t.keyPEM, source)
	if err != nil {
		return notRun, execcore.AsFatal(err)
	}
	hostport := net.JoinHostPort(t.host, strconv.Itoa(t.port))
	key := poolKey{user: t.user, hostport: hostport, keyFingerprint: fingerprint(signer.PublicKey()), knownHosts: t.knownHosts}
	dial := func(ctx context.Context) (*ssh.Client, error) { return dialSSH(ctx, key, signer) }
	what := fmt.Sprintf("remote command %q on %s", commandName(in), key)

	hp := r.pools.host(key)
	c, reused, err := hp.get(ctx, dial)
	if err != nil {
		return notRun, err
	}
	sess, err := c.client.NewSession()
	if err != nil && reused {
		// The server may have dropped an idle connection without our noticing yet: one fresh
		// connection, once.
		if c, err = hp.redial(ctx, c, dial); err != nil {
			return notRun, err
		}
		sess, err = c.client.NewSession()
	}
	if err != nil {
		hp.put(c, false)
		return notRun, fmt.Errorf("ssh %s: open a session: %w", key, err)
	}
	out, keep, err := runSession(ctx, sess, func() { c.client.Close() }, in, timeout, what)
	hp.put(c, keep)
	return out, err
}

// runSession runs in's command (commandLine) in sess and closes sess. keep says whether the connection is in a
// known good state and may be reused. abort closes the connection: it is how a stopped command
// is given up on.
func runSession(ctx context.Context, sess *ssh.Session, abort func(), in Input, timeout time.Duration, what string) (out execcore.Output, keep bool, err error) {
	defer sess.Close() // after Wait it only reports io.EOF

	for _, name := range execcore.SortedKeys(in.Env) {
		if err := sess.Setenv(name, in.Env[name]); err != nil {
			return notRun, true, execcore.Fatalf("%s: the server refused environment variable %s (sshd accepts only the names its AcceptEnv setting lists): %w", what, name, err)
		}
	}
	stdout, stderr := execcore.NewCapture(execcore.MaxOutput), execcore.NewCapture(execcore.MaxOutput)
	sess.Stdout, sess.Stderr = stdout, stderr
	if in.Stdin != "" {
		sess.Stdin = strings.NewReader(in.Stdin)
	}

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()

	if err := sess.Start(commandLine(in)); err != nil {
		return notRun, true, fmt.Errorf("%s could not start: %w", what, err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }() // returns once the channel closes; both paths below ensure it

	var waitErr error
	select {
	case waitErr = <-done:
	case <-runCtx.Done():
		// Ask the server to kill the command (OpenSSH honours "signal" since 7.9; others may
		// not), then give up on the session and its connection: closing the connection ends
		// the channel, and so Wait, whatever the server does.
		_ = sess.Signal(ssh.SIGKILL)
		abort()
		<-done
		out := execcore.Collect(-1, stdout, stderr)
		if ctx.Err() == nil && errors.Is(context.Cause(runCtx), errTimedOut) {
			return out, false, execcore.Fatalf("%s timed out after %s; the session was killed and its connection closed", what, timeout)
		}
		return out, false, fmt.Errorf("%s stopped, its session killed: %w", what, ctx.Err())
	}

	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case waitErr == nil:
		return execcore.Collect(0, stdout, stderr), true, nil
	case errors.As(waitErr, &exitErr):
		code, signal := exitErr.ExitStatus(), ""
		if exitErr.Signal() != "" {
			code, signal = -1, "SIG"+exitErr.Signal()
		}
		out := execcore.Collect(code, stdout, stderr)
		return out, true, execcore.CheckExit(what, code, signal, in.AllowExitCodes, stderr.Tail())
	case errors.As(waitErr, &missing):
		// The channel closed without an exit status: usually the connection broke.
		return execcore.Collect(-1, stdout, stderr), false, fmt.Errorf("%s ended without an exit status (connection lost?)", what)
	}
	return execcore.Collect(-1, stdout, stderr), false, fmt.Errorf("%s: %w", what, waitErr)
}

// dialSSH connects to k.hostport and authenticates as k.user with signer, checking the host
// key against k.knownHosts.
func dialSSH(ctx context.Context, k poolKey, signer ssh.Signer) (*ssh.Client, error) {
	hk, err := loadHostKeys(k.knownHosts)
	if err != nil {
		return nil, err
	}
	cfg := &ssh.ClientConfig{
		User:              k.user,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback:   hk.callback,
		HostKeyAlgorithms: hk.algorithms(k.hostport),
	}
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", k.hostport)
	if err != nil {
		return nil, fmt.Errorf("ssh %s: connect: %w", k, err)
	}
	// The handshake takes no context: a deadline on the socket bounds it, and the context's
	// end closes the socket.
	deadline, _ := dctx.Deadline()
	nc.SetDeadline(deadline)
	stop := context.AfterFunc(dctx, func() { nc.Close() })
	cc, chans, reqs, err := ssh.NewClientConn(nc, k.hostport, cfg)
	if !stop() { // the context ended during the handshake and closed the socket
		if err == nil {
			cc.Close()
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ssh %s: handshake: %w", k, ctx.Err())
		}
		return nil, fmt.Errorf("ssh %s: handshake did not finish within %s", k, connectTimeout)
	}
	if err != nil {
		nc.Close()
		return nil, handshakeError(k, signer, err)
	}
	nc.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), nil
}

// handshakeError classifies a failed handshake: a refused host key (already a clear fatal
// error) or key stays fatal, as no retry changes them; anything else (a reset, a timeout) is
// left retryable.
func handshakeError(k poolKey, signer ssh.Signer, err error) error {
	if execcore.KindOf(err) == execcore.Fatal {
		var e *execcore.Error
		errors.As(err, &e)
		return execcore.AsFatal(fmt.Errorf("ssh %s: %w", k, e.Err))
	}
	// x/crypto has no error type for this; its message is stable.
	if strings.Contains(err.Error(), "unable to authenticate") {
		return execcore.Fatalf("ssh %s: the server refused key %s %s for user %s (public key authentication failed; is the public key in ~%s/.ssh/authorized_keys on the server?)",
			k, signer.PublicKey().Type(), fingerprint(signer.PublicKey()), k.user, k.user)
	}
	return fmt.Errorf("ssh %s: handshake: %w", k, err)
}
