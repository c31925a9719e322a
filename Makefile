# Fuscia's build. Everything here needs only the Go toolchain, but for the example components in C
# (c-guest: clang) and JavaScript (js-guest: node; skipped without it).
GO       ?= go
BIN      := bin/fuscia
LOAD     := bin/fuscia-load
# The fuzz budgets are counts of inputs, not durations. With a duration, Go 1.26's fuzz
# coordinator can report its own deadline as a failure ("context deadline exceeded", no failing
# input written) when the time runs out under load: golang/go#75804, fixed in Go 1.27. A count
# has no deadline to race. 10,000 inputs take 10-30 s on a 2-core machine; 1,000,000 about 5 min.
FUZZTIME ?= 10000x
FUZZLONG ?= 1000000x

.PHONY: build test vet fmt-check fuzz demo bench soak crash load-tool examples c-guest js-guest js-deps proto clean ui ui-syntax screenshots editors editors-test

# VERSION, when set (`make build VERSION=1.2.3`), is the version the binary reports. It is set
# twice: in Go (internal/version.Fuscia, with -X) and in the C code that answers `fuscia version`
# before the Go runtime starts (cmd/fuscia/version_fast.h, with -D; docs/performance.md).
VERSION ?=
ifneq ($(VERSION),)
VERSION_LDFLAGS := -ldflags "-X github.com/fuscia/fuscia/internal/version.Fuscia=$(VERSION)"
build: export CGO_CFLAGS = -O2 -g '-DFUSCIA_VERSION="$(VERSION)"'
endif

# Plugin binaries are built without the symbol table and DWARF (-s -w): Fuscia reads a plugin's
# whole binary to check its digest before each start (twice per one-shot apply), and the
# shell plugin shrinks from 18.7 to 13.2 MB, which took ~15 ms off `fuscia apply` of a one-node
# shell workflow (docs/performance.md, issue 20, session 13). A panic still names functions and
# lines; a debugger needs a build without these flags.
PLUGIN_LDFLAGS := -ldflags "-s -w"

# build builds the CLI and the first-party plugins (bin/plugins/fuscia-plugin-shell, -ssh).
build:
	$(GO) build $(VERSION_LDFLAGS) -o $(BIN) ./cmd/fuscia
	$(GO) build $(PLUGIN_LDFLAGS) -o bin/plugins/fuscia-plugin-shell ./plugins/shell
	$(GO) build $(PLUGIN_LDFLAGS) -o bin/plugins/fuscia-plugin-ssh ./plugins/ssh

# test is what CI runs (.ci/run): formatting, vet, every test with the race detector (32 kills
# of the crash matrix among them), the examples through the real binary, and a short fuzz run
# of the workflow loader. -timeout is a hang guard, not a speed target: cmd/fuscia's end-to-end
# tests take 4-10 minutes on a busy 2-core machine, at go test's default limit. editors-test
# checks the VS Code extension's grammar when node is installed.
test: fmt-check vet ui-syntax build js-deps editors-test
	$(GO) test -race -count=1 -timeout 30m ./...
	cd internal/third_party/jsonschema && $(GO) test -race -count=1 ./...
	cd internal/third_party/ristretto && $(GO) test -race -count=1 ./z/
	cd internal/third_party/badger && $(GO) test -race -count=1 . ./table/
	cd internal/third_party/prometheus-client_golang && $(GO) test -race -count=1 ./prometheus/
	cd internal/third_party/procfs && $(GO) test -race -count=1 .
	cd internal/third_party/nuid && $(GO) test -race -count=1 .
	./$(BIN) validate examples/
	./$(BIN) test examples/
	./$(BIN) fmt -check examples/
	$(GO) test ./lang -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME)

vet:
	$(GO) vet ./...

# ui checks the web UI's files (docs/ui.md). They are hand-written ES modules with no bundler, so
# there is nothing to build and no bundle to compare: ui-syntax parses each script as a module
# with node when it is installed (`node --check FILE` would not: it takes a .js file with a
# syntax error after an import for CommonJS and passes it), then the ui package's tests run.
# The browser tests (cmd/fuscia/ui_browser_test.go) are part of `make test`.
UI_ASSETS := engine/serve/ui/assets
ui: ui-syntax
	$(GO) test -count=1 ./engine/serve/ui/

