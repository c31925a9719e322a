// Command ticker is the fuscia/ticker component: a poll trigger that fires on every other
// poll, counting in the trigger's key-value scope, and that also accepts webhook requests.
//
// Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o component.wasm .
package main

import (
	"strconv"

	"github.com/fuscia/fuscia/hostabi/guest"
)

// main is not called: the component is a WASI reactor, and its handlers are registered in init.
func main() {}

func init() {
	guest.Trigger("tick", tick)
	guest.Task("noop", noop)
}

// tick counts polls in the trigger's KV under "n" and starts a run on every odd one. Attached
// to a webhook, it starts a run with the request, and refuses an empty body.
func tick(_ guest.Context, ev guest.Event) (guest.TriggerResult, error) {
	switch ev.Type {
	case guest.EventPoll:
		n := int64(0)
		if s, ok := guest.KV.Get("n"); ok {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return guest.TriggerResult{}, guest.Fatal("kv n holds %q, not a decimal integer", s)
			}
			n = v
		}
		n++
		guest.KV.Set("n", strconv.FormatInt(n, 10))
		if n%2 == 1 {
			guest.Debugf("poll %d: completed", n)
			return guest.Completed(map[string]int64{"n": n}), nil
		}
		guest.Debugf("poll %d: pending", n)
		return guest.Pending(), nil
	case guest.EventWebhook:
		r := ev.Request
		if len(r.Body) == 0 {
			return guest.TriggerResult{}, guest.Validation("the request has no body")
		}
		return guest.Completed(map[string]string{"method": r.Method, "path": r.Path, "body": string(r.Body)}), nil
	}
	return guest.TriggerResult{}, guest.Validation("tick does not handle %q events", ev.Type)
}

// noop does nothing and succeeds.
func noop(guest.Context, struct{}) (guest.Result, error) {
	return guest.Success(struct{}{}), nil
}
