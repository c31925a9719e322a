package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
)

// TestInstanceLabel: logs and the progress of apply name an instance the way task ids do,
// one bracket per index, whatever the depth.
func TestInstanceLabel(t *testing.T) {
	for _, tc := range []struct {
		node  string
		index []int
		want  string
	}{
		{"task.fetch", nil, "task.fetch"},
		{"task.send_all", []int{3}, "task.send_all[3]"},
		{"loop.notify", []int{0}, "loop.notify[0]"},
		{"loop.notify/task.send", []int{1}, "loop.notify/task.send[1]"},
		{"loop.notify/task.send", []int{1, 2}, "loop.notify/task.send[1][2]"},
		// Not an address this version knows: shown as recorded.
		{"trigger.t", []int{1}, "trigger.t"},
		{"", nil, ""},
	} {
		if got := instanceLabel(tc.node, tc.index); got != tc.want {
			t.Errorf("instanceLabel(%q, %v) = %q; want %q", tc.node, tc.index, got, tc.want)
		}
	}
}

// TestProgressNamesInstances: a retry of an item in an iteration is reported under the
// instance's address.
func TestProgressNamesInstances(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	at := time.Now().Add(time.Second)
	p.event(engine.Event{Type: engine.EventNodeRetrying, Node: "loop.l/task.x", Index: []int{2, 5}, Attempt: 1, RetryAt: &at})
	p.event(engine.Event{Type: engine.EventNodeLog, Node: "task.y", Index: []int{7}, Level: "warn", Message: "slow"})
	got := out.String()
	for _, want := range []string{"loop.l/task.x[2][5]: attempt 1 failed", "task.y[7]: [warn] slow"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
}
