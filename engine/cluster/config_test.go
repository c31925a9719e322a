package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/fuscia/fuscia/internal/natstest"
)

// TestConfigPrefix checks the prefixes Check takes and refuses (its pattern is compiled on
// first use, not at start-up).
func TestConfigPrefix(t *testing.T) {
	for prefix, ok := range map[string]bool{
		"fuscia":                 true,
		"a":                      true,
		"0team_a-b":              true,
		strings.Repeat("a", 64):  true,
		strings.Repeat("a", 65):  false,
		"-team":                  false,
		"_team":                  false,
		"Team":                   false,
		"team.a":                 false,
		"team a":                 false,
		"team\n":                 false,
		"tëam":                   false,
		"team>":                  false,
		"team*":                  false,
		"fuscia_ok-1" + "\x00":   false,
		"ok_" + "0123456789abcd": true,
	} {
		c := Config{URLs: "nats://127.0.0.1:4222", Prefix: prefix, Key: newKey(t)}
		err := c.Check()
		if ok && err != nil {
			t.Errorf("prefix %q refused: %v", prefix, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "-nats-prefix")) {
			t.Errorf("prefix %q: got %v, want an error about -nats-prefix", prefix, err)
		}
	}
}

// TestToken checks that a subject token is the string itself when it may be one, else a
// digest of it that may.
func TestToken(t *testing.T) {
	for s, same := range map[string]bool{
		"01M8BA1QB6ZN85A97EF7NY1AZH": true,
		"task_a-1":                   true,
		strings.Repeat("x", 64):      true,
		strings.Repeat("x", 65):      false,
		"":                           false,
		"task.a":                     false,
		"a b":                        false,
		"a>":                         false,
		"a*":                         false,
	} {
		got := token(s)
		if same && got != s {
			t.Errorf("token(%q) = %q, want it unchanged", s, got)
		}
		if !same && (got == s || len(got) != 25 || got[0] != 'h' || strings.ContainsAny(got, ".*> ")) {
			t.Errorf("token(%q) = %q, want h and 24 hex digits", s, got)
		}
	}
}

// TestCredsAndCAChecked: a -nats-creds or -nats-tls-ca file that cannot be used is refused
// before any connection, naming the flag and the file, instead of reading like a server that
// is down.
func TestCredsAndCAChecked(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not credentials\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	creds := filepath.Join(dir, "user.creds")
	text := "-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln\n------END NATS USER JWT------\n\n" +
		"-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"
	if err := os.WriteFile(creds, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Config{URLs: "nats://127.0.0.1:4222", Key: newKey(t), Creds: creds}
	if err := ok.Check(); err != nil {
		t.Errorf("a credentials file of the form nsc writes was refused: %v", err)
	}
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{Config{Creds: missing}, []string{"-nats-creds", missing}},
		{Config{Creds: garbage}, []string{"-nats-creds", garbage, "not a NATS credentials file"}},
		{Config{TLSCA: missing}, []string{"-nats-tls-ca", missing}},
		{Config{TLSCA: garbage}, []string{"-nats-tls-ca", garbage, "no PEM certificate"}},
	} {
		c.cfg.URLs, c.cfg.Key = "nats://127.0.0.1:4222", newKey(t)
		err := c.cfg.Check()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Check with %+v: %v; want an error with %q", c.want, err, w)
			}
		}
	}
}

// TestConnectRefusedCredentials: a server that refuses the credentials is said to, not to be
// unreachable.
func TestConnectRefusedCredentials(t *testing.T) {
	srv := natstest.StartWith(t, func(o *server.Options) { o.Username, o.Password = "fuscia", "right" })
	u := strings.Replace(srv.URL(), "nats://", "nats://fuscia:wrong@", 1)
	_, err := Connect(testCtx(t), Config{URLs: u, Key: newKey(t)}, "test", nil)
	if err == nil || !strings.Contains(err.Error(), "refused this process's credentials") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("Connect with a wrong password: %v; want it to say the credentials were refused, without the password", err)
	}
}
