/*
 * The answer of `fuscia version` (and -json), printed by version_fast.c before the Go runtime
 * starts. TestVersionFastPathMatchesGo fails when these texts and runVersion's differ: change
 * both together.
 *
 * FUSCIA_VERSION is internal/version.Fuscia. A build that sets that variable with
 * -ldflags "-X github.com/fuscia/fuscia/internal/version.Fuscia=V" sets this one too with
 * CGO_CFLAGS="-DFUSCIA_VERSION=\"V\"" (`make build VERSION=V` does both).
 */
#ifndef FUSCIA_VERSION_FAST_H
#define FUSCIA_VERSION_FAST_H

#ifndef FUSCIA_VERSION
#define FUSCIA_VERSION "0.1.0-dev"
#endif

#define FUSCIA_WASMTIME "39.0.1"
#define FUSCIA_ABI "1"
#define FUSCIA_WORLD "fuscia:host/component@1.0.0"
#define FUSCIA_PLUGIN_PROTOCOL "1"

#define FUSCIA_VERSION_TEXT                                                                        \
	"Fuscia v" FUSCIA_VERSION "\n"                                                                 \
	"wasmtime " FUSCIA_WASMTIME "\n"                                                               \
	"Host ABI " FUSCIA_ABI "\n"                                                                    \
	"Component world " FUSCIA_WORLD "\n"                                                           \
	"Plugin protocol " FUSCIA_PLUGIN_PROTOCOL "\n"

/* The keys in the order encoding/json writes a map's: sorted. */
#define FUSCIA_VERSION_JSON                                                                        \
	"{\n"                                                                                          \
	"  \"abi\": " FUSCIA_ABI ",\n"                                                                 \
	"  \"component_world\": \"" FUSCIA_WORLD "\",\n"                                               \
	"  \"fuscia\": \"" FUSCIA_VERSION "\",\n"                                                      \
	"  \"plugin_protocol\": " FUSCIA_PLUGIN_PROTOCOL ",\n"                                         \
	"  \"wasmtime\": \"" FUSCIA_WASMTIME "\"\n"                                                    \
	"}\n"

#endif
