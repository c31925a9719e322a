package main

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// event is one line of `perf script` for a sched tracepoint.
type event struct {
	comm string // the running task's name
	tid  int
	cpu  int
	at   time.Duration // since an arbitrary origin
	name string        // sched_switch, sched_waking, ...
	args string        // the tracepoint's fields as perf prints them
}

var (
	lineRE     = regexp.MustCompile(`^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:(\w+):\s*(.*)$`)
	childPidRE = regexp.MustCompile(`child_pid=(\d+)`)
	nextRE     = regexp.MustCompile(`next_comm=(.*) next_pid=(\d+)`)
	prevRE     = regexp.MustCompile(`prev_comm=(.*) prev_pid=(\d+) .*prev_state=(\S+)`)
	wakeeRE    = regexp.MustCompile(`comm=(.*) pid=(\d+)`)
	filenameRE = regexp.MustCompile(`filename=(\S+)`)
)

// parse reads perf script's text; lines that are not sched tracepoints are skipped.
func parse(r io.Reader) ([]event, error) {
	var out []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tid, _ := strconv.Atoi(m[2])
		cpu, _ := strconv.Atoi(m[3])
		sec, _ := strconv.ParseInt(m[4], 10, 64)
		frac := m[5]
		for len(frac) < 9 {
			frac += "0"
		}
		ns, _ := strconv.ParseInt(frac[:9], 10, 64)
		out = append(out, event{comm: m[1], tid: tid, cpu: cpu, at: time.Duration(sec)*time.Second + time.Duration(ns), name: m[6], args: m[7]})
	}
	return out, sc.Err()
}

// report holds the medians split computes, in microseconds.
type report struct {
	Commands               int
	ForkToExec, ExecToExit float64
	ExitToNextFork         float64
	ForkToRun              float64 // the fork until the child first runs
	Seen                   int     // commands whose first run was recorded
	SameCPU                int     // of those, the ones that first ran on the CPU that forked them
	Gap                    []gapPart
}

type gapPart struct {
	What string
	Us   float64
}

type command struct {
	pid                      int
	forked, execed, exited   time.Duration
	forkCPU, runCPU          int
	ran                      time.Duration
	hasExec, hasExit, hasRun bool
}

// split finds the commands that exec execPath and measures them; host and plugin (both given)
// name the processes whose hand-offs split the gap after each command.
func split(events []event, execPath, host, plugin string) report {
	byPid := map[int]*command{}
	var order []*command
	base := path.Base(execPath)
	for _, e := range events {
		switch e.name {
		case "sched_process_fork":
			if m := childPidRE.FindStringSubmatch(e.args); m != nil {
				pid, _ := strconv.Atoi(m[1])
				c := &command{forked: e.at, forkCPU: e.cpu}
				byPid[pid] = c
				order = append(order, c)
			}
		case "sched_switch":
			if m := nextRE.FindStringSubmatch(e.args); m != nil {
				pid, _ := strconv.Atoi(m[2])
				if c := byPid[pid]; c != nil && !c.hasRun {
					c.ran, c.runCPU, c.hasRun = e.at, e.cpu, true
				}
			}
		case "sched_process_exec":
			if m := filenameRE.FindStringSubmatch(e.args); m != nil && m[1] == execPath {
				if c := byPid[e.tid]; c != nil {
					c.execed, c.hasExec = e.at, true
				}
			}
		case "sched_process_exit":
			if c := byPid[e.tid]; c != nil && c.hasExec && e.comm == base {
				c.exited, c.hasExit = e.at, true
			}
		}
	}
	var cmds []*command
	for _, c := range order {
		if c.hasExec && c.hasExit {
			cmds = append(cmds, c)
		}
	}
	r := report{Commands: len(cmds)}
	if len(cmds) == 0 {
		return r
	}
	var forkExec, execExit, gap, forkRun []float64
	for i, c := range cmds {
		forkExec = append(forkExec, us(c.execed-c.forked))
		execExit = append(execExit, us(c.exited-c.execed))
		if c.hasRun { // perf may have lost the switch that started it
			r.Seen++
			forkRun = append(forkRun, us(c.ran-c.forked))
			if c.runCPU == c.forkCPU {
				r.SameCPU++
			}
		}
		if i+1 < len(cmds) {
			gap = append(gap, us(cmds[i+1].forked-c.exited))
		}
	}
	r.ForkToExec, r.ExecToExit, r.ForkToRun = median(forkExec), median(execExit), median(forkRun)
	r.ExitToNextFork = median(gap)
	if host != "" && plugin != "" {
		r.Gap = splitGaps(events, cmds, base, host, plugin)
	}
	return r
}

