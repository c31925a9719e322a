// Package fsctest runs test files (*.fsctest.hcl, decoded by lang/testfile): each run block
// runs its workflow once, in memory, with mocked tasks, waits, HTTP and time, and checks the
// run's status, expected failures and assertions.
//
// # Model
//
// A Test opens one journal in memory (journal.OpenMemory: nothing is written to disk) and runs
// each run block on an engine of its own, whose dispatcher answers from the block's mocks
// (dispatch.go, env.go) and whose clock is virtual (vclock.go): retry backoff, sleeps, wait
// deadlines and max_duration take no real time, and the clock moves only when nothing else
// can. Waits are answered from their mocks as they begin waiting (waits.go). When the run has
// ended, the block's expectations are checked against its record (assert.go).
//
// # Determinism
//
// Mocked tasks answer the same for the same attempt; builtin.http never reaches the network;
// a component or plugin task nobody mocked is an error, never a real call. The virtual clock
// starts at the Test's start, so time-dependent functions in a workflow still see the wall
// clock. Reports come in file and source order whatever the parallelism.
//
// # Cost
//
// A run costs what the engine costs in memory (tens of microseconds per node) plus its
// workflow's load; run blocks run in parallel (Options.Parallel).
package fsctest

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/testfile"
)

// Options are the choices of one Test.
type Options struct {
	// Paths are test files or directories (every *.fsctest.hcl under them); none means ".".
	Paths []string
	// Filter, when set, keeps the run blocks whose name it matches; the others are skipped.
	Filter *regexp.Regexp
	// Parallel is how many run blocks run at once; 0 means GOMAXPROCS.
	Parallel int
	// Timeout bounds each run block's real time (the virtual clock does not count): a run still
	// going then is cancelled and its block errors. 0 means no bound.
	Timeout time.Duration
	// Schemas looks up the schemas of installed components and plugins, to check mocked
	// outputs; nil checks none.
	Schemas SchemaSource
	// OnFile is called with each test file's report before the reports of its runs (its Runs
	// are not filled in yet), in file order; OnRun with each run block's report, in file order
	// and source order within a file (a run that ends early waits for those before it). Both
	// are called from one goroutine at a time.
	OnFile func(*FileReport)
	OnRun  func(*RunReport)
}

// Test runs every run block of the test files under opts.Paths and reports. It fails only when
// the paths cannot be read (a file that does not exist, no test file at all); a test file with
// errors is reported in its FileReport.
func Test(ctx context.Context, opts Options) (*Report, error) {
	began := time.Now()
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	files, err := testfile.Collect(paths)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no test files (*.fsctest.hcl) found in %s", joinPaths(paths))
	}
	store, err := journal.OpenMemory(journal.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the in-memory journal: %w", err)
	}
	defer store.Close()
	runner := builtin.New(builtin.Options{Transport: httpTransport{}})
	defer runner.Close()
	t := &tester{opts: opts, store: store, builtins: runner, start: time.Now().UTC().Truncate(time.Second),
		sources: map[string]*hcl.File{}, workflows: map[string]*loaded{}}

	rep := &Report{Sources: t.sources}
	type job struct {
		file *testfile.File
		run  *testfile.Run
		rep  *RunReport
	}
	// The sequence of what is reported, in order: a file, then its runs.
	type item struct {
		file *FileReport
		job  *job
	}
	var items []item
	var jobs []*job
	for _, path := range files {
		parser := lang.NewParser()
		f, diags := testfile.LoadWith(parser, path)
		t.addSources(parser.Files())
		fr := &FileReport{Path: path, Diags: diags}
		rep.Files = append(rep.Files, fr)
		items = append(items, item{file: fr})
		if f == nil || diags.HasErrors() {
			continue
		}
		for _, rb := range f.Runs {
			rr := &RunReport{File: path, Name: rb.Name, Range: rb.DeclRange, Workflow: rb.Workflow}
			fr.Runs = append(fr.Runs, rr)
			j := &job{file: f, run: rb, rep: rr}
			items = append(items, item{job: j})
			if opts.Filter != nil && !opts.Filter.MatchString(rb.Name) {
				rr.Status = Skip
				continue
			}
			jobs = append(jobs, j)
		}
	}

	// Reports go out in items' order as soon as every item before them is done.
	var (
		mu   sync.Mutex
		done = make([]bool, len(items))
		next int
	)
	index := map[*job]int{}
	for i, it := range items {
		if it.job == nil || it.job.rep.Status == Skip {
			done[i] = true
		}
		if it.job != nil {
			index[it.job] = i
		}
	}
	flush := func() { // under mu
		for next < len(items) && done[next] {
			it := items[next]
			switch {
			case it.file != nil && opts.OnFile != nil:
				opts.OnFile(it.file)
			case it.job != nil && opts.OnRun != nil:
				opts.OnRun(it.job.rep)
			}
			next++
		}
	}
	mu.Lock()
	flush()
	mu.Unlock()

	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	queue := make(chan *job)
	var wg sync.WaitGroup
	for range min(parallel, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				t.runBlock(ctx, j.file, j.run, j.rep)
				mu.Lock()
				done[index[j]] = true
				flush()
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()

	for _, fr := range rep.Files {
		for _, rr := range fr.Runs {
			switch rr.Status {
			case Pass:
				rep.Passed++
			case Fail:
				rep.Failed++
			case Error:
				rep.Errored++
			case Skip:
				rep.Skipped++
			}
		}
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

func joinPaths(paths []string) string {
	s := ""
	for i, p := range paths {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	return s
}

// addSources records parsed files for rendering; safe for concurrent use.
func (t *tester) addSources(files map[string]*hcl.File) {
	t.srcMu.Lock()
	defer t.srcMu.Unlock()
	for name, f := range files {
		if _, ok := t.sources[name]; !ok {
			t.sources[name] = f
		}
	}
}

// sourceBytes is the text of a parsed file.
func (t *tester) sourceBytes(name string) []byte {
	t.srcMu.Lock()
	defer t.srcMu.Unlock()
	if f := t.sources[name]; f != nil {
		return f.Bytes
	}
	return nil
}
