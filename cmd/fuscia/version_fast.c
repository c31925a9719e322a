// `fuscia version` answered before the Go runtime starts.
//
// The binary links wasmtime and every package the engine needs: their package initializers
// alone take ~35 ms, most of it page faults, before main runs (docs/performance.md, issue 20
// item 3). Printing four constants needs none of that, so this constructor, which the dynamic
// loader runs before Go's entry point, prints them and exits when the command line is exactly
// `fuscia version` or `fuscia version -json` (or --version in place of version). Any other
// command line — another flag, an extra argument — goes on to Go, whose runVersion prints the
// same texts (TestVersionFastPathMatchesGo) and handles everything else. runc's nsenter uses
// the same kind of constructor to act before the Go runtime.

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "version_fast.h"

static int is_version(const char *arg) {
	return strcmp(arg, "version") == 0 || strcmp(arg, "-version") == 0 || strcmp(arg, "--version") == 0;
}

static int is_json(const char *arg) { return strcmp(arg, "-json") == 0 || strcmp(arg, "--json") == 0; }

// write_all writes the whole of s to standard output. Like the Go path it ignores a failed
// write: the exit code is 0 either way (and a closed pipe kills the process with SIGPIPE, as
// it does a Go program writing to its standard output).
static void write_all(const char *s, size_t n) {
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

// The dynamic loader passes the main program's constructors argc, argv and envp (glibc does;
// on a libc that passes nothing, argv is not read unless argc is 2 or 3 and argv is set).
__attribute__((constructor)) static void fuscia_version_fast(int argc, char **argv, char **envp) {
	(void)envp;
	if (argv == NULL || argc < 2 || argc > 3 || argv[1] == NULL || !is_version(argv[1])) {
		return;
	}
	if (argc == 2) {
		write_all(FUSCIA_VERSION_TEXT, sizeof FUSCIA_VERSION_TEXT - 1);
		_exit(0);
	}
	if (argv[2] != NULL && is_json(argv[2])) {
		write_all(FUSCIA_VERSION_JSON, sizeof FUSCIA_VERSION_JSON - 1);
		_exit(0);
	}
}

// fuscia_version_text and fuscia_version_json let the Go tests read what this file prints.
const char *const fuscia_version_text = FUSCIA_VERSION_TEXT;
const char *const fuscia_version_json = FUSCIA_VERSION_JSON;
