;; Imports WASI 0.2.x interfaces of every package the host links for components (wasi:io,
;; wasi:cli, wasi:clocks, wasi:random, wasi:filesystem, wasi:sockets), in 0.2 versions a
;; toolchain may pin, and the world's two interfaces at 1.0.x; exports the function call. It
;; fits the world by names and kinds (the registry does not check types: the empty instance
;; types and call's signature here would fail at instantiation, which is the host's check).
(component
  (import "fuscia:host/types@1.0.0" (instance))
  (import "fuscia:host/host@1.0.2" (instance))
  (import "wasi:io/error@0.2.0" (instance))
  (import "wasi:io/streams@0.2.3" (instance))
  (import "wasi:cli/stdout@0.2.12" (instance))
  (import "wasi:cli/environment@0.2.0" (instance))
  (import "wasi:clocks/wall-clock@0.2.6" (instance))
  (import "wasi:clocks/monotonic-clock@0.2.6" (instance))
  (import "wasi:random/random@0.2.1" (instance))
  (import "wasi:filesystem/preopens@0.2.0" (instance))
  (import "wasi:sockets/tcp@0.2.0" (instance))
  (core module $m (func (export "call")))
  (core instance $i (instantiate $m))
  (func $call (canon lift (core func $i "call")))
  (export "call" (func $call))
)
