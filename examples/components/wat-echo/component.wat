;; fuscia/wat-echo: a Fuscia component written by hand in WebAssembly text, against the host
;; ABI v1 (docs/reference/abi-v1.md) and nothing else. Two tasks:
;;
;;   echo  answers success with the whole request as its output, so a workflow can see what the
;;         host sends (kind, name, context, input, state); it logs the component's "greeting"
;;         config value first (or, at warn, that there is none).
;;   fail  answers a fatal error.
;;
;; Build: wat2wasm component.wat -o component.wasm   (Debian: apt-get install wabt)
(module
  ;; Host imports: module "fuscia", exact signatures of the ABI.
  (import "fuscia" "log" (func $log (param $level i32) (param $ptr i32) (param $len i32)))
  (import "fuscia" "config_get" (func $config_get (param $kptr i32) (param $klen i32) (result i64)))

  ;; One page to start with; fuscia_alloc grows it when the request or an answer needs more.
  (memory (export "memory") 1)

  ;; Constant strings, below the heap. Nothing lives at address 0.
  (data (i32.const 16) "{\"kind\":\"task\",\"name\":\"")   ;; 23 bytes: how every task request starts
  (data (i32.const 48) "echo\"")                            ;; 5
  (data (i32.const 56) "fail\"")                            ;; 5
  (data (i32.const 64) "greeting")                          ;; 8
  (data (i32.const 80) "wat-echo: ")                        ;; 10
  (data (i32.const 96) "wat-echo: no greeting configured")  ;; 32
  (data (i32.const 128) "{\"type\":\"success\",\"output\":") ;; 27
  (data (i32.const 160) "{\"type\":\"error\",\"kind\":\"fatal\",\"message\":\"wat-echo: the fail task always fails\"}") ;; 80
  (data (i32.const 256) "{\"type\":\"error\",\"kind\":\"fatal\",\"message\":\"wat-echo: not a request for a task of this component\"}") ;; 96

  ;; The next free byte. A bump allocator that never frees is enough: the instance lives for
  ;; one call only, and everything it allocated goes with it.
  (global $heap (mut i32) (i32.const 1024))

  ;; The ABI marker: never called, only looked for.
  (func (export "fuscia_abi_v1"))

  ;; fuscia_alloc(n): n writable bytes, 8-aligned. Traps when memory cannot grow (past
  ;; max_memory): a trap here fails the attempt with a message that names fuscia_alloc.
  (func $alloc (export "fuscia_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (if (i32.lt_u (local.get $end) (local.get $p)) (then unreachable)) ;; wrapped around
    (local.set $have (i32.shl (memory.size) (i32.const 16)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                                      (i32.const 16)))
              (i32.const -1))
          (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $p))

  ;; pack(ptr, len) = (ptr << 32) | len, the ABI's way of returning a buffer.
  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (local.get $len))))

  ;; eq(a, b, n): the n bytes at a and at b are the same.
  (func $eq (param $a i32) (param $b i32) (param $n i32) (result i32)
    (loop $next
      (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
      (if (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b)))
        (then (return (i32.const 0))))
      (local.set $a (i32.add (local.get $a) (i32.const 1)))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $next))
    unreachable)

  ;; fuscia_call(req, len): one request in, one response out. The request starts with
  ;; {"kind":"task","name":"NAME" (the ABI puts kind and name first, compactly), so a prefix
  ;; compare is enough to dispatch.
  (func (export "fuscia_call") (param $req i32) (param $len i32) (result i64)
    (if (i32.lt_u (local.get $len) (i32.const 28))
      (then (return (call $pack (i32.const 256) (i32.const 96)))))
    (if (i32.eqz (call $eq (local.get $req) (i32.const 16) (i32.const 23)))
      (then (return (call $pack (i32.const 256) (i32.const 96)))))
    (if (call $eq (i32.add (local.get $req) (i32.const 23)) (i32.const 48) (i32.const 5))
      (then (return (call $echo (local.get $req) (local.get $len)))))
    (if (call $eq (i32.add (local.get $req) (i32.const 23)) (i32.const 56) (i32.const 5))
      (then (return (call $pack (i32.const 160) (i32.const 80)))))
    (call $pack (i32.const 256) (i32.const 96)))

  ;; echo: log the greeting, answer {"type":"success","output":REQUEST}.
  (func $echo (param $req i32) (param $len i32) (result i64)
    (local $cfg i64) (local $vp i32) (local $vn i32) (local $msg i32) (local $out i32) (local $n i32)
    (local.set $cfg (call $config_get (i32.const 64) (i32.const 8)))
    (if (i64.eqz (local.get $cfg))
      (then ;; 0: the block sets no "greeting"
        (call $log (i32.const 2) (i32.const 96) (i32.const 32)))
      (else ;; (ptr << 32) | len of a buffer the host got from fuscia_alloc; ptr is not
            ;; ours to read when len is 0 (an empty value)
        (local.set $vp (i32.wrap_i64 (i64.shr_u (local.get $cfg) (i64.const 32))))
        (local.set $vn (i32.wrap_i64 (local.get $cfg)))
        (local.set $msg (call $alloc (i32.add (i32.const 10) (local.get $vn))))
        (memory.copy (local.get $msg) (i32.const 80) (i32.const 10))
        (if (local.get $vn)
          (then (memory.copy (i32.add (local.get $msg) (i32.const 10)) (local.get $vp) (local.get $vn))))
        (call $log (i32.const 1) (local.get $msg) (i32.add (i32.const 10) (local.get $vn)))))
    ;; The response: the 27-byte head, the request as it came, and a closing brace.
    (local.set $n (i32.add (i32.add (i32.const 27) (local.get $len)) (i32.const 1)))
    (local.set $out (call $alloc (local.get $n)))
    (memory.copy (local.get $out) (i32.const 128) (i32.const 27))
    (memory.copy (i32.add (local.get $out) (i32.const 27)) (local.get $req) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.sub (local.get $n) (i32.const 1))) (i32.const 125)) ;; '}'
    (call $pack (local.get $out) (local.get $n)))
)
