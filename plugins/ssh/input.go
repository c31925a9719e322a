package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// defaultPort is SSH's port, used when the input gives none.
const defaultPort = 22

// defaultKnownHosts is used when neither the input nor the plugin block names a known_hosts file.
const defaultKnownHosts = "~/.ssh/known_hosts"

// Input is the exec task's input.
type Input struct {
	Host           string            `json:"host" jsonschema_description:"Host name or IP address of the SSH server (no user@, no port, no brackets)."`
	Port           int               `json:"port,omitempty" jsonschema:"minimum=0,maximum=65535" jsonschema_description:"TCP port; default 22."`
	User           string            `json:"user,omitempty" jsonschema_description:"Remote user; default: the plugin block's user. One of the two is required."`
	PrivateKey     string            `json:"private_key,omitempty" jsonschema:"writeOnly=true" jsonschema_description:"Unencrypted private key in PEM/OpenSSH format. Sensitive: pass it from a secret. Exclusive with private_key_file."`
	PrivateKeyFile string            `json:"private_key_file,omitempty" jsonschema_description:"Path of an unencrypted private key file; default: the plugin block's private_key_file."`
	KnownHostsFile string            `json:"known_hosts_file,omitempty" jsonschema_description:"known_hosts file the server's host key must be in; default: the plugin block's, else ~/.ssh/known_hosts."`
	Command        Command           `json:"command" jsonschema_description:"The program and its arguments as a list, each passed as it is (quoted for the remote shell), e.g. [\"systemctl\", \"restart\", \"app\"]; or a program name alone; or, with shell = true, a command line the remote shell interprets."`
	Args           []string          `json:"args,omitempty" jsonschema_description:"More arguments after command's, each passed as it is (quoted for the remote shell). Not with shell = true."`
	Shell          bool              `json:"shell,omitempty" jsonschema_description:"Send command, a string, to the remote user's shell as a command line it interprets (quoting, variables, globs, ;, |), as ssh host 'line' does. Quote any value spliced in."`
	Stdin          string            `json:"stdin,omitempty" jsonschema_description:"Sent to the command's standard input, which is then closed."`
	Env            map[string]string `json:"env,omitempty" jsonschema_description:"Variables sent with the SSH env request; servers accept only the names sshd_config's AcceptEnv lists, and a refusal fails the task."`
	Timeout        string            `json:"timeout,omitempty" jsonschema_description:"Go duration bounding the command (not the connection); the attempt's deadline also applies."`
	AllowExitCodes []int             `json:"allow_exit_codes,omitempty" jsonschema_description:"Non-zero exit codes that count as success."`
}

// Config is the plugin block's config: defaults for every exec task that uses the block.
type Config struct {
	User           string `json:"user,omitempty"`
	PrivateKeyFile string `json:"private_key_file,omitempty"`
	KnownHostsFile string `json:"known_hosts_file,omitempty"`
}

