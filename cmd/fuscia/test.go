package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/fsctest"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/plugin"
)

// defaultTestTimeout bounds a run block's real time unless -timeout says otherwise: go test's
// default. A run of builtins and mocks takes milliseconds; one that takes minutes is stuck in a
// loop or an expression, and CI should hear about it rather than wait for its own limit.
const defaultTestTimeout = 10 * time.Minute

// runTest is `fuscia test`: it runs the test files (docs/testing.md) with engine/fsctest and
// renders the report as it comes. Exit 0 when every run passed, 1 when one failed or errored,
// 2 for bad flags, a test file with errors, or no test file at all.
func runTest(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "test", "test [PATH…] [-run REGEX] [-json] [-junit FILE] [-v] [-plugin-dir DIR]… [-parallel N] [-timeout DURATION]")
	filter := fs.String("run", "", "run only the run blocks whose name matches `REGEX` (the others are skipped)")
	asJSON := fs.Bool("json", false, "print the report as NDJSON events")
	junit := fs.String("junit", "", "also write the report as JUnit XML to `FILE`")
	verbose := fs.Bool("v", false, "show each run's time and nodes")
	parallel := fs.Int("parallel", 0, "run at most `N` run blocks at once (default: the number of CPUs)")
	timeout := fs.Duration("timeout", defaultTestTimeout, "cancel a run block still running after `DURATION` of real time, and report it as errored (0: no limit)")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *timeout < 0 {
		return fs.invalid(*asJSON, "Invalid -timeout", fmt.Sprintf("-timeout must be 0 (no limit) or more; got %s.", *timeout))
	}
	opts := fsctest.Options{Paths: paths, Parallel: *parallel, Timeout: *timeout}
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			return fs.invalid(*asJSON, "Invalid -run", fmt.Sprintf("-run %q is not a regular expression: %s.", *filter, err))
		}
		opts.Filter = re
	}
	if *parallel < 0 {
		return fs.invalid(*asJSON, "Invalid -parallel", fmt.Sprintf("-parallel must be 0 (one per CPU) or more; got %d.", *parallel))
	}
	var junitFile *os.File
	if *junit != "" {
		if strings.HasSuffix(*junit, ".hcl") {
			// `-junit a.fsctest.hcl` forgot the report's name and took the test file for it.
			return fs.invalid(*asJSON, "Invalid -junit", fmt.Sprintf("-junit names the JUnit report to write, and %s is an HCL file (a test file or a workflow, say), which it would replace. Give the report a name of its own, such as report.xml, before the test files.", *junit))
		}
		if st, err := os.Stat(*junit); err == nil && !st.Mode().IsRegular() {
			return fs.invalid(*asJSON, "Invalid -junit", fmt.Sprintf("-junit %s is not a regular file; give the path of the report to write, such as report.xml.", *junit))
		}
		// Written beside the report and renamed over it at the end, so that a path that cannot
		// be written fails fast and an existing report is replaced only by a whole new one.
		f, err := os.CreateTemp(filepath.Dir(*junit), "."+filepath.Base(*junit)+".*")
		if err != nil {
			return c.operationFailed("Cannot write the JUnit report", err)
		}
		defer func() {
			_ = f.Close()
			_ = os.Remove(f.Name()) // gone once renamed
		}()
		junitFile = f
	}

	// Plugins are only asked for their schemas; without a CacheDir nothing is written to the
	// home: a test leaves $FUSCIA_HOME as it found it.
	po := c.pluginOptions(fs.homeDir())
	po.CacheDir = ""
	po.Logger = c.logger("")
	plugins := plugin.NewManager(po)
	defer plugins.Close()
	opts.Schemas = fsctest.InstalledSchemas(ctx, plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs}, plugins)

	var r fsctest.Renderer = fsctest.NewHuman(c.stdout, c.stderr, *verbose)
	if *asJSON {
		r = fsctest.NewJSON(c.stdout, version.Fuscia)
	}
	opts.OnFile, opts.OnRun = r.File, r.Run
	rep, err := fsctest.Test(ctx, opts)
	if err != nil {
		return c.fail(*asJSON, "No test files to run", sentenceOf(err))
	}
	r.Finish(rep)

	if junitFile != nil {
		if err := fsctest.WriteJUnit(junitFile, rep); err != nil {
			return c.operationFailed("Cannot write the JUnit report", err)
		}
		if err := errors.Join(junitFile.Chmod(0o644), junitFile.Close()); err != nil {
			return c.operationFailed("Cannot write the JUnit report", err)
		}
		if err := os.Rename(junitFile.Name(), *junit); err != nil {
			return c.operationFailed("Cannot write the JUnit report", err)
		}
	}
	for _, f := range rep.Files {
		if f.Diags.HasErrors() {
			return exitInvalid
		}
	}
	if !rep.OK() {
		return exitFailed
	}
	return exitOK
}
