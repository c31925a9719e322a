package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/plugin/plugintest"
)

// rogueWAT is fuscia/rogue, a component in WAT with three tasks that tell themselves apart by
// the first letter of the task name, at a fixed offset of the request ({"kind":"task","name":"…):
// "liar" answers {"count":"seven"}, which breaks its output_schema; "honest" answers
// {"count":7}; "greedy" asks for 1000 pages of memory (past its 4 MiB max_memory), ignores the
// -1 and answers like honest.
func rogueWAT(t *testing.T) []byte {
	t.Helper()
	const liar, honest = `{"type":"success","output":{"count":"seven"}}`, `{"type":"success","output":{"count":7}}`
	packed := func(ptr, n int) string { return fmt.Sprintf("(i64.const %d)", int64(ptr)<<32|int64(n)) }
	wasm, err := wasmtime.Wat2Wasm(fmt.Sprintf(`(module (memory (export "memory") 1)
  (data (i32.const 16) %q)
  (data (i32.const 256) %q)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "fuscia_call") (param $p i32) (param $n i32) (result i64)
    (local $c i32)
    (local.set $c (i32.load8_u (i32.add (local.get $p) (i32.const 23))))
    (if (i32.eq (local.get $c) (i32.const 0x67)) (then (drop (memory.grow (i32.const 1000)))))
    (if (result i64) (i32.eq (local.get $c) (i32.const 0x6c)) (then %s) (else %s))))`,
		liar, honest, packed(16, len(liar)), packed(256, len(honest))))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// TestComponentContractE2E: through the binary, a component's output that breaks its
// output_schema fails the node fatal at once (retry configured), naming the component, its
// version and the JSON Pointer; a conforming one passes; a guest that ignores a denied
// memory.grow fails fatal naming max_memory.
func TestComponentContractE2E(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(t.TempDir(), "rogue")
	const shape = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(`{"name":"fuscia/rogue","version":"1.0.0","abi":1,"digest":"",
  "capabilities":{"allowed_hosts":[],"allowed_paths":[]},
  "limits":{"max_memory":"4MiB"},
  "tasks":{"liar":{"output_schema":`+shape+`},"honest":{"output_schema":`+shape+`},"greedy":{"output_schema":`+shape+`}}}`), 0o644)
	writeFile(t, filepath.Join(dir, "component.wasm"), rogueWAT(t), 0o644)
	crInstallDir(t, h, "rogue", dir)
	f := h.write("rogue.fsc.hcl", `workflow "rogue" {}

component "rogue" {
  source = "fuscia/rogue"
}

task "liar" {
  uses          = component.rogue.liar
  fail_workflow = false
  retry {
    attempts      = 3
    initial_delay = "10ms"
  }
}

task "greedy" {
  uses          = component.rogue.greedy
  fail_workflow = false
  retry {
    attempts      = 3
    initial_delay = "10ms"
  }
}

task "honest" {
  uses = component.rogue.honest
}

output "count" {
  value = task.honest.output.count
}
`)
	id, _ := crApply(t, h, 3, f) // 3: completed with errors
	ex := crShow(t, h, id)
	liar := crNodeOf(t, ex, "task.liar")
	if liar.Status != "failed" || liar.Attempts != 1 || liar.Error == nil || liar.Error.Kind != "fatal" {
		t.Fatalf("task.liar: %+v; want failed fatal after 1 attempt", liar)
	}
	wantContains(t, "task.liar's error", liar.Error.Message,
		`component fuscia/rogue@1.0.0 task "liar" produced an output that does not match its output_schema: at /count: must be an integer, got string "seven"`)
	greedy := crNodeOf(t, ex, "task.greedy")
	if greedy.Status != "failed" || greedy.Attempts != 1 || greedy.Error == nil || greedy.Error.Kind != "fatal" {
		t.Fatalf("task.greedy: %+v; want failed fatal after 1 attempt", greedy)
	}
	wantContains(t, "task.greedy's error", greedy.Error.Message, "fuscia/rogue@1.0.0", "memory limit of 4 MiB (max_memory) exceeded")
	if n := crNodeOf(t, ex, "task.honest"); n.Status != "succeeded" {
		t.Fatalf("task.honest: %+v", n)
	}
	jsonEqual(t, "outputs", ex.Outputs["count"], `7`)
}

