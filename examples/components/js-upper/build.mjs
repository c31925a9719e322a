// Builds component.wasm from main.js with componentize-js: a WebAssembly component of the
// world `component` of hostabi/wit/fuscia.wit (fuscia:host/component@1.0.0).
//
//   npm ci && node build.mjs            component.wasm beside manifest.json
//   node build.mjs /tmp/x.wasm          elsewhere
//
// It prints the component's imports and fails when one is not what the Fuscia host links: the
// world's own interfaces and WASI 0.2 (io, cli, clocks, random, filesystem, sockets).

import { componentize } from '@bytecodealliance/componentize-js';
import { componentWit } from '@bytecodealliance/jco';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, 'component.wasm'));

const { component } = await componentize({
  sourcePath: join(here, 'main.js'),
  witPath: join(here, '..', '..', '..', 'hostabi', 'wit', 'fuscia.wit'),
  worldName: 'component',
  // The engine's defaults also bring fetch() over wasi:http and an incoming-request handler.
  // Fuscia refuses wasi:http (a component's HTTP goes through the world's http-request, which
  // the sandbox checks), so both are off. What stays: stdio (console.log and uncaught errors go
  // to the node's log), random (Math.random, crypto.getRandomValues) and clocks (Date.now).
  disableFeatures: ['http', 'fetch-event'],
});

const wit = await componentWit(component);
const imports = [...wit.matchAll(/^\s*import ([^;]+);/gm)].map((m) => m[1].trim());
const allowed = /^(fuscia:host\/(host|types)@1\.0\.\d+|wasi:(io|cli|clocks|random|filesystem|sockets)\/[a-z-]+@0\.2\.\d+)$/;
const refused = imports.filter((i) => !allowed.test(i));
if (refused.length > 0) {
  console.error(`build.mjs: the component imports what Fuscia does not link: ${refused.join(', ')}`);
  process.exit(1);
}
const exports = [...wit.matchAll(/^\s*export ([^:;]+)/gm)].map((m) => m[1].trim());

// Written beside the target and renamed, so a failed build never leaves half a component.
const tmp = `${out}.tmp-${process.pid}`;
try {
  await writeFile(tmp, component);
  await rename(tmp, out);
} catch (e) {
  await rm(tmp, { force: true });
  throw e;
}
const size = (await readFile(out)).length;
console.log(`built ${out} (${(size / 1024 / 1024).toFixed(1)} MiB)`);
console.log(`  exports: ${exports.join(', ')}`);
console.log(`  imports: ${imports.join(', ')}`);
