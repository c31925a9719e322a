package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// serve's CPU time, read from /proc/PID/stat (Linux). On a machine others share, the rate serve
// reaches says as much about their load as about serve; the CPU it spent per run does not.

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// readCPU is serve's user and system CPU time so far, in seconds.
func readCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime + stime (fields 14 and 15) from the text of a /proc/PID/stat, in
// seconds. The command name (field 2) may hold spaces and parentheses: the fields that follow
// start after its last ')'.
func parseStatCPU(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat without a command name: %.60q", b)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11]; stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat with %d fields after the command name", len(f))
	}
	var sum float64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat time %q: %v", s, err)
		}
		sum += float64(n)
	}
	return sum / clockTicks, nil
}
