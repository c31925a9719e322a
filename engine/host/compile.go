package host

import (
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/lang"
)

// A long-lived host keeps what compiling and loading components leave behind unless it takes
// care: wasmtime's compiler keeps its memory for good (Options.CompileElsewhere moves the
// compile out of the process), and a load from the disk cache reads the whole entry, tens of
// megabytes for a JavaScript component, into the Go heap, which Go hands back to the system
// only minutes later (releaseAfterLoad). docs/performance.md, "Compiling in a child process".

// loggedCompiler is the Wasm host's hostabi.Options.CompileElsewhere for a process that was
// given compile (Options.CompileElsewhere, WorkerOptions.CompileElsewhere): compile, with its
// outcome in log. The Wasm host compiles in this process after a failure.
func loggedCompiler(compile func(hostabi.CompileJob) error, log *slog.Logger) func(hostabi.CompileJob) error {
	return func(job hostabi.CompileJob) error {
		start := time.Now()
		err := compile(job)
		took := time.Since(start).Round(time.Millisecond).String()
		switch {
		case job.Preinit && err != nil && !cancelled(job.Cancel):
			// Built after the first load (hostabi/preinit_background.go): the component keeps
			// running as installed, which costs each attempt its _initialize.
			log.Warn("taking a Go component's snapshot in a child process failed; its attempts run it as installed",
				"component", job.Name, "error", err)
		case job.Preinit && err == nil:
			log.Info("Wasm component snapshot taken in a child process", "component", job.Name, "took", took)
		case err != nil && !job.Preinit:
			log.Warn("compiling a Wasm component in a child process failed; compiling it in this process",
				"component", job.Name, "error", err)
		case err == nil:
			log.Info("Wasm component compiled in a child process", "component", job.Name, "took", took)
		}
		return err
	}
}

// cancelled says whether a job's Cancel channel is closed (the Wasm host is closing).
func cancelled(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// releaseAfterLoad gives the memory that loading w's components left as garbage back to the
// system now: the cache entries read whole, the wasm files hashed. A serving process that
// loaded a component would otherwise idle tens of megabytes above what it uses until Go's
// scavenger gets to it. It costs a garbage collection, once per loaded workflow version.
func releaseAfterLoad(w *lang.Workflow) {
	if len(w.Components) > 0 {
		debug.FreeOSMemory()
	}
}
