package metrics_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/fuscia/fuscia/engine/internal/metrics"
)

// TestCluster: ObserveCluster exports the live workers and the waiting attempts by pool, read
// at each scrape, next to the runs queued by workflow; fuscia_redeliveries_total exists at 0
// from the start and counts each Redelivery.
func TestCluster(t *testing.T) {
	r, m := newRecorder(t)
	ctx := context.Background()

	if err := r.ObserveQueueDepth(func() map[string]int64 { return map[string]int64{"deploy": 2} }); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		workers = map[string]int64{"default": 2, "gpu": 1}
		queue   = map[string]int64{"default": 0, "gpu": 3}
		noCtx   bool // a callback got a context without a deadline
	)
	observe := func(m *map[string]int64) func(context.Context) map[string]int64 {
		return func(ctx context.Context) map[string]int64 {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := ctx.Deadline(); !ok {
				noCtx = true
			}
			out := map[string]int64{}
			for k, v := range *m {
				out[k] = v
			}
			return out
		}
	}
	if err := r.ObserveCluster(observe(&workers), observe(&queue)); err != nil {
		t.Fatal(err)
	}

	body := scrape(t, m)
	wantLines(t, body,
		"# TYPE fuscia_workers gauge",
		`fuscia_workers{pool="default"} 2`,
		`fuscia_workers{pool="gpu"} 1`,
		"# TYPE fuscia_queue_depth gauge",
		`fuscia_queue_depth{pool="default"} 0`,
		`fuscia_queue_depth{pool="gpu"} 3`,
		`fuscia_queue_depth{workflow="deploy"} 2`,
		"# TYPE fuscia_redeliveries_total counter",
		"fuscia_redeliveries_total 0",
	)
	mu.Lock()
	if noCtx {
		t.Error("a cluster callback got a context without a deadline: a NATS that does not answer would hold the scrape")
	}
	workers = map[string]int64{"default": 1, "gpu": 0}
	queue = map[string]int64{"default": 0, "gpu": 1}
	mu.Unlock()
	r.Redelivery(ctx)
	r.Redelivery(ctx)

	body = scrape(t, m)
	wantLines(t, body,
		`fuscia_workers{pool="default"} 1`,
		`fuscia_workers{pool="gpu"} 0`,
		`fuscia_queue_depth{pool="gpu"} 1`,
		"fuscia_redeliveries_total 2",
	)
	mfs := families(t, body)
	for name, typ := range map[string]dto.MetricType{
		"fuscia_workers":            dto.MetricType_GAUGE,
		"fuscia_queue_depth":        dto.MetricType_GAUGE,
		"fuscia_redeliveries_total": dto.MetricType_COUNTER,
	} {
		if mf := mfs[name]; mf == nil || mf.GetType() != typ {
			t.Errorf("family %s = %v, want a %v", name, mf, typ)
		}
	}
}

// TestNoCluster: without ObserveCluster (serve without -nats) no cluster series is exported.
func TestNoCluster(t *testing.T) {
	_, m := newRecorder(t)
	body := scrape(t, m)
	for _, name := range []string{"fuscia_workers", "fuscia_redeliveries_total", `pool="`} {
		if strings.Contains(body, name) {
			t.Errorf("a serve without a cluster exports %s:\n%s", name, fuscia(body))
		}
	}
}

// TestNilRecorderCluster: the cluster methods of a nil Recorder do nothing.
func TestNilRecorderCluster(t *testing.T) {
	var r *metrics.Recorder
	r.Redelivery(context.Background())
	none := func(context.Context) map[string]int64 { return nil }
	if err := r.ObserveCluster(none, none); err != nil {
		t.Errorf("ObserveCluster: %v", err)
	}
}
