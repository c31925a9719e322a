;; A component whose `call` has another type than the world's (no parameters, a u32 result): it
;; instantiates, and the call is refused with a message that says so.
(component
  (core module $M (func (export "call") (result i32) (i32.const 7)))
  (core instance $m (instantiate $M))
  (func $call (result u32) (canon lift (core func $m "call")))
  (export "call" (func $call))
)