// splitGaps divides each gap between a command's exit and the next fork at five moments: the
// command is gone (its last switch-out), a thread of the plugin runs, the plugin wakes the
// host (its answer), the host runs, the host last wakes the plugin (its next request).
func splitGaps(events []event, cmds []*command, base, host, plugin string) []gapPart {
	names := []string{"the command's teardown", "→ the plugin runs", "→ the plugin wakes the host", "→ the host runs", "→ the host last wakes the plugin", "→ the next fork"}
	parts := make([][]float64, len(names))
	i := 0
	for k := 0; k+1 < len(cmds); k++ {
		c, next := cmds[k], cmds[k+1]
		for i < len(events) && events[i].at < c.exited {
			i++
		}
		var gone, pluginRuns, answer, hostRuns, request time.Duration
		for j := i; j < len(events) && events[j].at <= next.forked; j++ {
			e := events[j]
			switch {
			case gone == 0 && e.name == "sched_switch":
				if m := prevRE.FindStringSubmatch(e.args); m != nil && m[1] == base && m[3] == "Z" {
					gone = e.at
				}
			case gone != 0 && pluginRuns == 0 && e.name == "sched_switch":
				if m := nextRE.FindStringSubmatch(e.args); m != nil && m[1] == plugin {
					pluginRuns = e.at
				}
			case pluginRuns != 0 && answer == 0 && e.name == "sched_waking" && e.comm == plugin && wakes(e, host):
				answer = e.at
			case answer != 0 && hostRuns == 0 && (e.comm == host || (e.name == "sched_switch" && nextIs(e, host))):
				hostRuns = e.at
			}
			if hostRuns != 0 && e.name == "sched_waking" && e.comm == host && wakes(e, plugin) {
				request = e.at
			}
		}
		if gone == 0 || pluginRuns == 0 || answer == 0 || hostRuns == 0 || request == 0 {
			continue
		}
		for p, d := range []time.Duration{gone - c.exited, pluginRuns - gone, answer - pluginRuns, hostRuns - answer, request - hostRuns, next.forked - request} {
			parts[p] = append(parts[p], us(d))
		}
	}
	if len(parts[0]) == 0 {
		return nil
	}
	out := make([]gapPart, len(names))
	for p, n := range names {
		out[p] = gapPart{What: n, Us: median(parts[p])}
	}
	return out
}

func wakes(e event, comm string) bool {
	m := wakeeRE.FindStringSubmatch(e.args)
	return m != nil && m[1] == comm
}

func nextIs(e event, comm string) bool {
	m := nextRE.FindStringSubmatch(e.args)
	return m != nil && m[1] == comm
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "commands            %d\n", r.Commands)
	fmt.Fprintf(w, "fork → exec         %.0f µs\n", r.ForkToExec)
	fmt.Fprintf(w, "exec → exit         %.0f µs\n", r.ExecToExit)
	fmt.Fprintf(w, "exit → next fork    %.0f µs\n", r.ExitToNextFork)
	fmt.Fprintf(w, "a command           %.0f µs\n", r.ForkToExec+r.ExecToExit+r.ExitToNextFork)
	fmt.Fprintf(w, "fork → first run    %.0f µs (on the forking CPU: %d of %d)\n", r.ForkToRun, r.SameCPU, r.Seen)
	for _, p := range r.Gap {
		fmt.Fprintf(w, "  %-32s %.0f µs\n", p.What, p.Us)
	}
}
