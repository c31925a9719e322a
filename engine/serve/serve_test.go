package serve

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestValidSignature(t *testing.T) {
	body, secret := []byte(`{"a":1}`), []byte("s3cret")
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	good := hex.EncodeToString(mac.Sum(nil))
	cases := []struct {
		header string
		want   bool
	}{
		{good, true},
		{"sha256=" + good, true},
		{strings.ToUpper(good), true}, // hex is case-insensitive
		{"", false},
		{"sha256=", false},
		{good[:len(good)-2], false},
		{"zz" + good[2:], false},
		{"sha1=" + good, false},
	}
	for _, tc := range cases {
		if got := validSignature(body, secret, tc.header); got != tc.want {
			t.Errorf("validSignature(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
	if validSignature([]byte(`{"a":2}`), secret, good) {
		t.Error("a signature of another body was accepted")
	}
}

func TestWebhookPayload(t *testing.T) {
	r := httptest.NewRequest("POST", "/hooks/in?x=1&x=2&y=z", nil)
	r.Header.Add("X-Tag", "a")
	r.Header.Add("X-Tag", "b")
	r.Header.Set("Content-Type", "application/vnd.api+json; charset=utf-8")
	raw, err := webhookPayload(r, []byte(`{"id": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if p["method"] != "POST" || p["path"] != "/hooks/in" {
		t.Errorf("method/path: %v", p)
	}
	if q := p["query"].(map[string]any); q["x"] != "1, 2" || q["y"] != "z" {
		t.Errorf("query: %v", q)
	}
	if h := p["headers"].(map[string]any); h["X-Tag"] != "a, b" {
		t.Errorf("headers: %v", h)
	}
	if b, ok := p["body"].(map[string]any); !ok || b["id"] != float64(7) {
		t.Errorf("a JSON body was not parsed: %v", p["body"])
	}

	r = httptest.NewRequest("POST", "/hooks/in", nil)
	r.Header.Set("Content-Type", "text/plain")
	raw, _ = webhookPayload(r, []byte(`{"id": 7}`))
	_ = json.Unmarshal(raw, &p)
	if p["body"] != `{"id": 7}` {
		t.Errorf("a text body is not the string: %v", p["body"])
	}

	r = httptest.NewRequest("POST", "/hooks/in", nil)
	r.Header.Set("Content-Type", "application/json")
	if _, err := webhookPayload(r, []byte(`{"id": `)); err == nil {
		t.Error("broken JSON with a JSON media type was accepted")
	}
}

func TestGateQueuesInOrderAndHandsSlotsOver(t *testing.T) {
	g := &gate{}
	g.setLimit(1)
	rel1 := g.admit(context.Background())
	if !busy(g) {
		t.Fatal("a full gate is not busy")
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	releases := make(chan func(), 2)
	for i := 2; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel := g.admit(context.Background())
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			releases <- rel
		}()
		waitFor(t, func() bool { return g.depth() == i-1 })
	}
	rel1()
	rel1() // a second release of the same admission is a no-op
	(<-releases)()
	(<-releases)()
	wg.Wait()
	if len(order) != 2 || order[0] != 2 || order[1] != 3 {
		t.Fatalf("admitted in order %v, want [2 3]", order)
	}
	if busy(g) || g.depth() != 0 {
		t.Fatalf("busy %v depth %d after every release", busy(g), g.depth())
	}
}

func TestGateCancelledWaiterHoldsNoSlot(t *testing.T) {
	g := &gate{}
	g.setLimit(1)
	rel := g.admit(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan func())
	go func() { done <- g.admit(ctx) }()
	waitFor(t, func() bool { return g.depth() == 1 })
	cancel()
	(<-done)()
	rel()
	if busy(g) {
		t.Fatal("a cancelled waiter kept a slot")
	}
}

func TestParkedIndexResumesWhenDue(t *testing.T) {
	var mu sync.Mutex
	var got []string
	p := newParkedIndex(func(id, wf string) {
		mu.Lock()
		got = append(got, id+"/"+wf)
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	now := time.Now()
	p.add("late", "w", now.Add(300*time.Millisecond))
	p.add("early", "w", now.Add(100*time.Millisecond))
	p.add("never", "w", time.Time{})
	p.add("removed", "w", now.Add(50*time.Millisecond))
	p.remove("removed")
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	cancel()
	<-done
	if got[0] != "early/w" || got[1] != "late/w" {
		t.Fatalf("resumed %v, want [early/w late/w]", got)
	}
	if p.len() != 1 || !p.remove("never") {
		t.Fatal("the run without a deadline left the index")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// busy reports whether a new run would have to wait.
func busy(g *gate) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit > 0 && (g.running >= g.limit || len(g.queue) > 0)
}
