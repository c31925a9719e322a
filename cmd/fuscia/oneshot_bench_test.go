package main

// Benchmarks of what one-shot commands cost through the real binary (docs/performance.md,
// "Start-up and one-shot apply"): `fuscia version`, `fuscia apply` of a 3-node workflow with a
// fresh and with a reused FUSCIA_HOME, and what one more node of a chain of builtin.transform
// costs `fuscia apply` ((chain of 100 - chain of 10) / 90), to set beside the engine's own
// figure (engine's BenchmarkChain1000), and the same for a chain of shell nodes against a bare
// spawn loop. `make bench` runs them; they are benchmarks only, so `make test` never starts them.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// transformChain is a workflow of n builtin.transform tasks, each reading the one before.
func transformChain(n int, durability string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow \"chain\" {\n  durability = %q\n}\n", durability)
	b.WriteString("task \"t0\" {\n  uses   = builtin.transform\n  inputs = { n = 0 }\n}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses   = builtin.transform\n  inputs = { n = task.t%d.output.n + 1 }\n}\n", i, i-1)
	}
	fmt.Fprintf(&b, "output \"n\" { value = task.t%d.output.n }\n", n-1)
	return b.String()
}

// execTimes is what one run of the binary took: wall time, and the CPU time of the process
// (user and system), which a busy machine inflates less than the wall time.
type execTimes struct{ wall, cpu time.Duration }

