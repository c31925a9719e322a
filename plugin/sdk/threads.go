package sdk

import (
	"os"
	"runtime"
)

// OneThread runs the plugin's Go code on one thread (runtime.GOMAXPROCS(1)) unless the
// environment sets GOMAXPROCS. Call it first in main, before Serve, in a plugin whose handlers
// wait (on a process, the network) rather than compute: a call's round trip is mostly the
// hand-offs between the goroutines gRPC uses, and with one thread each is a switch on that
// thread instead of waking an idle one (on a busy 2-core machine: 213 → 157 µs p50 per call,
// docs/performance.md). Do not when handlers compute in parallel: their Go code then has one
// core. Child processes a handler starts are not limited.
func OneThread() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
