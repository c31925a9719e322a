;; Fits the world's imports but exports handle instead of call.
(component
  (import "fuscia:host/types@1.0.0" (instance))
  (core module $m (func (export "handle")))
  (core instance $i (instantiate $m))
  (func $handle (canon lift (core func $i "handle")))
  (export "handle" (func $handle))
)
