package main

import (
	"os"
	"strings"
	"testing"
)

// The parts of a Linux /proc/PID/status that parseStatus reads, and some it skips.
const procStatus = `Name:	fuscia
Umask:	0022
State:	S (sleeping)
VmPeak:	 2043512 kB
VmHWM:	   59392 kB
VmRSS:	   56116 kB
RssAnon:	   23448 kB
RssFile:	   32668 kB
RssShmem:	       0 kB
Threads:	9
SigQ:	0/95671
`

func TestParseStatus(t *testing.T) {
	got := parseStatus([]byte(procStatus))
	want := memSample{VmRSS: 56116 << 10, RssAnon: 23448 << 10, RssFile: 32668 << 10, VmHWM: 59392 << 10, Threads: 9}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got := parseStatus([]byte("VmRSS:\nThreads: many\nnonsense\n")); got != (memSample{}) {
		t.Errorf("unreadable lines: %+v, want zeros", got)
	}
	// This process's own status has the figures.
	m, err := readStatus(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if m.VmRSS <= 0 || m.Threads <= 0 || m.VmHWM < m.VmRSS {
		t.Errorf("this process: %+v", m)
	}
}

func TestMaxMem(t *testing.T) {
	got := maxMem([]memSample{{At: 1, VmRSS: 5, RssAnon: 1, Threads: 9}, {At: 2, VmRSS: 3, RssAnon: 4, RssFile: 2, VmHWM: 6}})
	if want := (memSample{VmRSS: 5, RssAnon: 4, RssFile: 2, VmHWM: 6, Threads: 9}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

const metricsText = `# HELP fuscia_runs_total Runs finished, by workflow and outcome.
# TYPE fuscia_runs_total counter
fuscia_runs_total{outcome="succeeded",workflow="hook"} 1948
fuscia_runs_total{outcome="failed",workflow="hook"} 2
fuscia_runs_total{outcome="succeeded",workflow="other"} 5
go_goroutines 31
process_resident_memory_bytes 5.9453440e+07
http_requests_total{code="202"} 10
http_requests_total{code="404"} 3
broken_line_without_value
half{a="b"} notanumber
`

func TestParseMetrics(t *testing.T) {
	vals, hook, err := parseMetrics(strings.NewReader(metricsText))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"fuscia_runs_total": 1955, "go_goroutines": 31, "process_resident_memory_bytes": 59453440, "http_requests_total": 13,
	} {
		if vals[name] != want {
			t.Errorf("%s = %v, want %v", name, vals[name], want)
		}
	}
	if len(vals) != 4 {
		t.Errorf("series %v, want the four names", vals)
	}
	if len(hook) != 2 || hook["succeeded"] != 1948 || hook["failed"] != 2 {
		t.Errorf("hook by outcome %v, want succeeded 1948, failed 2", hook)
	}
	if got := sumValues(hook); got != 1950 {
		t.Errorf("sum %v", got)
	}
}

func TestLabelValue(t *testing.T) {
	for _, c := range []struct{ labels, name, want string }{
		{`outcome="ok",workflow="hook"}`, "workflow", "hook"},
		{`outcome="ok",workflow="hook"}`, "outcome", "ok"},
		{`outcome="ok"}`, "workflow", ""},
		{`outcome="unterminated`, "outcome", "unterminated"},
	} {
		if got := labelValue(c.labels, c.name); got != c.want {
			t.Errorf("labelValue(%q, %q) = %q, want %q", c.labels, c.name, got, c.want)
		}
	}
}

func TestHomeMount(t *testing.T) {
	mounts := `overlay / overlay rw,relatime 0 0
tmpfs /tmp tmpfs rw,nosuid 0 0
/dev/sdb1 /tmp/my\040disk ext4 rw 0 0
/dev/sdc1 /tmpfoo xfs rw 0 0
short line
`
	for _, c := range []struct{ path, fs, mount string }{
		{"/home/me/.fuscia", "overlay", "/"},
		{"/tmp/fuscia-load-1/home", "tmpfs", "/tmp"},
		{"/tmp/my disk/x/home", "ext4", "/tmp/my disk"},
		{"/tmpfoo/home", "xfs", "/tmpfoo"},
		{"/tmp", "tmpfs", "/tmp"},
	} {
		fs, mount := homeMount(mounts, c.path, "unknown", "unknown")
		if fs != c.fs || mount != c.mount {
			t.Errorf("%s: %s on %s, want %s on %s", c.path, fs, mount, c.fs, c.mount)
		}
	}
	if fs, mount := homeMount("", "/x", "unknown", "unknown"); fs != "unknown" || mount != "unknown" {
		t.Errorf("no mounts: %s on %s", fs, mount)
	}
}

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a ')' in it; utime 1234, stime 566 ticks.
	stat := []byte("4242 (fus cia) x) S 1 4242 4242 0 -1 4194560 2000 0 0 0 1234 566 0 0 20 0 11 0 100 0 0\n")
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if got != 18.0 {
		t.Errorf("parseStatCPU = %v s, want 18 (1800 ticks)", got)
	}
	if _, err := parseStatCPU([]byte("4242 (fuscia) S 1 2")); err == nil {
		t.Error("a truncated stat parsed without an error")
	}
}
