package host

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
)

// Options are what a process chooses for its Host. Home is required; every other zero value
// is a default, said on the field. The environment is read by the caller (cmd/fuscia) and
// handed in here: the host reads none of its own.
type Options struct {
	// Home is $FUSCIA_HOME: the state store (Home/state), the artifacts, the installed
	// components (Home/components), the compile and schema caches (Home/cache) and the API
	// socket are under it.
	Home string
	// Command names this process in the owner file, which other commands quote when they find
	// the store held (local.OwnerConfig.Command): the command and its positional arguments,
	// never flag values.
	Command string

	// LogFormat ("text", "json", or "" for text on a terminal) and LogLevel (the least level
	// logged) shape the process's log on Stderr (telemetry.Config). The zero LogLevel is
	// slog's info; apply and resume log warnings and errors only.
	LogFormat string
	LogLevel  slog.Level
	// Stderr receives the log; nil means os.Stderr. Never stdout, which carries -json output.
	Stderr io.Writer
	// Getenv reads the environment: telemetry's OTEL_* settings and the secrets the engine
	// reads. Nil means os.Getenv.
	Getenv func(string) string
	// Redact is the process's set of secret values: the engine adds what it reads, and the
	// log, the spans, the API answers and the metrics are scrubbed with it. Nil: a set of the
	// engine's own.
	Redact *redact.Set

	// StoreSizes replaces the sizes of the store's files (journal.Sizes; the zero value keeps
	// the defaults).
	StoreSizes journal.Sizes
	// StoreHoldRelaxed opens the store with journal.Options.HoldRelaxed, and BeforeEffect is
	// engine.Config.BeforeEffect: both for crash tests only (FUSCIA_TEST_STORE,
	// FUSCIA_TEST_CRASH).
	StoreHoldRelaxed bool
	BeforeEffect     func(executionID, instance string)
	// OnWait is told, once, that Open waits for the store because another process holds its
	// lock without answering on its socket; lockedBy names it (local.OwnerConfig.OnWait).
	OnWait func(lockedBy string)
	// OnOwned is told, once, that Open waits its turn because another fuscia process owns
	// the store and answers on its socket; why says which one ("process 12 (fuscia apply
	// x.fsc.hcl) serves it on …"). Runs of one home are serialized: Open tries again every
	// 200ms until its ctx ends.
	OnOwned func(why string)

	// PluginDirs are searched for plugin binaries besides the defaults (-plugin-dir).
	PluginDirs []string
	// Plugins is a plugin manager that already started the workflow's plugins (apply's
	// plan-time checks); the run reuses those processes. The host owns it from New on: Close
	// closes it, and so does a New or an Open that fails. Nil: Open starts one with
	// PluginOptions.
	Plugins *plugin.Manager
	// PluginOptions configure the manager Open starts when Plugins is nil; its Logger
	// defaults to the host's log.
	PluginOptions plugin.Options
	// CompileElsewhere, when set, compiles a Wasm component whose code is not in the disk
	// cache yet outside this process and leaves it there (hostabi.Options.CompileElsewhere);
	// the host then loads it from the cache. serve gives it a short-lived child process, so
	// that the compiler's memory, which wasmtime never gives back, is not the daemon's. The
	// host logs each such compile; when one fails it logs a warning and compiles in this
	// process. Nil: components are compiled in this process (apply, resume: they exit soon).
	CompileElsewhere func(hostabi.CompileJob) error
	// Workflows are the workflows the host will run, when they are known before it opens: a
	// component block among them (or an installed component) that sets max_fuel turns on the
	// Wasm host's fuel metering, which costs every guest a little (wasm.NeedsFuel).
	Workflows []*lang.Workflow

	// Cluster, with Serve, makes the host the coordinator of a cluster (ClusterOptions).
	Cluster *ClusterOptions

	// Serve, when set, makes the host a `fuscia serve`: New builds its serve.Server and its
	// metrics, and the engine and the store's owner get what the server needs of them.
	Serve *ServeOptions
}

// ServeOptions are serve's choices (engine/serve.Config) that the host cannot make itself.
type ServeOptions struct {
	// Paths are the workflow files and directories to serve.
	Paths []string
	// Vars are the variables of the served workflows (FUSCIA_VAR_* in the environment).
	Vars lang.VarInputs
	// Now is the schedules' clock; nil means time.Now.
	Now func() time.Time
	// WebhookWait bounds a webhook's ?wait=true (serve's default when 0).
	WebhookWait time.Duration
	// Retain, above 0, prunes the runs that finished longer ago (serve.Config.Retain).
	Retain time.Duration
	// CheckElsewhere, when set, evaluates a file's content in another process (planner.Rehearse
	// under a heap limit) before the host loads it: a *serve.LoadError refuses the file as its
	// diagnostics would; another error (the process could not run) is logged, and the host
	// evaluates the file itself. Without an error it returns the files the workflow's calls
	// read there, with their sums (lang.Parser.CalledSums; empty, not nil, for none): the host
	// loads those contents only (lang.Parser.Expect), not a file swapped in since.
	CheckElsewhere func(ctx context.Context, file string, src []byte) (map[string][sha256.Size]byte, error)
	// OnInvalid is told about a served file that does not make a plan, with its diagnostics
	// and the sources they point into, for the caller to show; the server logs their summary
	// and keeps the file's last good version, if any. Called from the server's goroutines,
	// one file at a time or concurrently: it must be safe for that.
	OnInvalid func(file string, files map[string]*hcl.File, diags hcl.Diagnostics)
}
