package hostabi

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// continueResponse is the response task.continue with progress and delay.
func continueResponse(progress float64, delay uint64) *cval {
	var rec cval
	f := setRecord(&rec, "state", "output", "progress", "delay-ms")
	setString(f[0], `{"page":2}`)
	setString(f[1], `null`)
	setF64(f[2], progress)
	setU64(f[3], delay)
	var inner, outer cval
	setCase(&inner, "continue", &rec)
	setCase(&outer, "task", &inner)
	return &outer
}

// errorResponse is the response task.error of kind with message and a backoff hint.
func errorResponse(kind, message string, hint uint64) *cval {
	var rec cval
	f := setRecord(&rec, "kind", "message", "backoff-hint-ms", "partial-output")
	setEnum(f[0], kind)
	setString(f[1], message)
	var h cval
	setU64(&h, hint)
	setOption(f[2], &h)
	setOption(f[3], nil)
	var inner, outer cval
	setCase(&inner, "error", &rec)
	setCase(&outer, "task", &inner)
	return &outer
}

// TestLiftEdgeValues: values the world allows but Go's types do not hold as they are — a u64
// delay past int64, a NaN progress, an empty error message — are answered sensibly: clamped
// to the longest delay, refused naming the field, given a message that says what happened.
func TestLiftEdgeValues(t *testing.T) {
	lift := func(v *cval) (map[string]any, error) {
		t.Helper()
		defer freeVal(v)
		resp, err := liftResponse(v)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(resp.JSON, &doc); err != nil {
			t.Fatalf("the lifted answer is not JSON: %v", err)
		}
		return doc, nil
	}
	longest := float64(math.MaxInt64 / 1_000_000)
	doc, err := lift(continueResponse(0.5, math.MaxUint64))
	if err != nil || doc["delay_ms"] != longest {
		t.Errorf("a delay of 2^64-1 ms: %v, %v; want it clamped to %v", doc, err, longest)
	}
	for _, p := range []float64{math.NaN(), math.Inf(1)} {
		if _, err := lift(continueResponse(p, 0)); err == nil || !strings.Contains(err.Error(), "continue-result.progress is") {
			t.Errorf("progress %v: %v; want a refusal naming the field", p, err)
		}
	}
	doc, err = lift(errorResponse("retryable", "", math.MaxUint64))
	if err != nil || doc["message"] != "the component answered a retryable error without a message" || doc["backoff_hint_ms"] != longest {
		t.Errorf("an error without a message and a huge hint: %v, %v", doc, err)
	}
}
