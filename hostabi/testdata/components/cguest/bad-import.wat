;; bad-import.wasm: a component that does not fit the world fuscia:host/component@1.0.0 because
;; it imports an interface the world does not have, acme:other/thing@1.0.0. Otherwise it is
;; well formed: its one export is named `call` (its type is not the world's; pack and install
;; refuse the component by its import's name before any type matters).
;; Build: jco parse bad-import.wat -o bad-import.wasm (build.sh does it).
(component
  (import "acme:other/thing@1.0.0" (instance
    (export "ping" (func (param "x" u32) (result u32)))))
  (core module $m
    (func (export "call") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $call (result u32) (canon lift (core func $i "call")))
  (export "call" (func $call)))
