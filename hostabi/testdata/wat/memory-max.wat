;; A component of world fuscia:host/component@1.0.0 whose core modules declare a maximum for
;; their memories (100 pages, 6400 KiB), for the grow guard of components
;; (hostabi/growguard_component.go): a growth refused within a memory's own maximum is the cap's
;; and fails the attempt; one past it is refused by the module's own declaration and is the
;; guest's to handle. Its `call` does what the first letter of the task's name asks, then answers
;; success with the task's input:
;;   o  memory.grow 200 pages (past its own maximum): must get -1, else it traps
;;   c  memory.grow 70 pages (within its maximum; past a cap of 4 MiB, 64 pages)
;;   w  the same as o, on the 64-bit memory of module $Wide
;;   v  the same as c, on the 64-bit memory of module $Wide
;; The request and response layouts are minimal.wat's. Binary: bin/memory-max.wasm (bin/README.md).
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

  ;; A 64-bit memory of its own, with a declared maximum.
  (core module $Wide
    (memory i64 1 100)
    (func (export "grow") (param i64) (result i64) (memory.grow (local.get 0))))
  (core instance $wide (instantiate $Wide))

  (core module $Main
    (import "wide" "grow" (func $grow64 (param i64) (result i64)))
    (memory (export "mem") 1 100)
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
      (local.get $p))
    (func (export "call") (param $req i32) (result i32)
      (local $c i32)
      (if (i32.gt_u (i32.load offset=4 (local.get $req)) (i32.const 0))
        (then (local.set $c (i32.load8_u (i32.load (local.get $req))))))
      (if (i32.eq (local.get $c) (i32.const 111))
        (then (if (i32.ne (memory.grow (i32.const 200)) (i32.const -1)) (then unreachable))))
      (if (i32.eq (local.get $c) (i32.const 99))
        (then (drop (memory.grow (i32.const 70)))))
      (if (i32.eq (local.get $c) (i32.const 119))
        (then (if (i64.ne (call $grow64 (i64.const 200)) (i64.const -1)) (then unreachable))))
      (if (i32.eq (local.get $c) (i32.const 118))
        (then (drop (call $grow64 (i64.const 70)))))
      (i32.store8 (i32.const 64) (i32.const 0))
      (i32.store8 (i32.const 72) (i32.const 0))
      (i32.store (i32.const 80) (i32.load offset=12 (local.get $req)))
      (i32.store (i32.const 84) (i32.load offset=16 (local.get $req)))
      (i32.const 64)))
  (core instance $main (instantiate $Main (with "wide" (instance $wide))))

  (func $call (param "request" $request) (result $response)
    (canon lift (core func $main "call") (memory $main "mem") (realloc (func $main "realloc"))))
  (export "call" (func $call))
)
