package plugin_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// procUsage is what /proc says a process (all its threads) has used so far: CPU time in ns
// (schedstat), the times one of its threads blocked (voluntary context switches; the
// preemptions a busy machine adds are left out), and the CPU of the children it has reaped in
// clock ticks. Benchmarks report these per call next to wall time, which on a shared
// machine moves with the load while they mostly do not.
type procUsage struct {
	cpuNs, switches, childTicks int64
}

// childPlugin finds the pid of this process's child whose command name starts with prefix
// (a plugin the Manager started), or fails the benchmark.
func childPlugin(b *testing.B, prefix string) int {
	b.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(data)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(s[close+1:]) // state, ppid, ...
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) && strings.HasPrefix(s[open+1:close], prefix) {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			return pid
		}
	}
	b.Fatalf("no child process named %s*", prefix)
	return 0
}

func readUsage(b *testing.B, pid int) procUsage {
	b.Helper()
	var u procUsage
	dir := "/proc/" + strconv.Itoa(pid)
	tasks, _ := filepath.Glob(dir + "/task/*")
	for _, t := range tasks {
		if data, err := os.ReadFile(t + "/schedstat"); err == nil {
			if f := strings.Fields(string(data)); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				u.cpuNs += n
			}
		}
		if data, err := os.ReadFile(t + "/status"); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && k == "voluntary_ctxt_switches" {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					u.switches += n
				}
			}
		}
	}
	data, err := os.ReadFile(dir + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// After the command name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
	cu, _ := strconv.ParseInt(f[13], 10, 64)
	cs, _ := strconv.ParseInt(f[14], 10, 64)
	u.childTicks = cu + cs
	return u
}
