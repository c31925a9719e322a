// Command fuscia-plugin-greeter is the example Fuscia plugin provider, written with plugin/sdk.
// Its tasks greet, and misbehave on purpose (fail, crash, hang) so that Fuscia's handling of
// plugin errors, crashes and timeouts can be tried and tested; count answers with continue
// results, and the tick trigger counts its own polls. See README.md.
//
// Build and install it with
//
//	go build -ldflags "-s -w" -o ~/.fuscia/plugins/fuscia-plugin-greeter_v0.1.0 .
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/fuscia/fuscia/plugin/sdk"
)

func main() {
	// The handlers do little work each: one thread makes a call's round trip shorter.
	sdk.OneThread()
	sdk.Serve(sdk.Plugin{
		Name:    "greeter",
		Version: "0.1.0",
		Tasks: []sdk.TaskDef{
			sdk.Task("greet", greet,
				sdk.Description("Greets someone, and counts the greetings of the execution."),
				sdk.Validate(validateGreet)),
			sdk.Task("fail", fail, sdk.Description("Fails with the error kind and message asked for.")),
			sdk.Task("crash", crash,
				sdk.Description("Kills the plugin process (exit status 3): always, or only the first time in an execution.")),
			sdk.Task("hang", hang, sdk.Description("Sleeps for seconds (default 3600), ignoring its deadline.")),
			sdk.TaskWithResult("count", count,
				sdk.Description("Answers continue until its state says 3 calls, then succeeds.")),
		},
		Triggers: []sdk.TriggerDef{
			sdk.Trigger("tick", tick, sdk.Description("Starts a run on every poll, with the poll's number.")),
		},
	})
}

// greetInput is task greet's input; greeting is optional (omitempty), name is required.
type greetInput struct {
	Name     string `json:"name" jsonschema:"description=Who to greet"`
	Greeting string `json:"greeting,omitempty" jsonschema:"description=The greeting word (default Hello)"`
}

type greetOutput struct {
	Message string `json:"message"`
}

// greetingsKey counts the greetings of an execution in its KV, which every task of the run
// shares.
const greetingsKey = "greetings"

func greet(ctx context.Context, call *sdk.Call, in greetInput) (greetOutput, error) {
	greeting := in.Greeting
	if greeting == "" {
		greeting = "Hello"
	}
	// Read, add one, write: two greet tasks running at once may count one greeting; an
	// example can live with that.
	kv := call.KV()
	n := 0
	if v, ok, err := kv.Get(ctx, greetingsKey); err != nil {
		return greetOutput{}, err // a host error is retryable
	} else if ok {
		if n, err = strconv.Atoi(string(v)); err != nil {
			return greetOutput{}, sdk.Fatal("KV %q holds %q, not a number", greetingsKey, v)
		}
	}
	n++
	if err := kv.Set(ctx, greetingsKey, []byte(strconv.Itoa(n))); err != nil {
		return greetOutput{}, err
	}
	call.Info("greeting %s (greeting %d of this execution)", in.Name, n)
	return greetOutput{Message: fmt.Sprintf("%s, %s!", greeting, in.Name)}, nil
}

// validateGreet refuses an empty name at plan time. A name computed from another node's output
// is unknown then (null, so "" here): it is checked when the task runs instead.
func validateGreet(_ context.Context, in greetInput, unknown sdk.Unknowns) []sdk.Diagnostic {
	if in.Name == "" && !unknown.Has("/name") {
		return []sdk.Diagnostic{{
			Summary: "name must not be empty",
			Detail:  "greet needs someone to greet.",
			Path:    "/name",
		}}
	}
	return nil
}

type failInput struct {
	Kind    string `json:"kind" jsonschema:"enum=retryable,enum=fatal,enum=validation"`
	Message string `json:"message"`
}

