package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"golang.org/x/sys/unix"
)

// testServer is a real SSH server on 127.0.0.1, built from x/crypto/ssh: public-key auth for
// one key, "exec" requests run locally with /bin/sh -c, "env" and "signal" requests honoured.
type testServer struct {
	t          *testing.T
	hostport   string
	hostSigner ssh.Signer
	accepted   atomic.Int64 // TCP connections accepted
	running    atomic.Int64 // commands started and not yet exited
	refuseEnv  bool         // answer "env" requests with failure, like a strict AcceptEnv
	// oneSessionPerConn rejects a second session on a connection, so that a reused
	// connection looks broken to the client.
	oneSessionPerConn bool

	ln    net.Listener
	wg    sync.WaitGroup // the accept loop and every connection's goroutines
	mu    sync.Mutex
	conns map[*ssh.ServerConn]bool // guarded by mu: live connections, for dropAll and close
}

// newTestServer starts a server that accepts only the public key authorized, with an ed25519
// host key (hostSigner) and the extra host keys given. It stops when the test ends, killing any
// command still running.
func newTestServer(t *testing.T, authorized ssh.PublicKey, extraHostKeys ...ssh.Signer) *testServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, hostport: ln.Addr().String(), hostSigner: hostSigner, ln: ln, conns: map[*ssh.ServerConn]bool{}}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if string(key.Marshal()) == string(authorized.Marshal()) {
				return nil, nil
			}
			return nil, errNotAuthorized
		},
	}
	cfg.AddHostKey(hostSigner)
	for _, k := range extraHostKeys {
		cfg.AddHostKey(k)
	}
	s.wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return // closed by stop
			}
			s.accepted.Add(1)
			s.wg.Go(func() { s.serveConn(nc, cfg) })
		}
	})
	t.Cleanup(s.stop)
	return s
}

type authError string

func (e authError) Error() string { return string(e) }

const errNotAuthorized = authError("key not authorized")

func (s *testServer) port() int {
	_, p, _ := net.SplitHostPort(s.hostport)
	n, _ := strconv.Atoi(p)
	return n
}

func (s *testServer) stop() {
	s.ln.Close()
	s.dropAll()
	s.wg.Wait()
}

// dropAll closes every connection, as a server restart would.
func (s *testServer) dropAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

func (s *testServer) serveConn(nc net.Conn, cfg *ssh.ServerConfig) {
	sc, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		nc.Close()
		return
	}
	s.mu.Lock()
	s.conns[sc] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, sc)
		s.mu.Unlock()
		sc.Close()
	}()
	s.wg.Go(func() { ssh.DiscardRequests(reqs) })
	sessions := 0
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		sessions++
		if s.oneSessionPerConn && sessions > 1 {
			nch.Reject(ssh.Prohibited, "one session per connection")
			continue
		}
		ch, chReqs, err := nch.Accept()
		if err != nil {
			continue
		}
		s.wg.Go(func() { s.serveSession(ch, chReqs) })
	}
}

// serveSession handles one session's requests. The command runs in its own process group,
// killed on a "signal" request or when the channel goes away.
func (s *testServer) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var env []string
	var cmd *exec.Cmd
	exited := make(chan struct{}) // closed once the command has exited and its status is sent
	waitExit := exited            // set to nil once seen, so the select stops picking it
	killGroup := func() {
		if cmd != nil && cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	for {
		var req *ssh.Request
		select {
		case r, ok := <-reqs:
			if !ok {
				killGroup()
				if cmd != nil {
					<-exited
				}
				return
			}
			req = r
		case <-waitExit:
			waitExit = nil // the exit status is sent; serve requests until the client closes
			continue
		}
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if s.refuseEnv || ssh.Unmarshal(req.Payload, &kv) != nil {
				req.Reply(false, nil)
				continue
			}
			env = append(env, kv.Name+"="+kv.Value)
			req.Reply(true, nil)
		case "exec":
			var p struct{ Command string }
			if cmd != nil || ssh.Unmarshal(req.Payload, &p) != nil {
				req.Reply(false, nil)
				continue
			}
			cmd = exec.Command("/bin/sh", "-c", p.Command)
			cmd.Env = append(os.Environ(), env...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.WaitDelay = time.Second
			if err := cmd.Start(); err != nil {
				req.Reply(false, nil)
				cmd = nil
				continue
			}
			req.Reply(true, nil)
			s.running.Add(1)
			done := exited
			s.wg.Go(func() {
				cmd.Wait()
				s.running.Add(-1)
				status := make([]byte, 4)
				binary.BigEndian.PutUint32(status, uint32(max(cmd.ProcessState.ExitCode(), 0)))
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					sig := struct {
						Signal     string
						CoreDumped bool
						Error      string
						Lang       string
					}{Signal: strings.TrimPrefix(unix.SignalName(ws.Signal()), "SIG")}
					ch.SendRequest("exit-signal", false, ssh.Marshal(sig))
				} else {
					ch.SendRequest("exit-status", false, status)
				}
				ch.CloseWrite()
				ch.Close()
				close(done)
			})
		case "signal":
			killGroup()
			req.Reply(true, nil)
		default:
			req.Reply(false, nil)
		}
	}
}

// testKey is a client key pair, with its PEM written to a file.
type testKey struct {
	signer ssh.Signer
	pem    string
	file   string
}

func newTestKey(t *testing.T) testKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test key")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k := testKey{signer: signer, pem: string(pem.EncodeToMemory(block)), file: filepath.Join(t.TempDir(), "id_ed25519")}
	if err := os.WriteFile(k.file, []byte(k.pem), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// writeKnownHosts writes a known_hosts file with one line per host and key.
func writeKnownHosts(t *testing.T, entries map[string]ssh.PublicKey) string {
	t.Helper()
	var b []byte
	for hostport, key := range entries {
		b = append(b, knownhosts.Line([]string{knownhosts.Normalize(hostport)}, key)+"\n"...)
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