// runBinary runs fuscia with args in dir with FUSCIA_HOME=home, its output read through pipes
// as a script's would be, and fails b unless it exits 0.
func runBinary(b *testing.B, dir, home string, args ...string) execTimes {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("fuscia %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return execTimes{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

// median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// reportExecs reports the median wall and CPU times of runs, in milliseconds.
func reportExecs(b *testing.B, runs []execTimes) {
	var wall, cpu []time.Duration
	for _, r := range runs {
		wall, cpu = append(wall, r.wall), append(cpu, r.cpu)
	}
	b.ReportMetric(float64(median(wall).Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(median(cpu).Microseconds())/1000, "cpu-ms-median")
	b.ReportMetric(float64(wall[0].Microseconds())/1000, "ms-min")
}

func writeBenchFile(b *testing.B, path, content string) {
	b.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStartup is `fuscia version`; `fuscia apply` of a chain of 3 builtin.transform
// (strict), each home's first apply creating the state store (fresh) or all of them using the
// same one (reused); and `fuscia apply` of one shell node running /bin/true with a reused home,
// which adds what a one-shot apply pays for a plugin: its binary's digest (read at the plan and
// at the start), its start and handshake, its schema and config.
func BenchmarkStartup(b *testing.B) {
	b.Run("version", func(b *testing.B) {
		dir := b.TempDir()
		runBinary(b, dir, dir, "version")
		runs := make([]execTimes, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			runs = append(runs, runBinary(b, dir, dir, "version"))
		}
		b.StopTimer()
		reportExecs(b, runs)
	})
	for _, fresh := range []bool{true, false} {
		name := "apply3-reused-home"
		if fresh {
			name = "apply3-fresh-home"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			writeBenchFile(b, filepath.Join(dir, "three.fsc.hcl"), transformChain(3, "strict"))
			home := filepath.Join(dir, "home")
			runBinary(b, dir, home, "apply", "three.fsc.hcl")
			runs := make([]execTimes, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if fresh {
					b.StopTimer()
					home = filepath.Join(dir, fmt.Sprintf("home%d", i))
					b.StartTimer()
				}
				runs = append(runs, runBinary(b, dir, home, "apply", "three.fsc.hcl"))
			}
			b.StopTimer()
			reportExecs(b, runs)
		})
	}
	b.Run("apply-shell1", func(b *testing.B) {
		dir := b.TempDir()
		home := filepath.Join(dir, "home")
		plugintest.Install(b, plugintest.Build(b, "plugins/shell", "shell"), filepath.Join(home, "plugins"), "fuscia-plugin-shell")
		writeBenchFile(b, filepath.Join(dir, "one.fsc.hcl"), `workflow "one" {}
plugin "shell" { source = "shell" }
task "t" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/true", args = [] }
}
`)
		runBinary(b, dir, home, "apply", "one.fsc.hcl")
		// A binary changed in the last 2 s has its digest read again at the start (the digest
		// cache's guard, plugin/discover): let the copy age as an installed plugin has.
		time.Sleep(2 * time.Second)
		runs := make([]execTimes, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			runs = append(runs, runBinary(b, dir, home, "apply", "one.fsc.hcl"))
		}
		b.StopTimer()
		reportExecs(b, runs)
	})
}

// BenchmarkApplyPerNode is what one more node of a chain of builtin.transform costs `fuscia
// apply`: (median of the chain of 100 - median of the chain of 10) / 90, runs of the two
// alternating, each chain in a home of its own that its runs reuse (an apply's store opening
// includes writing what the previous run left in memory to a table: it must be the same
// chain's), with the text output and with -json, relaxed and strict.
// Each iteration is one run of each chain. The in-process case runs apply's code (the cli's
// main) in the benchmark's process, without the process start, for -cpuprofile.
func BenchmarkApplyPerNode(b *testing.B) {
	for _, durability := range []string{"relaxed", "strict"} {
		for _, output := range []string{"text", "json", "inprocess"} {
			b.Run(durability+"/"+output, func(b *testing.B) {
				dir := b.TempDir()
				writeBenchFile(b, filepath.Join(dir, "c10.fsc.hcl"), transformChain(10, durability))
				writeBenchFile(b, filepath.Join(dir, "c100.fsc.hcl"), transformChain(100, durability))
				run := func(file string) time.Duration {
					home := filepath.Join(dir, "home-"+strings.TrimSuffix(file, ".fsc.hcl"))
					if output == "inprocess" {
						return applyInProcess(b, home, filepath.Join(dir, file))
					}
					args := []string{"apply", file}
					if output == "json" {
						args = append(args, "-json")
					}
					return runBinary(b, dir, home, args...).wall
				}
				run("c10.fsc.hcl")
				run("c100.fsc.hcl")
				var t10, t100 []time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t10 = append(t10, run("c10.fsc.hcl"))
					t100 = append(t100, run("c100.fsc.hcl"))
				}
				b.StopTimer()
				m10, m100 := median(t10), median(t100)
				b.ReportMetric(float64(m10.Microseconds())/1000, "ms-chain10")
				b.ReportMetric(float64(m100.Microseconds())/1000, "ms-chain100")
				b.ReportMetric(float64((m100-m10).Microseconds())/90, "µs/node")
			})
		}
	}
}

// BenchmarkApplyShellPerNode is item 2 of issue 20 as the issue measures it: what one more
// plugin.shell.exec node running /bin/true costs a one-shot `fuscia apply` of a sequential
// chain ((median of the chain of 100 - median of the chain of 10) / 90, each chain in a home of
// its own), against a bare Go loop spawning /bin/true 100 times one after another (spawn-µs, the
// median of the loops' per-spawn times), and the ratio of the two. Each iteration runs both
// chains and one loop between them, so that a drift of the machine's speed moves both sides.
func BenchmarkApplyShellPerNode(b *testing.B) {
	bin := plugintest.Build(b, "plugins/shell", "shell")
	for _, durability := range []string{"relaxed", "strict"} {
		b.Run(durability, func(b *testing.B) {
			dir := b.TempDir()
			writeBenchFile(b, filepath.Join(dir, "c10.fsc.hcl"), plugintest.ShellChain(10, durability))
			writeBenchFile(b, filepath.Join(dir, "c100.fsc.hcl"), plugintest.ShellChain(100, durability))
			home := func(file string) string { return filepath.Join(dir, "home-"+strings.TrimSuffix(file, ".fsc.hcl")) }
			for _, file := range []string{"c10.fsc.hcl", "c100.fsc.hcl"} {
				plugintest.Install(b, bin, filepath.Join(home(file), "plugins"), "fuscia-plugin-shell")
				runBinary(b, dir, home(file), "apply", file)
			}
			// A binary changed in the last 2 s has its digest read again at the start (the
			// digest cache's guard, plugin/discover): let the copies age as installed plugins.
			time.Sleep(2 * time.Second)
			var t10, t100, spawn []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t10 = append(t10, runBinary(b, dir, home("c10.fsc.hcl"), "apply", "c10.fsc.hcl").wall)
				spawn = append(spawn, plugintest.SpawnTrueSeq(b, 100))
				t100 = append(t100, runBinary(b, dir, home("c100.fsc.hcl"), "apply", "c100.fsc.hcl").wall)
			}
			b.StopTimer()
			perNode := (median(t100) - median(t10)) / 90
			b.ReportMetric(float64(perNode.Microseconds()), "µs/node")
			b.ReportMetric(float64(median(spawn).Microseconds()), "spawn-µs")
			b.ReportMetric(float64(perNode)/float64(median(spawn)), "ratio")
		})
	}
}

// applyInProcess runs `fuscia apply file` through the cli's main in this process.
func applyInProcess(b *testing.B, home, file string) time.Duration {
	b.Helper()
	env := map[string]string{"FUSCIA_HOME": home}
	var stderr bytes.Buffer
	c := &cli{stdout: io.Discard, stderr: &stderr, getenv: func(k string) string { return env[k] },
		environ: func() []string { return nil }, secrets: redact.NewSet()}
	start := time.Now()
	if code := c.main(context.Background(), []string{"apply", file}); code != exitOK {
		b.Fatalf("apply %s: exit code %d\n%s", file, code, stderr.String())
	}
	return time.Since(start)
}
