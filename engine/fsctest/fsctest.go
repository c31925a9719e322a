// Package fsctest runs test files (*.fsctest.hcl, decoded by lang/testfile): each run block
// runs its workflow once, in memory, with mocked tasks, waits, HTTP and time, and checks the
// run's status, expected failures and assertions.
package fsctest

import (
	"context"
	"regexp"
)

// Options are the choices of one Test.
type Options struct {
	// Paths are test files or directories (every *.fsctest.hcl under them); none means ".".
	Paths []string
	// Filter, when set, keeps the run blocks whose name it matches; the others are skipped.
	Filter *regexp.Regexp
	// Parallel is how many run blocks run at once; 0 means GOMAXPROCS.
	Parallel int
	// Schemas looks up the output schemas of installed components and plugins, to check mocked
	// outputs; nil checks none.
	Schemas SchemaSource
	// OnRun is called with each run block's report as it is known, in file order and source
	// order within a file (a run that ends early waits for those before it), from one
	// goroutine at a time.
	OnRun func(*RunReport)
}

// Test runs every run block of the test files under opts.Paths and reports.
func Test(ctx context.Context, opts Options) *Report {
	panic("not yet")
}
