;; A component of world fuscia:host/component@1.0.0, as wit-component builds one: it imports
;; fuscia:host/host@1.0.0 (it calls log), fuscia:host/types@1.0.0 and the types request and
;; response (the world's `use`), and exports call, which logs "called" and answers a task with
;; {"type": "success", "output": {}}. The core module $main is the whole guest; the rest is what
;; `jco embed` + `jco new` wrapped around it (README.md). It fits the world.
(component
  (type $ty-fuscia:host/host@1.0.0 (;0;)
    (instance
      (type (;0;) (enum "debug" "info" "warn" "error"))
      (export (;1;) "log-level" (type (eq 0)))
      (type (;2;) (func (param "level" 1) (param "message" string)))
      (export (;0;) "log" (func (type 2)))
    )
  )
  (import "fuscia:host/host@1.0.0" (instance $fuscia:host/host@1.0.0 (;0;) (type $ty-fuscia:host/host@1.0.0)))
  (type $ty-fuscia:host/types@1.0.0 (;1;)
    (instance
      (type (;0;) string)
      (export (;1;) "json" (type (eq 0)))
      (type (;2;) (tuple string string))
      (type (;3;) (list 2))
      (type (;4;) (list u8))
      (type (;5;) (record (field "method" string) (field "path" string) (field "query" 3) (field "headers" 3) (field "body" 4)))
      (export (;6;) "webhook-request" (type (eq 5)))
      (type (;7;) (variant (case "poll") (case "webhook" 6)))
      (export (;8;) "event" (type (eq 7)))
      (type (;9;) (variant (case "task" 1) (case "trigger" 8)))
      (export (;10;) "target" (type (eq 9)))
      (type (;11;) (option u32))
      (type (;12;) (record (field "execution-id" string) (field "workflow" string) (field "node" string) (field "task-id" string) (field "attempt" u32) (field "iteration" 11)))
      (export (;13;) "call-context" (type (eq 12)))
      (type (;14;) (option 1))
      (type (;15;) (record (field "name" string) (field "target" 10) (field "context" 13) (field "state" 14)))
      (export (;16;) "request" (type (eq 15)))
      (type (;17;) (record (field "selected" string) (field "output" 1)))
      (export (;18;) "branch-result" (type (eq 17)))
      (type (;19;) (record (field "state" 1) (field "output" 1) (field "progress" f64) (field "delay-ms" u64)))
      (export (;20;) "continue-result" (type (eq 19)))
      (type (;21;) (enum "retryable" "fatal" "validation"))
      (export (;22;) "error-kind" (type (eq 21)))
      (type (;23;) (option u64))
      (type (;24;) (record (field "kind" 22) (field "message" string) (field "backoff-hint-ms" 23) (field "partial-output" 14)))
      (export (;25;) "call-error" (type (eq 24)))
      (type (;26;) (variant (case "success" 1) (case "skip" string) (case "branch" 18) (case "continue" 20) (case "error" 25)))
      (export (;27;) "task-response" (type (eq 26)))
      (type (;28;) (variant (case "completed" 1) (case "pending") (case "error" 25)))
      (export (;29;) "trigger-response" (type (eq 28)))
      (type (;30;) (variant (case "task" 27) (case "trigger" 29)))
      (export (;31;) "response" (type (eq 30)))
    )
  )
  (import "fuscia:host/types@1.0.0" (instance $fuscia:host/types@1.0.0 (;1;) (type $ty-fuscia:host/types@1.0.0)))
  (alias export $fuscia:host/types@1.0.0 "request" (type $request (;2;)))
  (import "request" (type $"#type3 request" (@name "request") (;3;) (eq $request)))
  (alias export $fuscia:host/types@1.0.0 "response" (type $response (;4;)))
  (import "response" (type $"#type5 response" (@name "response") (;5;) (eq $response)))
  (core module $main (;0;)
    (type (;0;) (func (param i32 i32 i32)))
    (type (;1;) (func (param i32) (result i32)))
    (type (;2;) (func (param i32 i32 i32 i32) (result i32)))
    (import "fuscia:host/host@1.0.0" "log" (func $log (;0;) (type 0)))
    (memory (;0;) 1)
    (global $heap (;0;) (mut i32) i32.const 4096)
    (export "memory" (memory 0))
    (export "call" (func 1))
    (export "cabi_realloc" (func 2))
    (func (;1;) (type 1) (param i32) (result i32)
      i32.const 1
      i32.const 72
      i32.const 6
      call $log
      i32.const 1024
    )
    (func (;2;) (type 2) (param $old i32) (param $oldlen i32) (param $align i32) (param $len i32) (result i32)
      (local $p i32)
      global.get $heap
      local.get $align
      i32.const 1
      i32.sub
      i32.add
      local.get $align
      i32.const 1
      i32.sub
      i32.const -1
      i32.xor
      i32.and
      local.set $p
      local.get $p
      local.get $len
      i32.add
      global.set $heap
      global.get $heap
      memory.size
      i32.const 16
      i32.shl
      i32.gt_u
      if ;; label = @1
        i32.const 1
        memory.grow
        drop
      end
      local.get $p
    )
    (data (;0;) (i32.const 64) "{}")
    (data (;1;) (i32.const 72) "called")
    (data (;2;) (i32.const 1032) "\00")
    (data (;3;) (i32.const 1040) "@\00\00\00\02\00\00\00")
  )
  (core module $wit-component-shim-module (;1;)
    (type (;0;) (func (param i32 i32 i32)))
    (table (;0;) 1 1 funcref)
    (export "0" (func 0))
    (export "$imports" (table 0))
    (func (;0;) (type 0) (param i32 i32 i32)
      local.get 0
      local.get 1
      local.get 2
      i32.const 0
      call_indirect (type 0)
    )
  )
  (core instance $wit-component-shim-instance (;0;) (instantiate $wit-component-shim-module))
  (alias core export $wit-component-shim-instance "0" (core func $indirect-fuscia:host/host@1.0.0-log (;0;)))
  (core instance $fuscia:host/host@1.0.0 (;1;)
    (export "log" (func $indirect-fuscia:host/host@1.0.0-log))
  )
  (core instance $main (;2;) (instantiate $main
      (with "fuscia:host/host@1.0.0" (instance $fuscia:host/host@1.0.0))
    )
  )
  (alias core export $main "memory" (core memory $memory (;0;)))
  (core module $wit-component-fixup (;2;)
    (type (;0;) (func (param i32 i32 i32)))
    (import "actual" "0" (func (;0;) (type 0)))
    (import "shim" "$imports" (table (;0;) 1 1 funcref))
    (elem (;0;) (i32.const 0) func 0)
  )
  (alias export $fuscia:host/host@1.0.0 "log" (func $log (;0;)))
  (core func $"#core-func1 indirect-fuscia:host/host@1.0.0-log" (@name "indirect-fuscia:host/host@1.0.0-log") (;1;) (canon lower (func $log) (memory $memory) string-encoding=utf8))
  (core instance $actual (;3;)
    (export "0" (func $"#core-func1 indirect-fuscia:host/host@1.0.0-log"))
  )
  (core instance $fixup (;4;) (instantiate $wit-component-fixup
      (with "actual" (instance $actual))
      (with "shim" (instance $wit-component-shim-instance))
    )
  )
  (type (;6;) (func (param "request" $"#type3 request") (result $"#type5 response")))
  (alias core export $main "call" (core func $call (;2;)))
  (alias core export $main "cabi_realloc" (core func $cabi_realloc (;3;)))
  (func $call (;1;) (type 6) (canon lift (core func $call) (memory $memory) (realloc $cabi_realloc) string-encoding=utf8))
  (export $"#func2 call" (@name "call") (;2;) "call" (func $call))
)

