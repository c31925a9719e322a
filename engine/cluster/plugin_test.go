package cluster

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// TestPluginMissing: a worker without the plugin an attempt's plan locked answers
// plugin_missing, naming itself and the digest, and stops taking the attempts of that pool
// while it keeps taking its other pools'.
func TestPluginMissing(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{Pools: []string{"tools"}})
	// Concurrency 1: one taker per pool, the one that meets the missing plugin. (With more, a
	// taker of the pool already waiting for a message when another disables the pool may
	// still get one, and answers it attempt_interrupted.)
	w := c.startWorker(t, WorkerOptions{Pools: []string{"default", "tools"}, Concurrency: 1, PluginDirs: []string{t.TempDir()}})
	ctx := testCtx(t)

	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	uses := lang.Uses{Kind: lang.UsesPlugin, Local: "lint", Name: "check"}
	pb, oerr := c.coord.Bind(ctx, task.Block{Uses: uses,
		Workflow: &lang.Workflow{Name: "w", Filename: filepath.Join(t.TempDir(), "w.fsc.hcl"),
			Plugins: []*lang.Plugin{{Name: "lint", Source: "lint"}}},
		Locks: plan.Locks{Plugins: map[string]plan.PluginLock{"lint": {Source: "lint", Version: "1.2.0", Digest: digest}}},
	})
	if oerr != nil {
		t.Fatal(oerr)
	}
	r := c.call(t, pb, newCall("task.lint", uses, map[string]any{}, "tools", nil))
	wantKind(t, "the plugin call", r, outcome.PluginMissing)
	if !strings.Contains(r.Message, w.ID()) || !strings.Contains(r.Message, digest) {
		t.Fatalf("plugin_missing message %q does not name the worker %s and the digest", r.Message, w.ID())
	}

	// The worker's record says it stopped taking pool tools, which counts no worker.
	eventually(t, "the worker's record to show pool tools disabled", func() bool {
		info, err := c.worker(w.ID())
		return err == nil && strings.Contains(info.Disabled["tools"], digest)
	})
	if got := c.coord.WorkersByPool(ctx); got["tools"] != 0 || got["default"] != 1 {
		t.Fatalf("WorkersByPool = %v; want tools 0, default 1", got)
	}

	// The next attempt of the pool waits for another worker, while the worker runs the
	// attempts of its other pool.
	next := c.callAsync(pb, newCall("task.lint2", uses, map[string]any{}, "tools", nil))
	eventually(t, "the next attempt to be queued", func() bool { return c.queued("tools") == 1 })
	b := c.bindHTTP(t)
	for _, node := range []string{"task.a", "task.b", "task.c"} {
		wantSuccess(t, node, c.call(t, b, httpCall(node, s.URL+"/"+node, "", nil)))
	}
	if next.finished() || c.queued("tools") != 1 {
		t.Fatalf("the worker took another attempt of the pool it cannot run (finished %v, queued %d)", next.finished(), c.queued("tools"))
	}
	next.cancel(nil)
	wantKind(t, "the cancelled call", next.result(t), outcome.Cancelled)
}
