package main

import (
	"fmt"
	"strings"
	"testing"
)

// chain writes perf script lines for n commands forked one after another by a plugin ("plug",
// tid 50) on behalf of a host ("host", tid 60), each with the same timeline (µs after its fork
// at k ms): it first runs at 10 on CPU 1, execs at 500, exits at 2,000 and is gone at 2,200; the
// plugin runs at 2,250, wakes the host at 2,400, the host runs at 2,450 and wakes the plugin at
// 2,900; the next fork follows at 3,000. A thread the plugin starts (not a command) is forked too.
func chain(n int) string {
	var b strings.Builder
	line := func(us int, comm string, tid, cpu int, name, args string) {
		fmt.Fprintf(&b, "%16s %5d [%03d] %d.%06d: sched:%s: %s\n", comm, tid, cpu, 100+us/1_000_000, us%1_000_000, name, args)
	}
	line(0, "plug", 50, 0, "sched_process_fork", "comm=plug pid=50 child_comm=plug child_pid=51")
	for k := range n {
		t, pid := 1000+k*3000, 100+k
		line(t, "plug", 50, 0, "sched_process_fork", fmt.Sprintf("comm=plug pid=50 child_comm=plug child_pid=%d", pid))
		line(t+10, "swapper/1", 0, 1, "sched_switch", fmt.Sprintf("prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=plug next_pid=%d next_prio=120", pid))
		line(t+500, "true", pid, 1, "sched_process_exec", fmt.Sprintf("filename=/bin/true pid=%d old_pid=%d", pid, pid))
		line(t+2000, "true", pid, 1, "sched_process_exit", fmt.Sprintf("comm=true pid=%d prio=120 group_dead=true", pid))
		line(t+2200, "true", pid, 1, "sched_switch", fmt.Sprintf("prev_comm=true prev_pid=%d prev_prio=120 prev_state=Z ==> next_comm=swapper/1 next_pid=0 next_prio=120", pid))
		line(t+2250, "swapper/0", 0, 0, "sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=plug next_pid=50 next_prio=120")
		line(t+2400, "plug", 50, 0, "sched_waking", "comm=host pid=60 prio=120 target_cpu=001")
		line(t+2450, "swapper/1", 0, 1, "sched_switch", "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=host next_pid=60 next_prio=120")
		line(t+2900, "host", 60, 1, "sched_waking", "comm=plug pid=50 prio=120 target_cpu=000")
	}
	return b.String()
}

func TestSplitMeasuresEachCommandAndTheGap(t *testing.T) {
	events, err := parse(strings.NewReader("perf's header line\n" + chain(5)))
	if err != nil {
		t.Fatal(err)
	}
	r := split(events, "/bin/true", "host", "plug")
	want := report{Commands: 5, ForkToExec: 500, ExecToExit: 1500, ExitToNextFork: 1000, ForkToRun: 10, Seen: 5, SameCPU: 0,
		Gap: []gapPart{
			{"the command's teardown", 200}, {"→ the plugin runs", 50}, {"→ the plugin wakes the host", 150},
			{"→ the host runs", 50}, {"→ the host last wakes the plugin", 450}, {"→ the next fork", 100},
		}}
	if fmt.Sprint(r) != fmt.Sprint(want) {
		t.Fatalf("split:\n got %+v\nwant %+v", r, want)
	}
	// Without the two processes' names the gap is not split; a program no command runs finds
	// nothing.
	if r := split(events, "/bin/true", "", ""); r.Gap != nil || r.Commands != 5 {
		t.Fatalf("without -host and -plugin: %+v", r)
	}
	if r := split(events, "/bin/false", "", ""); r.Commands != 0 {
		t.Fatalf("commands of another program: %d", r.Commands)
	}
}

// perf prints timestamps with 6 digits after the point by default and 9 with --ns.
func TestParseReadsBothTimestampPrecisions(t *testing.T) {
	events, err := parse(strings.NewReader(
		"            true  100 [001] 12.000001: sched:sched_process_exit: comm=true pid=100\n" +
			"            true  100 [001] 12.000001500: sched:sched_process_exit: comm=true pid=100\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].at.Nanoseconds() != 12_000_001_000 || events[1].at.Nanoseconds() != 12_000_001_500 {
		t.Fatalf("%+v", events)
	}
	if events[0].comm != "true" || events[0].tid != 100 || events[0].cpu != 1 || events[0].name != "sched_process_exit" {
		t.Fatalf("%+v", events[0])
	}
}
