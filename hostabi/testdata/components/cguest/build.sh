#!/usr/bin/env bash
# Builds the test components of this folder and checks them without the Fuscia host:
#
#   cguest.wasm      guest.c -> core module (clang, wasi-libc, lld) -> jco embed of the world
#                    fuscia:host/component@1.0.0 -> jco new with the WASI reactor adapter
#   bad-import.wasm, wasi-http.wasm, no-call.wasm
#                    jco parse of the .wat files beside them
#
# then runs check.mjs (the world of each file, and cguest's calls under node with fake host
# imports). Usage:
#
#   ./build.sh             writes the .wasm files here (they are committed: tests use those)
#   ./build.sh OUTDIR      writes them to OUTDIR instead, e.g. to compare a rebuild
#
# Needs clang (14 or later, with the wasm32 target), lld, wasi-libc, node (20 or later) and npm.
# jco is pinned to 1.35.0: taken from $JCO_DIR (an installed @bytecodealliance/jco package
# directory) if set, else from a node_modules that node resolves from here, else installed
# with npm into ${XDG_CACHE_HOME:-~/.cache}/fuscia/jco-1.35.0.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
out=$(cd "$out" && pwd)
wit=$(cd "$here/../../../wit" && pwd)/fuscia.wit
clang=${CLANG:-clang}
jco_version=1.35.0

say() { printf 'build.sh: %s\n' "$*" >&2; }

jco_version_of() { # DIR -> the version in DIR/package.json, or nothing
  [ -f "$1/package.json" ] && node -p "require(process.argv[1]).version" "$1/package.json" 2>/dev/null || true
}

if [ -n "${JCO_DIR:-}" ]; then
  say "jco: \$JCO_DIR=$JCO_DIR"
else
  # A jco that `npx --no-install jco` would run from here (a node_modules up the tree).
  local_api=$(cd "$here" && node --input-type=module -e \
    "try { console.log(new URL(import.meta.resolve('@bytecodealliance/jco')).pathname) } catch {}" 2>/dev/null || true)
  if [ -n "$local_api" ] && [ "$(jco_version_of "$(dirname "$(dirname "$local_api")")")" = "$jco_version" ]; then
    JCO_DIR=$(dirname "$(dirname "$local_api")")
    say "jco: $JCO_DIR"
  else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/fuscia/jco-$jco_version
    JCO_DIR=$cache/node_modules/@bytecodealliance/jco
    if [ "$(jco_version_of "$JCO_DIR")" != "$jco_version" ]; then
      say "jco $jco_version not found here: installing it with npm into $cache"
      mkdir -p "$cache"
      npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error \
        "@bytecodealliance/jco@$jco_version" >&2
    else
      say "jco: $JCO_DIR (cached)"
    fi
  fi
fi
found=$(jco_version_of "$JCO_DIR")
if [ "$found" != "$jco_version" ]; then
  say "jco at $JCO_DIR is version '${found:-none}', want $jco_version"
  exit 1
fi
jco() { node "$JCO_DIR/dist/jco.js" "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The core module. -mexec-model=reactor: wasi-libc's reactor start-up (_initialize, which
#    `jco new` arranges to run at instantiation; no _start). -nodefaultlibs -lc: no
#    compiler-rt builtins (Debian ships them apart); none are needed. --strip-debug: drops
#    wasi-libc's DWARF, keeps the name section for readable trap backtraces.
say "clang: $("$clang" --version | head -n 1)"
"$clang" --target=wasm32-wasi -O2 -Wall -Wextra -Werror -mexec-model=reactor -nodefaultlibs -lc \
  -Wl,--strip-debug -o "$tmp/core.wasm" "$here/guest.c"

# 2. Embed the world's type information (the component-type custom section). jco's own API,
#    the function behind `jco embed`, with the WIT given as text: jco 1.35.0's CLI cannot read
#    a --wit path (its WASI shim has no preopened directory), and fails with "No such file or
#    directory".
node --input-type=module - "$JCO_DIR" "$tmp/core.wasm" "$wit" "$tmp/embedded.wasm" <<'EOF'
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
const [jcoDir, core, wit, out] = process.argv.slice(2);
const jco = await import(pathToFileURL(`${jcoDir}/dist/api.js`));
const embedded = await jco.componentEmbed({
  binary: await readFile(core),
  witSource: await readFile(wit, 'utf8'),
  world: 'component',
});
await writeFile(out, embedded);
EOF

# 3. The component: WASI preview 1 calls adapted to WASI 0.2 by jco's reactor adapter.
jco new "$tmp/embedded.wasm" \
  --adapt "wasi_snapshot_preview1=$JCO_DIR/lib/wasi_snapshot_preview1.reactor.wasm" \
  -o "$out/cguest.wasm"

# 4. The refusal fixtures.
for f in bad-import wasi-http no-call; do
  jco parse "$here/$f.wat" -o "$out/$f.wasm"
done

say "the world of cguest.wasm:"
jco wit "$out/cguest.wasm" >&2

# 5. Check everything without the Fuscia host.
node "$here/check.mjs" "$JCO_DIR" "$out"
(cd "$out" && sha256sum cguest.wasm bad-import.wasm wasi-http.wasm no-call.wasm) >&2
say "ok"
