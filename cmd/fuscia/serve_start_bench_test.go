package main

// BenchmarkServeStartGoComponent: how long `fuscia serve` takes, from its start to the line that
// says it serves, with a workflow whose webhook trigger is a Go SDK component (fuscia/ticker)
// and a cold cache: serve compiles the component (in its compile child) before it serves
// (docs/performance.md, "Go guests: pre-initialization (item 5)"). FUSCIA_BENCH_BIN, when set,
// names another fuscia binary to measure instead of the one TestMain built, so that two builds
// can be compared run for run. `make bench` runs it.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/hostabi/guesttest"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

func BenchmarkServeStartGoComponent(b *testing.B) {
	bin := fusciaBin
	if env := os.Getenv("FUSCIA_BENCH_BIN"); env != "" {
		bin = env
	}
	dir, home := b.TempDir(), b.TempDir()
	run := func(args ...string) {
		b.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(baseEnv(), "FUSCIA_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("fuscia %v: %v\n%s", args, err, out)
		}
	}
	run("component", "pack", guesttest.Dir(b, "ticker"), "-o", "ticker.fcpkg")
	run("component", "install", "ticker.fcpkg")
	writeBenchFile(b, filepath.Join(dir, "tickhook.fsc.hcl"), tickerHookWorkflow)

	var took []time.Duration
	for range b.N {
		// A cold cache: every compiled module and snapshot is gone.
		if err := os.RemoveAll(filepath.Join(home, "cache")); err != nil {
			b.Fatal(err)
		}
		took = append(took, serveUntilServing(b, bin, dir, home, "tickhook.fsc.hcl"))
	}
	b.ReportMetric(float64(median(took).Milliseconds()), "ms-to-serving-median")
	b.ReportMetric(float64(took[0].Milliseconds()), "ms-to-serving-min")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "ms-to-serving-max")
}

// BenchmarkServeStartFiles: how long `fuscia serve` takes to serve a directory of 200 webhook
// workflows, each checked in the check child before it is loaded (check_child.go): one child
// checked them all, not one a file (docs/performance.md, "Session 32"). FUSCIA_BENCH_BIN as
// above.
func BenchmarkServeStartFiles(b *testing.B) {
	bin := fusciaBin
	if env := os.Getenv("FUSCIA_BENCH_BIN"); env != "" {
		bin = env
	}
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "flows"), 0o755); err != nil {
		b.Fatal(err)
	}
	const files = 200
	for i := range files {
		writeBenchFile(b, filepath.Join(dir, "flows", fmt.Sprintf("w%03d.fsc.hcl", i)), fmt.Sprintf(
			"workflow \"w%d\" {}\n\ntrigger \"webhook\" \"h\" {\n  path = \"/h%d\"\n}\n\ntask \"t\" {\n  uses   = builtin.transform\n  inputs = { x = \"${trigger.payload.a}-%d\" }\n}\n", i, i, i))
	}
	var took []time.Duration
	for range b.N {
		home := b.TempDir() // a new store each time: what is measured is the files' load
		took = append(took, serveUntilServing(b, bin, dir, home, "flows"))
	}
	b.ReportMetric(float64(median(took).Milliseconds()), "ms-to-serving-median") // sorts took
	b.ReportMetric(float64(took[0].Milliseconds()), "ms-to-serving-min")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "ms-to-serving-max")
}

// serveUntilServing starts serve, returns how long it took to print that it serves, and stops
// it (SIGTERM, then reaped).
func serveUntilServing(b *testing.B, bin, dir, home, path string) time.Duration {
	b.Helper()
	cmd := exec.Command(bin, "serve", path, "-home", home, "-listen", "127.0.0.1:0", "-shutdown-grace", "2s")
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+home)
	stdout := &syncbuf.Buffer{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var took time.Duration
	deadline := time.After(2 * time.Minute)
wait:
	for {
		if servingLineRE.MatchString(stdout.String()) {
			took = time.Since(start)
			break
		}
		select {
		case err := <-exited:
			b.Fatalf("fuscia serve exited before serving: %v\n%s%s", err, stdout.String(), stderr.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			b.Fatalf("fuscia serve did not serve within 2 minutes:\n%s%s", stdout.String(), stderr.String())
		case <-time.After(5 * time.Millisecond):
			continue wait
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	return took
}
