package lsp

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/hcl/v2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// TestChecksBounded: checks of many documents (a save checks every open one again) run at most
// one per CPU at a time, and every document still gets its diagnostics.
func TestChecksBounded(t *testing.T) {
	const docs = 40
	var running, most atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, docs)
	run := func(context.Context, *document) hcl.Diagnostics {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newChecks(ctx, run, -1)
	var mu sync.Mutex
	published := map[protocol.DocumentUri]bool{}
	notify := func(_ string, params any) {
		mu.Lock()
		defer mu.Unlock()
		published[params.(protocol.PublishDiagnosticsParams).URI] = true
	}
	for i := range docs {
		c.schedule(newDocument(protocol.DocumentUri(fmt.Sprintf("file:///w%d.fsc.hcl", i)), "fuscia", 1, newText([]byte("workflow \"w\" {}\n"))), notify)
	}
	slots := runtime.GOMAXPROCS(0)
	for range slots {
		<-started // as many as there are slots run at once; then no more start until one ends
	}
	close(release)
	for range docs - slots {
		<-started
	}
	c.wg.Wait()
	if m := int(most.Load()); m > slots {
		t.Errorf("%d checks ran at once; want at most %d (GOMAXPROCS)", m, slots)
	}
	if len(published) != docs {
		t.Errorf("%d documents got diagnostics; want %d", len(published), docs)
	}
}
