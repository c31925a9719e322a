;; Fits the world by its outer imports and exports. Inside, it holds a component that imports
;; wasi:http and exports other functions; those are the inner component's own, never the host's,
;; so the registry skips it by its section's size and does not blame them.
(component
  (import "fuscia:host/types@1.0.0" (instance))
  (component $inner
    (import "wasi:http/outgoing-handler@0.2.0" (instance))
    (import "secret" (func $secret))
    (export "not-call" (func $secret))
  )
  (core module $m (func (export "call")))
  (core instance $i (instantiate $m))
  (func $call (canon lift (core func $i "call")))
  (export "call" (func $call))
)
