module github.com/fuscia/fuscia

go 1.26.8

require (
	github.com/bytecodealliance/wasmtime-go/v39 v39.0.1
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/dgraph-io/badger/v4 v4.9.6
	github.com/dgraph-io/ristretto/v2 v2.2.0
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/go-plugin v1.8.0
	github.com/hashicorp/go-version v1.9.0
	github.com/hashicorp/hcl/v2 v2.25.0
	github.com/invopop/jsonschema v0.14.0
	github.com/mitchellh/go-wordwrap v1.0.1
	github.com/nats-io/nats-server/v2 v2.15.2
	github.com/nats-io/nats.go v1.55.0
	github.com/nats-io/nkeys v0.4.16
	github.com/netresearch/go-cron v0.9.1
	github.com/oklog/ulid/v2 v2.1.2
	github.com/prometheus/client_golang v1.24.1
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.72.0
	github.com/prometheus/otlptranslator v1.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sourcegraph/jsonrpc2 v0.2.0
	github.com/tliron/glsp v0.2.2
	github.com/zclconf/go-cty v1.19.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.47.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.47.0
	go.opentelemetry.io/otel/exporters/prometheus v0.69.0
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
	go.opentelemetry.io/proto/otlp v1.11.0
	golang.org/x/crypto v0.58.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	google.golang.org/grpc v1.83.2
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/agext/levenshtein v1.2.1 // indirect
	github.com/antithesishq/antithesis-sdk-go v0.8.0-default-no-op // indirect
	github.com/apparentlymart/go-textseg/v15 v15.0.0 // indirect
	github.com/apparentlymart/go-textseg/v17 v17.0.1 // indirect
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/flatbuffers v25.2.10+incompatible // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.30.0 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/klauspost/compress v1.20.3
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/minio/highwayhash v1.0.4 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/nats-io/jwt/v2 v2.8.2 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/oklog/run v1.1.0 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
)

// A fork of v6.0.3 that compiles the JSON Schema drafts' metaschemas on first use instead of
// in a package init, which cost every fuscia command 10-20 ms of start-up
// (internal/third_party/jsonschema/README.md).
replace github.com/santhosh-tekuri/jsonschema/v6 => ./internal/third_party/jsonschema

// A fork of v2.2.0 whose z.OpenMmapFile advises Badger's new memtable and value-log files for
// random access, so that their first write does not read megabytes of holes around it
// (internal/third_party/ristretto/README.md).
replace github.com/dgraph-io/ristretto/v2 => ./internal/third_party/ristretto

// A copy of v4.9.6 whose compactions write one table at a time on one goroutine, so that a
// level-0 compaction takes one CPU instead of all of them, and which writes each new table with
// writev rather than through a fresh mapping, and starts each table's index builder at 64 KiB,
// not 3 MiB (internal/third_party/badger/README.md).
replace github.com/dgraph-io/badger/v4 => ./internal/third_party/badger

// A copy of v2.25.0 (the packages Fuscia imports) without hclwrite's unused node.Equal, whose
// go-cmp dependency's package initializers cost every fuscia start ~0.6-0.9 ms
// (internal/third_party/hcl/README.md).
replace github.com/hashicorp/hcl/v2 => ./internal/third_party/hcl

// A copy of v1.24.1 (the packages Fuscia imports) whose default registry registers its Go and
// process collectors at its first use instead of in a package init, ~1 ms of every fuscia
// start (internal/third_party/prometheus-client_golang/README.md).
replace github.com/prometheus/client_golang => ./internal/third_party/prometheus-client_golang

// A copy of v1.8.0 whose gRPC server does not register gRPC's reflection service, whose
// package initializers (protodesc, descriptorpb and the reflection services) cost every fuscia
// start ~0.6 ms, and which speaks only the gRPC protocol, without net/rpc and so without
// encoding/gob's initializer (internal/third_party/go-plugin/README.md).
replace github.com/hashicorp/go-plugin => ./internal/third_party/go-plugin

// A copy of v1.55.0 (the packages Fuscia imports) without the deprecated encoded connections,
// whose encoders linked encoding/gob: its initializer cost every fuscia start ~0.5-1 ms
// (internal/third_party/nats.go/README.md).
replace github.com/nats-io/nats.go => ./internal/third_party/nats.go

// A copy of v0.22.0 (the packages Fuscia links) whose ~20 regular expressions are compiled at
// their first use instead of in package variables, ~0.45 ms and ~900 allocations of every
// fuscia start (internal/third_party/procfs/README.md).
replace github.com/prometheus/procfs => ./internal/third_party/procfs

// A copy of v1.0.1 whose global generator is made by the first Next instead of in a package
// init seeding math/rand from crypto/rand, ~0.5 ms of every fuscia start
// (internal/third_party/nuid/README.md).
replace github.com/nats-io/nuid => ./internal/third_party/nuid
