package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// testCrashEnv names a test-only variable read by the commands that run workflows (apply,
// resume, serve): "barrier:INSTANCE" kills the process (SIGKILL) when an attempt of the task
// instance INSTANCE ("task.send", "task.fan[2]") reaches its barrier in a strict run — the pure
// results before it appended and not synced yet, the effect not started (docs/engine.md,
// "Durability"). The crash tests of that rule use it, with FUSCIA_TEST_STORE=lossy so that the
// kill loses what was not synced. Not for real use.
const testCrashEnv = "FUSCIA_TEST_CRASH"

// errTestCrash is returned for a value of FUSCIA_TEST_CRASH that is not barrier:INSTANCE.
var errTestCrash = errors.New("invalid " + testCrashEnv)

// testCrash returns the engine's BeforeEffect hook FUSCIA_TEST_CRASH asks for; nil when unset.
func (c *cli) testCrash() (func(executionID, instance string), error) {
	v := c.getenv(testCrashEnv)
	if v == "" {
		return nil, nil
	}
	target, ok := strings.CutPrefix(v, "barrier:")
	if !ok || target == "" {
		return nil, fmt.Errorf("%w: %q; the only form is barrier:INSTANCE, e.g. barrier:task.send (a test setting), or leave it unset", errTestCrash, v)
	}
	return func(_, instance string) {
		if instance != target {
			return
		}
		self, err := os.FindProcess(os.Getpid())
		if err == nil {
			err = self.Kill()
		}
		if err == nil {
			select {} // killed: nothing after this point may happen, the effect least of all
		}
		// Never reached in practice; still, the effect must not start.
		fmt.Fprintf(os.Stderr, "%s: could not kill the process at the barrier of %s: %v\n", testCrashEnv, instance, err)
		os.Exit(exitFailed)
	}, nil
}
