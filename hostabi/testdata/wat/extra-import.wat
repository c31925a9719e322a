;; A component that imports a function the world's host interface does not have (`steal`):
;; it must not instantiate.
(component
  (import "fuscia:host/host@1.0.0" (instance $host
    (export "steal" (func (param "what" string)))
  ))
  (core module $M (func (export "call") (result i32) (i32.const 0)))
  (core instance $m (instantiate $M))
  (func $call (result u32) (canon lift (core func $m "call")))
  (export "call" (func $call))
)
