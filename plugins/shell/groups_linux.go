package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// When Fuscia dies, what its commands started must die too, even when Fuscia was SIGKILLed and
// ran none of its cleanup. Fuscia starts each plugin with SIGKILL as its parent-death signal;
// that kills the plugin and, through each command's own parent-death signal, the command's
// direct child, but not what the child started (`sh -c 'job & other'`): only a live plugin can
// kill a command's process group. So this plugin swaps its parent-death signal for SIGTERM,
// which it catches: it kills the process group of every command running, then exits.

// exitFusciaDied is the plugin's exit status after its parent-death signal; nobody reads it
// (Fuscia is gone), but a test or a human looking at the process table can.
const exitFusciaDied = 3

// commandGroups are the process groups of the commands running now. It is process-wide on
// purpose: the signal that empties it is.
var commandGroups = newGroupSet()

func init() {
	// The parent-death signal is the main thread's attribute (the thread Fuscia forked), and
	// Go runs init on the main thread. Failing that, SIGKILL stays: the plugin still dies with
	// Fuscia, as before, and only a command's descendants can outlive it.
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		signal.Stop(terms)
		return
	}
	// Fuscia may have died before the swap: SIGKILL would have come then, so being here means
	// it had not, or that this process was not started by Fuscia at all (a test binary).
	go func() {
		<-terms
		commandGroups.killAll()
		fmt.Fprintln(os.Stderr, "fuscia-plugin-shell: SIGTERM (Fuscia stopped or died): every command's process group killed")
		os.Exit(exitFusciaDied)
	}()
}

// groupSet is a set of process group ids, with a gate that keeps a command from being started
// and left out of the set while killAll runs.
type groupSet struct {
	gate sync.RWMutex // read-held from a spawn until its group is in the set; killAll write-holds it for good
	mu   sync.Mutex
	ids  map[int]struct{}
}

func newGroupSet() *groupSet { return &groupSet{ids: make(map[int]struct{})} }

// start runs spawn and adds the new command's group, the gate held meanwhile.
func (s *groupSet) start(spawn func() (started, error)) (started, error) {
	s.gate.RLock()
	defer s.gate.RUnlock()
	cmd, err := spawn()
	if err == nil {
		s.mu.Lock()
		s.ids[cmd.pid] = struct{}{} // the leader of a new group: the group's id is its pid
		s.mu.Unlock()
	}
	return cmd, err
}

// remove takes pgid out of the set. Call it before the leader is reaped: until then the id
// cannot name another group, so killAll never kills a stranger's.
func (s *groupSet) remove(pgid int) {
	s.mu.Lock()
	delete(s.ids, pgid)
	s.mu.Unlock()
}

// killAll kills every group in the set and lets no command start after it: the process is
// about to exit.
func (s *groupSet) killAll() {
	s.gate.Lock() // not released: no spawn after this one
	s.mu.Lock()
	defer s.mu.Unlock()
	for pgid := range s.ids {
		killGroup(pgid)
	}
}
