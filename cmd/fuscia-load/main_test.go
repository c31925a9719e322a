package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseArgsDefaults(t *testing.T) {
	cfg, _, err := parseArgs(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := config{fuscia: "bin/fuscia", mode: "bench", duration: 20 * time.Second, rate: 100, concurrency: 64,
		workflows: 10, drainTimeout: 5 * time.Minute, fetchers: 16, client: "go",
		flood: floodConfig{conns: 3000, headerConns: 1500, headerKiB: 60}}
	if cfg != want {
		t.Errorf("defaults\n got  %+v\n want %+v", cfg, want)
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, c := range []struct {
		args   []string
		want   error  // errors.Is, or nil for a message
		msg    string // in the error
		stderr string // what the flag package printed
	}{
		{args: []string{"-h"}, want: flag.ErrHelp, stderr: "usage: fuscia-load"},
		{args: []string{"-bogus"}, want: errFlagParse, stderr: "flag provided but not defined: -bogus"},
		{args: []string{"-duration", "soon"}, want: errFlagParse, stderr: `invalid value "soon" for flag -duration`},
		{args: []string{"-mode", "idle", "extra", "args"}, msg: "unexpected arguments: extra args"},
		{args: []string{"-mode", "burst"}, msg: `-mode must be bench, soak, idle or slowloris, not "burst"`},
		{args: []string{"-client", "ab"}, msg: `-client must be go or wrk, not "ab"`},
		{args: []string{"-duration", "-1s"}, msg: "must be positive"},
		{args: []string{"-rate", "0"}, msg: "must be positive"},
		{args: []string{"-concurrency", "0"}, msg: "must be positive"},
		{args: []string{"-workflows", "0"}, msg: "must be positive"},
		{args: []string{"-fetchers", "0"}, msg: "must be positive"},
		{args: []string{"-drain-timeout", "0s"}, msg: "must be positive"},
	} {
		var stderr bytes.Buffer
		_, _, err := parseArgs(c.args, &stderr)
		switch {
		case err == nil:
			t.Errorf("%q: no error", c.args)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%q: %v, want %v", c.args, err, c.want)
		case c.want == nil && !strings.Contains(err.Error(), c.msg):
			t.Errorf("%q: %v, want it to say %q", c.args, err, c.msg)
		}
		if !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%q: stderr %q, want %q in it", c.args, stderr.String(), c.stderr)
		}
	}
}

// Each mode has its own default -duration; one given is kept.
func TestConfigCheckDuration(t *testing.T) {
	for _, c := range []struct {
		mode  string
		given time.Duration
		want  time.Duration
	}{
		{"bench", 0, 20 * time.Second},
		{"soak", 0, 10 * time.Minute},
		{"slowloris", 0, 30 * time.Second},
		{"idle", 0, 0},
		{"bench", 3 * time.Second, 3 * time.Second},
		{"soak", time.Hour, time.Hour},
	} {
		cfg := config{mode: c.mode, duration: c.given, rate: 1, concurrency: 1, workflows: 1, fetchers: 1,
			drainTimeout: time.Second, client: "go"}
		if err := cfg.check(nil); err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		if cfg.duration != c.want {
			t.Errorf("-mode %s -duration %s: %s, want %s", c.mode, c.given, cfg.duration, c.want)
		}
	}
}

func TestFloodConfigCheck(t *testing.T) {
	ok := floodConfig{conns: 1, headerConns: 1, headerKiB: 1}
	if err := ok.check(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
	if got := (floodConfig{conns: 3000, headerConns: 1500}).need(); got != 4756 {
		t.Errorf("need %d, want 4756", got)
	}
	for _, fc := range []floodConfig{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {-5, 1, 1}} {
		if err := fc.check(); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%+v: %v, want an error", fc, err)
		}
	}
}

// A bad command line ends the run before anything starts: exit 2, the reason and the usage
// on stderr, nothing on stdout.
func TestRunBadArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"-mode", "burst"}, exitError, []string{`fuscia-load: -mode must be bench, soak, idle or slowloris, not "burst"`, "usage: fuscia-load", "-header-kib N"}},
		{[]string{"-bogus"}, exitError, []string{"flag provided but not defined: -bogus", "usage: fuscia-load"}},
		{[]string{"-h"}, exitOK, []string{"usage: fuscia-load"}},
		{[]string{"-fuscia", filepath.Join(t.TempDir(), "nothere")}, exitError, []string{"does not exist: build it with `make build`"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != c.code {
			t.Errorf("%q: exit %d, want %d", c.args, code, c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("%q: stderr\n%s\nwant %q in it", c.args, stderr.String(), w)
			}
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: stdout %q, want nothing", c.args, stdout.String())
		}
	}
}

func TestCheckBinary(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "fuscia"), filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := checkBinary(exe); err != nil || got != exe {
		t.Errorf("checkBinary(%s) = %q, %v", exe, got, err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "nothere"): "does not exist",
		dir:                           "is a directory",
		plain:                         "is not executable",
	} {
		if _, err := checkBinary(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkBinary(%s): %v, want %q", path, err, want)
		}
	}
}

// -rate paces a bench only when given, and only wrk can pace one.
func TestParseArgsPacedBench(t *testing.T) {
	for _, c := range []struct {
		args  []string
		paced bool
	}{
		{[]string{"-client", "wrk"}, false},
		{[]string{"-client", "wrk", "-rate", "1500"}, true},
		{[]string{"-mode", "soak", "-rate", "1500"}, false},
	} {
		cfg, _, err := parseArgs(c.args, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.paced != c.paced {
			t.Errorf("%q: paced %v, want %v", c.args, cfg.paced, c.paced)
		}
	}
	_, _, err := parseArgs([]string{"-rate", "1500"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "needs -client wrk") {
		t.Errorf("-rate with the Go client in bench mode: %v, want it refused", err)
	}
}

// The bench's RSS while the load was sent leaves out the samples after the last answer (the
// drain's listing of every run).
func TestDuringLoad(t *testing.T) {
	ss := []memSample{{At: 0, VmRSS: 10}, {At: time.Second, VmRSS: 30}, {At: 2 * time.Second, VmRSS: 90}}
	if got := maxMem(duringLoad(ss, 1500*time.Millisecond)).VmRSS; got != 30 {
		t.Errorf("max VmRSS during the load = %d, want 30 (not the 90 after it)", got)
	}
	if got := len(duringLoad(ss, time.Hour)); got != 3 {
		t.Errorf("%d samples before the end, want all 3", got)
	}
}
