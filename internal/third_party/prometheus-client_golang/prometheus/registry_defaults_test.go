package prometheus

import (
	"errors"
	"runtime"
	"sync"
	"testing"
)

// TestDefaultRegistryCollectorsAtFirstUse checks Fuscia's change: the default registry holds
// no collector until its first use, and then the Go and process collectors, as upstream's
// init registered them, before anything a caller registers; other registries get neither.
func TestDefaultRegistryCollectorsAtFirstUse(t *testing.T) {
	defaultRegistry.mtx.RLock()
	before := len(defaultRegistry.collectorsByID) + len(defaultRegistry.uncheckedCollectors)
	defaultRegistry.mtx.RUnlock()
	if before != 0 {
		t.Fatalf("the default registry holds %d collectors before its first use, want 0", before)
	}

	// The first uses race with each other: each must see the defaults registered once.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				_, err := DefaultGatherer.Gather()
				errs <- err
				return
			}
			err := DefaultRegisterer.Register(NewGoCollector())
			var are AlreadyRegisteredError
			if !errors.As(err, &are) {
				errs <- errors.New("registering a second Go collector did not fail as already registered")
				return
			}
			errs <- nil
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	families, err := DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	want := []string{"go_goroutines", "go_memstats_alloc_bytes"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_cpu_seconds_total", "process_resident_memory_bytes")
	}
	for _, name := range want {
		if !names[name] {
			t.Errorf("the default registry gathers no %s", name)
		}
	}

	own, err := NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 0 {
		t.Errorf("a new registry gathers %d families, want 0", len(own))
	}
}
