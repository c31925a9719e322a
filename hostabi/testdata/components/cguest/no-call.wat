;; no-call.wasm: a component with no imports that exports `run` instead of the world's `call`,
;; for the refusal of a missing `call` and of an export the world does not have.
;; Build: jco parse no-call.wat -o no-call.wasm (build.sh does it).
(component
  (core module $m
    (func (export "run") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $run (result u32) (canon lift (core func $i "run")))
  (export "run" (func $run)))