// configSchema is Config's JSON Schema, declared so that it can carry descriptions and refuse
// unknown keys.
const configSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "user": {"type": "string", "description": "Default remote user."},
    "private_key_file": {"type": "string", "description": "Default private key file (unencrypted)."},
    "known_hosts_file": {"type": "string", "description": "Default known_hosts file (default ~/.ssh/known_hosts)."}
  }
}`

// checkInput returns what is wrong with in on its own (without the plugin block's defaults,
// which plan-time validation does not see). known tells which values are known.
func checkInput(in Input, known execcore.Known) []execcore.Problem {
	var ps []execcore.Problem
	if known("/host") {
		if p, bad := checkHost(in.Host); bad {
			ps = append(ps, p)
		}
	}
	if known("/port") && (in.Port < 0 || in.Port > 65535) {
		ps = append(ps, execcore.Problem{Path: "/port", Summary: "port is out of range",
			Detail: fmt.Sprintf("%d: a TCP port is 1 to 65535 (0 or absent means 22)", in.Port)})
	}
	if known("/user") && strings.ContainsAny(in.User, "@:\x00 \t\n") {
		ps = append(ps, execcore.Problem{Path: "/user", Summary: "user is not a user name",
			Detail: fmt.Sprintf("%q", in.User)})
	}
	if known("/private_key") && known("/private_key_file") && in.PrivateKey != "" && in.PrivateKeyFile != "" {
		ps = append(ps, execcore.Problem{Path: "/private_key", Summary: "private_key and private_key_file are both set",
			Detail: "give the key one way only"})
	} else if known("/private_key") && in.PrivateKey != "" {
		if _, err := parseKey([]byte(in.PrivateKey), "private_key"); err != nil {
			// parseKey's errors never quote the key.
			ps = append(ps, execcore.Problem{Path: "/private_key", Summary: "private_key is not a usable private key", Detail: err.Error()})
		}
	}
	ps = append(ps, checkCommand(in, known)...)
	return append(ps, execcore.CheckCommon(in.Timeout, in.Env, in.AllowExitCodes, known)...)
}

func checkHost(host string) (execcore.Problem, bool) {
	p := execcore.Problem{Path: "/host"}
	switch {
	case host == "":
		p.Summary, p.Detail = "host is required", "the SSH server's name or address"
	case strings.Contains(host, "@"):
		p.Summary, p.Detail = "host must not contain a user", fmt.Sprintf("%q: put the user in user", host)
	case strings.HasPrefix(host, "["):
		p.Summary, p.Detail = "host must not be bracketed", fmt.Sprintf("%q: write an IPv6 address bare and the port in port", host)
	case strings.ContainsAny(host, "/ \t\n\x00") || (strings.Count(host, ":") == 1):
		p.Summary, p.Detail = "host is not a host name or address", fmt.Sprintf("%q (the port goes in port)", host)
	default:
		return p, false
	}
	return p, true
}

// target is where and how to connect, with the plugin block's defaults applied.
type target struct {
	user, host string
	port       int
	keyFile    string // "" when the key was given inline
	keyPEM     []byte // the key as given (inline or read from keyFile); sensitive
	knownHosts string // expanded path
}

// resolve applies the plugin block's defaults and reads the key file. Its errors name paths
// and fields, never the key.
func resolve(in Input, cfg Config) (target, error) {
	t := target{user: in.User, host: in.Host, port: in.Port, knownHosts: in.KnownHostsFile}
	if t.user == "" {
		t.user = cfg.User
	}
	if t.user == "" {
		return t, execcore.Invalidf("/user", "user is required: set it in the task's input or in the plugin block's config")
	}
	if t.port == 0 {
		t.port = defaultPort
	}
	if t.knownHosts == "" {
		t.knownHosts = cfg.KnownHostsFile
	}
	if t.knownHosts == "" {
		t.knownHosts = defaultKnownHosts
	}
	var err error
	if t.knownHosts, err = expandHome(t.knownHosts); err != nil {
		return t, execcore.Fatalf("known_hosts_file: %w", err)
	}
	switch {
	case in.PrivateKey != "":
		t.keyPEM = []byte(in.PrivateKey)
	default:
		t.keyFile = in.PrivateKeyFile
		if t.keyFile == "" {
			t.keyFile = cfg.PrivateKeyFile
		}
		if t.keyFile == "" {
			return t, execcore.Invalidf("/private_key", "a key is required: set private_key or private_key_file in the input, or private_key_file in the plugin block's config")
		}
		if t.keyFile, err = expandHome(t.keyFile); err != nil {
			return t, execcore.Fatalf("private_key_file: %w", err)
		}
		if t.keyPEM, err = os.ReadFile(t.keyFile); err != nil {
			return t, execcore.Fatalf("private_key_file: cannot read the key: %w", err)
		}
	}
	return t, nil
}

// expandHome expands a leading "~/" to the plugin process's home directory, as ssh does.
func expandHome(path string) (string, error) {
	rest, ok := strings.CutPrefix(path, "~/")
	if !ok && path != "~" {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand %s: %w", path, err)
	}
	return filepath.Join(home, rest), nil
}