ui-syntax:
	@if command -v node >/dev/null; then \
		for f in $(UI_ASSETS)/*.js; do \
			node --input-type=module --check < "$$f" || { echo "$$f: not a valid JavaScript module"; exit 1; }; \
		done; \
		echo "node: every script in $(UI_ASSETS) parses"; \
	else \
		echo "node is not installed: the UI's scripts are not parsed (apt-get install nodejs)"; \
	fi

# screenshots runs the browser test of a run's page with FUSCIA_UPDATE_SCREENSHOTS=1, which
# writes docs/ui-run.png (1280x900), the picture in the README and docs/ui.md.
screenshots:
	FUSCIA_UPDATE_SCREENSHOTS=1 $(GO) test -count=1 -run '^TestUIWebhookRunLive$$' -v ./cmd/fuscia

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go') | grep -v '\.pb\.go$$' || true); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

fuzz:
	$(GO) test ./lang -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZLONG)

# demo builds fuscia and runs an example workflow end to end in a fresh home (.demo-home):
# validate, the examples' tests (fuscia test), plan, apply, then show the execution it journaled; then the Wasm components (the
# JavaScript one when node is installed) and the plugins.
DEMO_HOME := $(CURDIR)/.demo-home
demo: build
	rm -rf $(DEMO_HOME)
	./$(BIN) validate examples/
	./$(BIN) test examples/
	./$(BIN) plan examples/hello.fsc.hcl -var name=Ada
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) apply examples/hello.fsc.hcl -var name=Ada
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) executions list
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) show $$(FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) executions list -json | grep -o '"execution_id": *"[^"]*"' | head -1 | cut -d'"' -f4)
	@echo "--- Wasm components: pack, install, plan (writes the lock file), apply"
	$(MAKE) --no-print-directory examples
	for c in text kvcounter; do \
		./$(BIN) component pack examples/components/$$c -o bin/components/$$c.fcpkg && \
		FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) component install bin/components/$$c.fcpkg || exit 1; \
	done
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) component list
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) plan examples/text.fsc.hcl
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) apply examples/text.fsc.hcl -var title="Hello Wasm hello world"
	@if [ "$(FUSCIA_SKIP_JS_GUEST)" != 1 ] && command -v node >/dev/null && [ -f bin/components/js-upper.fcpkg ]; then \
		echo "--- A component of the component model in JavaScript (abi 2) next to a Go module (abi 1)"; \
		set -x; \
		FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) component install bin/components/js-upper.fcpkg && \
		FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) plan examples/js-upper.fsc.hcl && \
		FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) apply examples/js-upper.fsc.hcl -var text="components of every language"; \
	else \
		echo "--- The JavaScript component is left out: node is not installed, or FUSCIA_SKIP_JS_GUEST=1"; \
	fi
	@echo "--- Plugins: the shell plugin and the greeter example, from -plugin-dir bin/plugins"
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) plugin list -plugin-dir bin/plugins
	FUSCIA_HOME=$(DEMO_HOME) ./$(BIN) apply examples/plugins.fsc.hcl -plugin-dir bin/plugins

# bench prints parse+decode+graph+plan time and allocations for generated workflows of
# 100, 1,000 and 10,000 nodes, and the plan snapshot's encoding (what every apply journals),
# then the engine's figures: per-node overhead on a 1,000-node
# chain (strict and relaxed), what one more node costs a strict chain of transforms, of HTTP
# effects and of both alternating, a 1,000-wide fan-out, 3-step latency p50/p99, concurrent runs per
# second with peak RSS, a 100,000-item for_each, the journal's appends and pages of runs from a
# store of 100,000 (the API's runs list); then the Wasm
# host's: per-attempt p50/p99 (a tiny module, a Go component), trap cost with and without
# RUST_BACKTRACE, interrupt latency, module load (compile, disk cache, memory) and 1,000
# component tasks through the engine; the cluster on NATS JetStream (an in-process NATS
# server): one attempt's dispatch overhead p50/p99 against a local attempt, runs/s with 1, 2
# and 4 `fuscia worker` processes (a 50 ms I/O-bound task) and with 1 and 2 (CPU-bound Wasm),
# and the redelivery time after a worker's SIGKILL; one-shot commands through the binary
# (`fuscia version`, a 3-node apply with a fresh and a reused home, and what one more node costs
# apply, beside the decoding apply no longer does); finally `fuscia serve` itself through bin/fuscia-load:
# webhook throughput (accepted and webhook-to-finished runs/s, 202 latency, peak RSS) with its
# Go client and, when Debian's wrk is installed, with wrk, the idle RSS of 10 loaded
# workflows, and serve's memory and responsiveness under a slowloris of 3,000 connections and
# a flood of 1,500 connections with 60 KiB headers (docs/performance.md).
bench: build load-tool
	$(GO) test ./engine/plan -run '^$$' -bench 'BenchmarkPipeline' -benchmem -benchtime 2s
	$(GO) test ./engine/plan -run '^$$' -bench 'BenchmarkEncode' -benchmem -benchtime 200x -count 5
	$(GO) test ./lang/dag -run '^$$' -bench . -benchmem
	$(GO) test ./lang/schema -run '^$$' -bench 'ParseJSONPaths' -count 5
	$(GO) test ./internal/diagrender -run '^$$' -bench 'SnippetEachLine' -benchtime 3x
	$(GO) test ./lang/query -run '^$$' -bench 'CompleteOpenQuotes' -benchtime 3x
	$(GO) test ./engine -run '^$$' -bench 'Chain1000|FanOut1000|ThreeStepLatency' -benchtime 5x
	$(GO) test ./engine -run '^$$' -bench 'StrictChainPerNode' -benchtime 10x -count 5
	$(GO) test ./engine -run '^$$' -bench 'Throughput' -benchtime 5000x -benchmem
	$(GO) test ./engine -run '^$$' -bench 'Throughput' -benchtime 20000x -benchmem
	$(GO) test ./engine -run '^$$' -bench 'ForEach100k' -benchtime 1x
	$(GO) test ./engine/journal -run '^$$' -bench . -benchtime 2000x
	$(GO) test ./engine/serve -run '^$$' -bench 'WebhookRequest' -benchmem -benchtime 200000x -count 5
	$(GO) test ./engine/serve -run '^$$' -bench 'WebhookRun' -benchtime 20000x -count 5
	@$(MAKE) --no-print-directory js-guest
	FUSCIA_JS_COMPONENT=$$([ -f $(JS_GUEST)/component.wasm ] && echo $(CURDIR)/$(JS_GUEST)/component.wasm) \
		$(GO) test ./hostabi -run '^$$' -bench 'Invoke|BenchmarkTrap$$' -benchtime 3000x
	FUSCIA_JS_COMPONENT=$$([ -f $(JS_GUEST)/component.wasm ] && echo $(CURDIR)/$(JS_GUEST)/component.wasm) \
		$(GO) test ./hostabi -run '^$$' -bench 'ComponentLoad' -benchtime 3x
	$(GO) test ./hostabi -run '^$$' -bench 'InterruptLatency' -benchtime 50x
	$(GO) test ./hostabi -run '^$$' -bench 'ModuleLoad' -benchtime 3x
	$(GO) test ./engine -run '^$$' -bench 'ComponentForEach1000' -benchtime 3x
	$(GO) test ./plugin -run '^$$' -bench 'PluginStart' -benchtime 20x
	$(GO) test ./plugin -run '^$$' -bench 'PluginExecute' -benchtime 5000x
	$(GO) test ./engine -run '^$$' -bench 'ShellForEach1000|SpawnTrue1000' -benchtime 3x
	$(GO) test ./engine -run '^$$' -bench 'ShellChain100|SpawnTrueSeq100' -benchtime 3x -count 5
	$(GO) test ./engine/internal/runtime/plugins -run '^$$' -bench 'DispatcherCall' -benchtime 3000x -count 5
	$(GO) test ./engine/internal/runtime/builtins -run '^$$' -bench 'HTTPCall' -benchtime 5000x -count 5
	$(GO) test ./engine/internal/runtime/builtins -run '^$$' -bench 'RelaxedChainPerNode' -benchtime 10x -count 5
	$(GO) test ./plugins/shell -run '^$$' -bench 'RunTrue|ExecTrue' -benchtime 300x -count 5
	$(GO) test ./plugin -run '^$$' -bench 'ShellExecTrue' -benchtime 300x -count 5
	$(GO) test ./engine/cluster -run '^$$' -bench 'DispatchOverhead' -benchtime 3000x
	$(GO) test ./engine/fsctest -run '^$$' -bench 'Suite100x50' -benchtime 5x -count 5
	$(GO) test ./lang/lsp -run '^$$' -bench 'DiagnosticsAfterChange1000Nodes|Completion1000Nodes' -count 5
	$(GO) test ./lang/query -run '^$$' -bench 'Complete1000|CompleteOutput1000|Hover1000' -count 3
	$(GO) test ./engine -run '^$$' -bench 'ProgramLocks' -benchtime 20x -count 5
	$(GO) test ./cmd/fuscia -run '^$$' -bench 'Startup|ApplyPerNode|ApplyShellPerNode' -benchtime 10x -count 5 -timeout 30m
	$(GO) test ./cmd/fuscia -run '^$$' -bench 'ServeStartGoComponent|ServeStartFiles' -benchtime 5x -timeout 30m
	$(GO) test ./cmd/fuscia -run '^$$' -bench 'ClusterScaling' -benchtime 2000x -timeout 30m
	$(GO) test ./cmd/fuscia -run '^$$' -bench 'ClusterWasmCPU' -benchtime 200x -timeout 30m
	$(GO) test ./cmd/fuscia -run '^$$' -bench 'ClusterRedelivery' -benchtime 10x -timeout 30m
	$(LOAD) -fuscia $(BIN) -mode bench -duration 20s
	@if command -v wrk >/dev/null; then $(LOAD) -fuscia $(BIN) -mode bench -client wrk -duration 20s; \
	$(LOAD) -fuscia $(BIN) -mode bench -client wrk -rate $(HALF_RATE) -duration 20s; \
	else echo "wrk is not installed (apt-get install wrk): no wrk figure"; fi
	$(LOAD) -fuscia $(BIN) -mode idle
	$(LOAD) -fuscia $(BIN) -mode slowloris -duration 30s

# load-tool builds bin/fuscia-load, the load generator and measurer for `fuscia serve`.
load-tool:
	$(GO) build -o $(LOAD) ./cmd/fuscia-load

# soak drives `fuscia serve` at a fixed SOAK_RATE webhooks/s (default 100) for 10 minutes:
# webhook-to-finished latency, RSS over time (flat or growing, RssFile included) and no accepted
# run lost or duplicated (it fails if one is). Not part of `make test`. Issue 20's half-load
# soak is `make soak SOAK_RATE=2300` on a quiet machine (half of the bench's ~4,500 runs/s).
SOAK_RATE ?= 100
# HALF_RATE is the rate `make bench` paces wrk at for the latency at half the maximum (issue 20,
# item 4): half of what the closed-loop wrk bench before it reaches on the machine.
HALF_RATE ?= 2000
soak: build load-tool
	$(LOAD) -fuscia $(BIN) -mode soak -duration 10m -rate $(SOAK_RATE)

# crash runs the crash matrix (docs/state.md, "Crash matrix") with CRASH_KILLS kills: `fuscia
# serve` under webhook load and `fuscia apply`/`resume` SIGKILLed at Badger's memtable and
# value-log rotations, table writes and compactions, the WAL's segment rotations and
# checkpoints, random times and startup. After each kill the store must open the first time,
# hold every acknowledged run, and no finished node may run again; it prints the kill points
# hit (docs/performance.md). `make test` runs 32 kills of it. 500 kills take ~10 minutes; Linux.
CRASH_KILLS ?= 500
crash:
	FUSCIA_CRASH_KILLS=$(CRASH_KILLS) $(GO) test -count=1 -timeout 3h -run '^TestCrashMatrix$$' -v ./cmd/fuscia

# examples builds the example Wasm components (GOOS=wasip1, a WASI reactor) and plugins with
# the Go toolchain alone; each component.wasm lands beside its manifest.json, ready for
# `fuscia component pack`. Then js-guest, which needs node and skips itself without it.
examples:
	@mkdir -p bin/components
	@for d in examples/components/*/; do \
		[ -f "$$d/main.go" ] || continue; \
		echo "component $$d"; GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o "$$d/component.wasm" "./$$d" || exit 1; \
	done
	@for d in examples/plugins/*/; do \
		[ -f "$$d/main.go" ] || continue; \
		echo "plugin $$d"; $(GO) build $(PLUGIN_LDFLAGS) -o "bin/plugins/fuscia-plugin-$$(basename $$d)" "./$$d" || exit 1; \
	done
	@$(MAKE) --no-print-directory js-guest

# c-guest builds the C example component, examples/components/c-upper/component.wasm, with
# clang, lld and wasi-libc (Debian's packages; .ci/run installs them). `make test` builds it as
# well, in cmd/fuscia's end-to-end test of the guests written from docs/reference/abi-v1.md;
# `make examples` and `make demo` need only Go.
c-guest:
	$(MAKE) -C examples/components/c-upper

# js-guest builds the JavaScript example component (component model, abi 2),
# examples/components/js-upper/component.wasm (~12 MB, not committed), with the componentize-js
# that its package-lock.json pins (`npm ci` when the lock changed), and packs it into
# bin/components/js-upper.fcpkg. Without node and npm it says so and does nothing;
# FUSCIA_SKIP_JS_GUEST=1 skips it.
JS_GUEST := examples/components/js-upper
js-guest:
	@if [ "$(FUSCIA_SKIP_JS_GUEST)" = 1 ]; then \
		echo "FUSCIA_SKIP_JS_GUEST=1: $(JS_GUEST) is not built"; \
	elif ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "node and npm are not installed: $(JS_GUEST) is not built (apt-get install nodejs npm)"; \
	else \
		$(MAKE) --no-print-directory bin/components/js-upper.fcpkg; \
	fi

# js-deps installs the JavaScript example's npm packages (for cmd/fuscia's end-to-end test of
# it), when node and npm are present and FUSCIA_SKIP_JS_GUEST is not 1.
js-deps:
	@if [ "$(FUSCIA_SKIP_JS_GUEST)" != 1 ] && command -v node >/dev/null && command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory $(JS_GUEST)/node_modules/.package-lock.json; \
	fi

# editors builds the VS Code extension (docs/editors.md) into bin/editors/fuscia-VERSION.vsix:
# the npm packages its package-lock.json pins, the TypeScript, the tests of editors-test, then
# vsce. It needs node and npm.
EDITOR := editors/vscode
editors:
	@command -v node >/dev/null && command -v npm >/dev/null || \
		{ echo "make editors needs node and npm (apt-get install nodejs npm)"; exit 1; }
	@$(MAKE) --no-print-directory editors-test
	cd $(EDITOR) && npm run package

# editors-test compiles the extension and runs its tests: the grammar's cases in
# $(EDITOR)/test/grammar (vscode-tmgrammar-test), the grammar over every example workflow and the
# language reference's workflows, and the unit tests of the server's command line. Without node
# and npm it says so and does nothing.
editors-test:
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory $(EDITOR)/node_modules/.package-lock.json && \
		cd $(EDITOR) && npm run -s compile && npm test -s; \
	else \
		echo "node and npm are not installed: the VS Code extension is not tested (apt-get install nodejs npm)"; \
	fi

$(EDITOR)/node_modules/.package-lock.json: $(EDITOR)/package.json $(EDITOR)/package-lock.json
	cd $(EDITOR) && npm ci --no-audit --no-fund

$(JS_GUEST)/node_modules/.package-lock.json: $(JS_GUEST)/package.json $(JS_GUEST)/package-lock.json
	cd $(JS_GUEST) && npm ci --no-audit --no-fund

$(JS_GUEST)/component.wasm: $(JS_GUEST)/main.js $(JS_GUEST)/build.mjs hostabi/wit/fuscia.wit $(JS_GUEST)/node_modules/.package-lock.json
	cd $(JS_GUEST) && node build.mjs

bin/components/js-upper.fcpkg: $(JS_GUEST)/component.wasm $(JS_GUEST)/manifest.json $(JS_GUEST)/README.md
	@mkdir -p bin/components
	$(GO) build -o $(BIN) ./cmd/fuscia
	./$(BIN) component pack $(JS_GUEST) -o $@

# proto regenerates proto/fuscia/plugin/v1's Go code (committed, so nothing else needs protoc).
# It installs its tools: protoc from Debian, the Go generators pinned to the versions go.mod uses.
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
TOOLS := $(CURDIR)/bin/tools
proto:
	@command -v protoc >/dev/null || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH=$(TOOLS):$$PATH protoc -I proto \
		--go_out=proto --go_opt=paths=source_relative \
		--go-grpc_out=proto --go-grpc_opt=paths=source_relative \
		proto/fuscia/plugin/v1/plugin.proto

clean:
	rm -rf bin
