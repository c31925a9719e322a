;; Nearly everything that does not fit the world: imports of another package, of later or
;; earlier versions, without a version, of a prerelease, of an interface fuscia:host does not
;; have, of a plain-named function, of the world's type request as an instance; exports besides
;; call, and call as an instance. The registry must name every one of them.
(component
  (import "acme:kv/store@1.0.0" (instance))
  (import "fuscia:host/host@1.1.0" (instance))
  (import "fuscia:host/admin@1.0.0" (instance))
  (import "wasi:io/streams@0.3.0" (instance))
  (import "wasi:cli/stdout" (instance))
  (import "wasi:random/random@0.2.0-rc-2023-11-10" (instance))
  (import "wasi:keyvalue/store@0.2.0" (instance))
  (import "log" (func $log))
  (import "request" (instance $request))
  (import "fuscia:host/types@1.0.0" (instance))
  (export "extra" (func $log))
  (export "call" (instance $request))
  (core module $m (func (export "f")))
  (export "inner-module" (core module $m))
)
