;; A component of world fuscia:host/component@1.0.0 that writes a line to its stdout through
;; wasi:cli/stdout and returns without flushing it: wasmtime's background writer then delivers
;; the line from a thread of its own, possibly after the attempt has ended. Its `call` answers
;; success with the task's input (layouts as in minimal.wat).
(component $C
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


  (import "wasi:io/error@0.2.0" (instance $io-error (export "error" (type (sub resource)))))
  (alias export $io-error "error" (type $error))
  (import "wasi:io/streams@0.2.0" (instance $streams
    (alias outer $C $error (type $err))
    (export "error" (type $err-e (eq $err)))
    (export "output-stream" (type $os (sub resource)))
    (type $se (variant (case "last-operation-failed" (own $err-e)) (case "closed")))
    (export "stream-error" (type $se-e (eq $se)))
    (export "[method]output-stream.write"
      (func (param "self" (borrow $os)) (param "contents" (list u8)) (result (result (error $se-e)))))))
  (alias export $streams "output-stream" (type $output-stream))
  (alias export $streams "[method]output-stream.write" (func $write))
  (import "wasi:cli/stdout@0.2.0" (instance $stdout
    (alias outer $C $output-stream (type $os))
    (export "output-stream" (type $os-e (eq $os)))
    (export "get-stdout" (func (result (own $os-e))))))
  (alias export $stdout "get-stdout" (func $get-stdout))

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

  (core func $get-stdout-core (canon lower (func $get-stdout)))
  (core func $write-core (canon lower (func $write) (memory $mem "mem")))
  (core instance $wasi-core (export "get-stdout" (func $get-stdout-core)) (export "write" (func $write-core)))

  (core module $Main
    (import "m" "mem" (memory 1))
    (import "wasi" "get-stdout" (func $get-stdout (result i32)))
    (import "wasi" "write" (func $write (param i32 i32 i32 i32)))
    (data (i32.const 1024) "hello from a component\n")
    (func (export "call") (param $req i32) (result i32)
      (call $write (call $get-stdout) (i32.const 1024) (i32.const 23) (i32.const 256))
      (i32.store8 (i32.const 64) (i32.const 0))
      (i32.store8 (i32.const 72) (i32.const 0))
      (i32.store (i32.const 80) (i32.load offset=12 (local.get $req)))
      (i32.store (i32.const 84) (i32.load offset=16 (local.get $req)))
      (i32.const 64)))
  (core instance $main (instantiate $Main (with "m" (instance $mem)) (with "wasi" (instance $wasi-core))))

  (func $call (param "request" $request) (result $response)
    (canon lift (core func $main "call") (memory $mem "mem") (realloc (func $mem "realloc"))))
  (export "call" (func $call))
)