// TestPluginOutputSchemaE2E: the same for a plugin, through the binary and a real plugin
// process: the echo plugin's "shaped" task declares {"count": integer}; its "sparse" task has
// the output schema the SDK derives from a Go struct, and answers that struct with nil fields.
func TestPluginOutputSchemaE2E(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installEchoPlugin(t, filepath.Join(h.dir, "plugins"))
	f := h.write("shaped.fsc.hcl", `workflow "shaped" {}

plugin "echo" {
  source = "echo"
}

task "bad" {
  uses          = plugin.echo.shaped
  inputs        = { count = "seven" }
  fail_workflow = false
  retry {
    attempts      = 3
    initial_delay = "10ms"
  }
}

task "good" {
  uses   = plugin.echo.shaped
  inputs = { count = 7 }
}

task "sparse" {
  uses   = plugin.echo.sparse
  inputs = { name = "ada" }
}

output "sparse" {
  value = task.sparse.output
}
`)
	id, _ := crApply(t, h, 3, f) // 3: completed with errors
	ex := crShow(t, h, id)
	bad := crNodeOf(t, ex, "task.bad")
	if bad.Status != "failed" || bad.Attempts != 1 || bad.Error == nil || bad.Error.Kind != "fatal" {
		t.Fatalf("task.bad: %+v; want failed fatal after 1 attempt", bad)
	}
	wantContains(t, "task.bad's error", bad.Error.Message,
		`plugin echo@0.3.0 task "shaped" produced an output that does not match its output_schema: at /count: must be an integer, got string "seven"`)
	if n := crNodeOf(t, ex, "task.good"); n.Status != "succeeded" {
		t.Fatalf("task.good: %+v", n)
	}
	// A typed output whose slice, map and pointer are nil meets the schema the SDK derived
	// from its Go type: encoding/json writes them as null, and the schema says so.
	if n := crNodeOf(t, ex, "task.sparse"); n.Status != "succeeded" {
		t.Fatalf("task.sparse: %s, error %+v", n.Status, n.Error)
	}
	jsonEqual(t, "outputs.sparse", ex.Outputs["sparse"], `{"name":"ada","tags":null,"labels":null,"parent":null}`)
}

// TestShellOutputOverLimitE2E: a command that prints more than the node output limit holds, as
// text (`yes`) or as control bytes that JSON writes six bytes each, succeeds through the real
// shell plugin with what fits and truncated = true, instead of failing data_limit_exceeded.
func TestShellOutputOverLimitE2E(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := plugintest.Build(t, "plugins/shell", "shell")
	path := plugintest.Install(t, bin, filepath.Join(h.dir, "plugins"), "fuscia-plugin-shell_v0.3.0")
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	f := h.write("big.fsc.hcl", `workflow "big" {}

plugin "shell" {
  source = "shell"
}

task "yes" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/sh", args = ["-c", "yes | head -c 12000000"] }
}

task "control" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/sh", args = ["-c", "head -c 12000000 /dev/zero | tr '\\000' '\\001'"] }
}

task "both" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/sh", args = ["-c", "yes | head -c 12000000; head -c 12000000 /dev/zero >&2"] }
}

output "truncated" {
  value = [task.yes.output.truncated, task.control.output.truncated, task.both.output.truncated]
}
`)
	id, r := crApply(t, h, 0, f)
	wantContains(t, "apply", r.stdout, "Execution "+id+" succeeded")
	ex := crShow(t, h, id)
	jsonEqual(t, "outputs", ex.Outputs["truncated"], `[true, true, true]`)
	for _, addr := range []string{"task.yes", "task.control", "task.both"} {
		n := crNodeOf(t, ex, addr)
		if n.Status != "succeeded" || len(n.Output) == 0 {
			t.Fatalf("%s: %s, error %+v", addr, n.Status, n.Error)
		}
		if len(n.Output) > 10<<20 {
			t.Errorf("%s: the output is %d bytes of JSON, over 10 MiB", addr, len(n.Output))
		}
	}
	if out := string(crNodeOf(t, ex, "task.yes").Output); !strings.Contains(out, `"stdout":"y\ny\ny\n`) && !strings.Contains(out, `"stdout": "y\ny\ny\n`) {
		t.Errorf("task.yes: stdout does not start with yes's lines: %.80s", out)
	}
}
