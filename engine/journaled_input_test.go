package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

const inputsWorkflow = `
workflow "in" {}
secret "token" { env = "IN_TOKEN" }
variable "big" { type = string }
task "plain" {
  uses   = builtin.transform
  inputs = { a = 1, b = "x" }
}
task "secret" {
  uses   = builtin.transform
  inputs = { user = "u", token = secret.token, nested = { auth = "Bearer ${secret.token}" }, keep = task.plain.output.b }
}
task "big" {
  uses   = builtin.transform
  inputs = { s = var.big }
}
task "each" {
  uses     = builtin.transform
  for_each = ["p", "q"]
  inputs   = { v = each.value }
}
`

// TestAttemptStartedJournalsInput: each attempt_started entry holds the task's input, for the
// API's node view: as the task got it when nothing in it is sensitive; with the sensitive parts
// as {"sensitive": true} when some are, as a sensitive output is journaled, so that the secret
// is nowhere in the store; as {"truncated": true, "bytes": n} when over 64 KiB.
func TestAttemptStartedJournalsInput(t *testing.T) {
	te := newTestEnv(t)
	const token = "tok-3f9a-secret-value"
	te.env["IN_TOKEN"] = token
	big := strings.Repeat("x", maxJournaledInput)
	ex := te.apply(inputsWorkflow, StartOptions{}, "big="+big)
	wantRun(t, ex, "succeeded")
	inputs := map[string]string{}
	err := te.store.Entries(ex.ID, 0, func(e journal.Entry) error {
		if e.Type == journal.AttemptStarted {
			inputs[e.Node+fmt.Sprint(e.Index)] = string(e.Input)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "plain", json.RawMessage(inputs["task.plain[]"]), `{"a": 1, "b": "x"}`)
	wantJSON(t, "secret", json.RawMessage(inputs["task.secret[]"]), `{"user": "u", "token": {"sensitive": true}, "nested": {"auth": {"sensitive": true}}, "keep": "x"}`)
	wantJSON(t, "big", json.RawMessage(inputs["task.big[]"]), fmt.Sprintf(`{"truncated": true, "bytes": %d}`, len(`{"s":""}`)+len(big)))
	wantJSON(t, "each[1]", json.RawMessage(inputs["task.each[1]"]), `{"v": "q"}`)
	te.closeStore()
	assertStoreClean(t, te.dir, secretForms(token))
}
