package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/schema"
)

type sleepInput struct {
	Duration string `json:"duration"`
}

// sleep waits for the input's duration, or until ctx ends.
func sleep(ctx context.Context, req Request) outcome.Result {
	var in sleepInput
	if bad := decodeInput("sleep", req.Input, &in); bad != nil {
		return *bad
	}
	d, err := schema.ParseDuration(in.Duration)
	if err != nil {
		return outcome.Fail(outcome.Validation, "builtin.sleep: duration: %v", err)
	}
	start := time.Now()
	// A timer rather than time.Sleep, so that cancellation ends the sleep at once.
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		out := fmt.Appendf(nil, `{"slept":%s}`, strconv.Quote(d.String()))
		return outcome.OK(json.RawMessage(out))
	case <-ctx.Done():
		elapsed := round(time.Since(start))
		return ended(ctx,
			fmt.Sprintf("builtin.sleep: the attempt's deadline passed after %s of the %s sleep (timeout)", elapsed, d),
			fmt.Sprintf("builtin.sleep: cancelled after %s", elapsed))
	}
}
