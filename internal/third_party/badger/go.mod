module github.com/dgraph-io/badger/v4

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/dgraph-io/ristretto/v2 v2.2.0
	github.com/dustin/go-humanize v1.0.1
	github.com/google/flatbuffers v25.2.10+incompatible
	github.com/klauspost/compress v1.18.0
	go.opentelemetry.io/otel v1.41.0
	golang.org/x/sys v0.41.0
	google.golang.org/protobuf v1.36.7
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/metric v1.41.0 // indirect
	go.opentelemetry.io/otel/trace v1.41.0 // indirect
)

retract v4.0.0 // see #1888 and #1889

retract v4.3.0 // see #2113 and #2121

// Fuscia: the copy's tests build with Fuscia's copy of ristretto, as Fuscia's binary does (a
// replace in a dependency's go.mod is ignored by the modules that use it).
replace github.com/dgraph-io/ristretto/v2 => ../ristretto
