;; Imports wasi:http, which the world refuses (the world's http-request is the egress the sandbox
;; checks), next to imports that fit.
(component
  (import "fuscia:host/types@1.0.0" (instance))
  (import "wasi:http/types@0.2.0" (instance))
  (import "wasi:http/outgoing-handler@0.2.0" (instance))
  (import "wasi:io/streams@0.2.0" (instance))
  (core module $m (func (export "call")))
  (core instance $i (instantiate $m))
  (func $call (canon lift (core func $i "call")))
  (export "call" (func $call))
)
