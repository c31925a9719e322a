;; wasi-http.wasm: a component that imports wasi:http/outgoing-handler@0.2.0, which Fuscia
;; refuses (a component's HTTP goes through the world's http-request import, whose egress the
;; sandbox checks). Only the name matters to that check, so the instance's type is a stand-in,
;; not the real interface's. Its one export is named `call`.
;; Build: jco parse wasi-http.wat -o wasi-http.wasm (build.sh does it).
(component
  (import "wasi:http/outgoing-handler@0.2.0" (instance
    (export "handle" (func (result u32)))))
  (core module $m
    (func (export "call") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $call (result u32) (canon lift (core func $i "call")))
  (export "call" (func $call)))
