;; minimal.wat, which also hands the host interface to a nested component: refused (argflow.go).
;; A minimal component of world fuscia:host/component@1.0.0, written by hand in the component
;; model's text format (wasmtime compiles it from text; no toolchain needed). Its `call` answers
;; success with the task's input, after doing what the first letter of the task's name asks:
;;   t  trap (unreachable)        l  loop forever (timeouts, cancellation)
;;   g  grow memory until refused, then answer anyway (the memory cap must fail the attempt)
;;   w  write the input to the node's log through the host's `log`
;;   k  call kv-set with a value that lies outside linear memory (bad host-import arguments)
;; Canonical ABI layouts used (docs/components.md): the request record is passed by pointer;
;; its name string is at +0 (ptr, len), the target variant's case byte at +8 and a task's input
;; string at +12 (ptr, len). The response is returned by pointer: case byte 0 (task) at +0, the
;; task-response's case byte 0 (success) at +8, its string at +16 (ptr, len).
(component
  (import "fuscia:host/types@1.0.0" (instance $types
    (type $cc (record (field "execution-id" string) (field "workflow" string) (field "node" string)
      (field "task-id" string) (field "attempt" u32) (field "iteration" (option u32))))
    (export "call-context" (type $cc-e (eq $cc)))
    (type $wr (record (field "method" string) (field "path" string)
      (field "query" (list (tuple string string))) (field "headers" (list (tuple string string)))
      (field "body" (list u8))))
    (export "webhook-request" (type $wr-e (eq $wr)))
    (type $ev (variant (case "poll") (case "webhook" $wr-e)))
    (export "event" (type $ev-e (eq $ev)))
    (type $tg (variant (case "task" string) (case "trigger" $ev-e)))
    (export "target" (type $tg-e (eq $tg)))
    (type $rq (record (field "name" string) (field "target" $tg-e) (field "context" $cc-e)
      (field "state" (option string))))
    (export "request" (type $rq-e (eq $rq)))
    (type $ek (enum "retryable" "fatal" "validation"))
    (export "error-kind" (type $ek-e (eq $ek)))
    (type $ce (record (field "kind" $ek-e) (field "message" string)
      (field "backoff-hint-ms" (option u64)) (field "partial-output" (option string))))
    (export "call-error" (type $ce-e (eq $ce)))
    (type $br (record (field "selected" string) (field "output" string)))
    (export "branch-result" (type $br-e (eq $br)))
    (type $co (record (field "state" string) (field "output" string) (field "progress" f64)
      (field "delay-ms" u64)))
    (export "continue-result" (type $co-e (eq $co)))
    (type $tr (variant (case "success" string) (case "skip" string) (case "branch" $br-e)
      (case "continue" $co-e) (case "error" $ce-e)))
    (export "task-response" (type $tr-e (eq $tr)))
    (type $gr (variant (case "completed" string) (case "pending") (case "error" $ce-e)))
    (export "trigger-response" (type $gr-e (eq $gr)))
    (type $rs (variant (case "task" $tr-e) (case "trigger" $gr-e)))
    (export "response" (type $rs-e (eq $rs)))
  ))
  (alias export $types "request" (type $request))
  (alias export $types "response" (type $response))

  (import "fuscia:host/host@1.0.0" (instance $host
    (type $ll (enum "debug" "info" "warn" "error"))
    (export "log-level" (type $ll-e (eq $ll)))
    (export "log" (func (param "level" $ll-e) (param "message" string)))
    (export "kv-set" (func (param "key" string) (param "value" (list u8))))
  ))
  (alias export $host "log" (func $log))
  (alias export $host "kv-set" (func $kv-set))

  ;; Memory and a bump allocator, in a module of their own so that the host functions can be
  ;; lowered with them before the main module is instantiated.
  (core module $Mem
    (memory (export "mem") 1)
    (global $heap (mut i32) (i32.const 4096))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32) (local $end i32)
      (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
      (local.set $end (i32.add (local.get $p) (local.get 3)))
      (block $ok
        (loop $more
          (br_if $ok (i32.le_u (local.get $end) (i32.shl (memory.size) (i32.const 16))))
          (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
          (br $more)))
      (global.set $heap (local.get $end))
      (local.get $p)))
  (core instance $mem (instantiate $Mem))

  (core func $log-core (canon lower (func $log) (memory $mem "mem") (realloc (func $mem "realloc"))))
  (core func $kv-set-core (canon lower (func $kv-set) (memory $mem "mem") (realloc (func $mem "realloc"))))
  (core instance $host-core (export "log" (func $log-core)) (export "kv-set" (func $kv-set-core)))

  (core module $Main
    (import "m" "mem" (memory 1))
    (import "host" "log" (func $log (param i32 i32 i32)))
    (import "host" "kv-set" (func $kv-set (param i32 i32 i32 i32)))
    (func (export "call") (param $req i32) (result i32)
      (local $c i32)
      (if (i32.gt_u (i32.load offset=4 (local.get $req)) (i32.const 0))
        (then (local.set $c (i32.load8_u (i32.load (local.get $req))))))
      (if (i32.eq (local.get $c) (i32.const 116)) (then unreachable))
      (if (i32.eq (local.get $c) (i32.const 108)) (then (loop $forever (br $forever))))
      (if (i32.eq (local.get $c) (i32.const 103))
        (then (block $done (loop $grow
          (br_if $done (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
          (br $grow)))))
      (if (i32.eq (local.get $c) (i32.const 119))
        (then (call $log (i32.const 1) (i32.load offset=12 (local.get $req)) (i32.load offset=16 (local.get $req)))))
      (if (i32.eq (local.get $c) (i32.const 107))
        (then (call $kv-set (i32.const 0) (i32.const 0) (i32.const 0xfffff000) (i32.const 65536))))
      (i32.store8 (i32.const 64) (i32.const 0))
      (i32.store8 (i32.const 72) (i32.const 0))
      (i32.store (i32.const 80) (i32.load offset=12 (local.get $req)))
      (i32.store (i32.const 84) (i32.load offset=16 (local.get $req)))
      (i32.const 64)))
  (core instance $main (instantiate $Main (with "m" (instance $mem)) (with "host" (instance $host-core))))

  (func $call (param "request" $request) (result $response)
    (canon lift (core func $main "call") (memory $mem "mem") (realloc (func $mem "realloc"))))
  (export "call" (func $call))
  (component $Inner
    (import "h" (instance
      (export "kv-set" (func (param "key" string) (param "value" (list u8)))))))
  (instance (instantiate $Inner (with "h" (instance $host))))
)
