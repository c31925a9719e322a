package main

import (
	"strings"
	"testing"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

func TestCheckInput(t *testing.T) {
	ok := Input{Host: "db.example", Command: Command{Line: "uptime"}}
	tests := []struct {
		name   string
		mutate func(*Input)
		want   string // problem paths, comma-separated
	}{
		{"ok", func(*Input) {}, ""},
		{"ipv6", func(in *Input) { in.Host = "::1" }, ""},
		{"no host", func(in *Input) { in.Host = "" }, "/host"},
		{"user in host", func(in *Input) { in.Host = "root@db" }, "/host"},
		{"port in host", func(in *Input) { in.Host = "db:2222" }, "/host"},
		{"bracketed", func(in *Input) { in.Host = "[::1]" }, "/host"},
		{"port", func(in *Input) { in.Port = 70000 }, "/port"},
		{"no command", func(in *Input) { in.Command = Command{Line: "  "} }, "/command"},
		{"both keys", func(in *Input) { in.PrivateKey, in.PrivateKeyFile = "x", "/k" }, "/private_key"},
		{"bad key", func(in *Input) {
			in.PrivateKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
		}, "/private_key"},
		{"timeout", func(in *Input) { in.Timeout = "forever" }, "/timeout"},
		{"exit code", func(in *Input) { in.AllowExitCodes = []int{-1} }, "/allow_exit_codes/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ok
			tt.mutate(&in)
			var paths []string
			for _, p := range checkInput(in, execcore.AllKnown) {
				paths = append(paths, p.Path)
			}
			if got := strings.Join(paths, ","); got != tt.want {
				t.Errorf("paths = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckInputSkipsUnknowns(t *testing.T) {
	known := func(p string) bool { return p != "/host" && p != "/command" }
	if ps := checkInput(Input{}, known); len(ps) != 0 {
		t.Errorf("problems about unknown values: %v", ps)
	}
}

func TestBadKeyErrorDoesNotQuoteTheKey(t *testing.T) {
	secret := "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0IHNlY3JldCBzZWNyZXQ=\n-----END OPENSSH PRIVATE KEY-----\n"
	for _, p := range checkInput(Input{Host: "h", Command: Command{Line: "c"}, PrivateKey: secret}, execcore.AllKnown) {
		if strings.Contains(p.Error(), "c2VjcmV0") {
			t.Errorf("problem quotes the key: %s", p.Error())
		}
	}
}

func TestExpandHome(t *testing.T) {
	t.Setenv("HOME", "/home/op")
	for in, want := range map[string]string{"~/.ssh/known_hosts": "/home/op/.ssh/known_hosts", "/etc/ssh/k": "/etc/ssh/k", "~op/x": "~op/x"} {
		if got, err := expandHome(in); err != nil || got != want {
			t.Errorf("expandHome(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