func fail(_ context.Context, _ *sdk.Call, in failInput) (any, error) {
	switch in.Kind {
	case "retryable":
		return nil, sdk.Retryable(in.Message, 0)
	case "fatal":
		return nil, sdk.Fatal("%s", in.Message)
	case "validation":
		return nil, sdk.Validation("%s", in.Message)
	}
	return nil, sdk.Validation("kind must be retryable, fatal or validation, not %q", in.Kind)
}

type crashInput struct {
	Always bool `json:"always,omitempty"`
}

// crashedKey marks, in the execution's KV, that crash has crashed once.
const crashedKey = "crashed"

// crash kills the process, which Fuscia sees as plugin_crashed (retryable) and answers by
// starting the plugin again for the next attempt. Without always, only the first attempt in an
// execution crashes: it sets crashedKey first, so the retry on the new process succeeds.
func crash(ctx context.Context, call *sdk.Call, in crashInput) (map[string]any, error) {
	if !in.Always {
		_, crashed, err := call.KV().Get(ctx, crashedKey)
		if err != nil {
			return nil, err
		}
		if crashed {
			return map[string]any{"crashed_before": true, "attempt": call.Attempt}, nil
		}
		if err := call.KV().Set(ctx, crashedKey, []byte("1")); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(os.Stderr, "greeter: crash task exits on purpose (attempt %d)\n", call.Attempt)
	os.Exit(3)
	return nil, errors.New("unreachable")
}

type hangInput struct {
	Seconds *float64 `json:"seconds,omitempty" jsonschema:"description=How long to sleep (default 3600)"`
}

// hang sleeps without looking at ctx, like a handler stuck in a system call: Fuscia gives up
// at the deadline, asks Running a grace period later, and kills the plugin.
func hang(_ context.Context, call *sdk.Call, in hangInput) (map[string]any, error) {
	seconds := 3600.0
	if in.Seconds != nil {
		seconds = *in.Seconds
	}
	call.Info("hanging for %gs, whatever the deadline", seconds)
	time.Sleep(time.Duration(seconds * float64(time.Second)))
	return map[string]any{"slept_seconds": seconds}, nil
}

type countInput struct {
	DelayMS int `json:"delay_ms,omitempty" jsonschema:"description=Delay before each next call, in milliseconds"`
}

// countState is count's continue state: how many calls answered continue so far.
type countState struct {
	Calls int `json:"calls"`
}

// count answers continue with state {"calls": 1}, {"calls": 2}, {"calls": 3}, and then, called
// with a state that says 3 calls, succeeds with {"calls": 3}: four calls in one attempt.
func count(_ context.Context, call *sdk.Call, in countInput) (sdk.Result, error) {
	var st countState
	if _, err := call.DecodeState(&st); err != nil {
		return sdk.Result{}, sdk.Fatal("%v", err)
	}
	if st.Calls >= 3 {
		return sdk.Success(map[string]int{"calls": st.Calls}), nil
	}
	st.Calls++
	call.Debug("count: call %d continues", st.Calls)
	return sdk.Continue(st, map[string]int{"calls": st.Calls}, float64(st.Calls)/3,
		time.Duration(in.DelayMS)*time.Millisecond), nil
}

// tickKey holds the number of the last tick in the trigger's KV, which is kept across
// invocations (and plugin restarts).
const tickKey = "n"

func tick(ctx context.Context, call *sdk.Call, _ sdk.Event) (sdk.TriggerResult, error) {
	kv := call.KV()
	n := 0
	if v, ok, err := kv.Get(ctx, tickKey); err != nil {
		return sdk.Pending(), err
	} else if ok {
		if n, err = strconv.Atoi(string(v)); err != nil {
			return sdk.Pending(), sdk.Fatal("trigger KV %q holds %q, not a number", tickKey, v)
		}
	}
	n++
	if err := kv.Set(ctx, tickKey, []byte(strconv.Itoa(n))); err != nil {
		return sdk.Pending(), err
	}
	call.Debug("tick %d", n)
	return sdk.Completed(map[string]int{"n": n}), nil
}
