// check.mjs checks the components of this folder without the Fuscia host: the world of each
// file (from its imports and exports), and, for cguest.wasm, the typed answers of its calls,
// run under node through `jco transpile` with fake fuscia:host imports and jco's WASI 0.2 shim.
// A wrong canonical ABI layout in guest.c shows up here as a wrong or garbled response.
//
//   node check.mjs JCO_DIR [DIR]     JCO_DIR: an installed @bytecodealliance/jco package
//                                    DIR: where the .wasm files are (default: beside this file)
//
// build.sh runs it last. The calls run in a child process (node check.mjs --calls ...) so that
// what the component prints to its stdout can be checked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--calls') {
  await calls(process.argv[3], process.argv[4]);
} else {
  const [jcoDir, dir = dirname(self)] = process.argv.slice(2);
  if (!jcoDir) {
    console.error('usage: node check.mjs JCO_DIR [DIR]');
    process.exit(2);
  }
  await main(jcoDir, dir);
}

// worldOf returns the imports and exports of a component, from `jco wit`'s world.
async function worldOf(jco, file) {
  const wit = await jco.componentWit(readFileSync(file));
  const imports = [...wit.matchAll(/^\s*import ([^;]+);$/gm)].map((m) => m[1]);
  const exports = [...wit.matchAll(/^\s*export ([^;]+);$/gm)].map((m) => m[1]);
  return { wit, imports, exports };
}

async function main(jcoDir, dir) {
  const jco = await import(pathToFileURL(join(jcoDir, 'dist/api.js')));

  // cguest.wasm: exactly the world, plus the WASI 0.2 interfaces Fuscia links.
  const w = await worldOf(jco, join(dir, 'cguest.wasm'));
  const wasi = /^wasi:(io|cli|clocks|random|filesystem)\/[a-z-]+@0\.2\.\d+$/;
  assert.deepEqual(w.imports.filter((i) => i.startsWith('fuscia:')).sort(),
    ['fuscia:host/host@1.0.0', 'fuscia:host/types@1.0.0'], w.wit);
  for (const i of w.imports.filter((i) => !i.startsWith('fuscia:'))) assert.match(i, wasi, 'cguest.wasm imports ' + i);
  assert.deepEqual(w.exports, ['call: func(request: request) -> response'], w.wit);
  assert.match(w.wit, /use fuscia:host\/types@1\.0\.0\.\{request, response\};/, w.wit);
  console.log('check: cguest.wasm: world fuscia:host/component@1.0.0 + ' +
    w.imports.filter((i) => i.startsWith('wasi:')).length + ' WASI 0.2 imports');

  // The refusal fixtures.
  const bad = await worldOf(jco, join(dir, 'bad-import.wasm'));
  assert.deepEqual(bad.imports, ['acme:other/thing@1.0.0'], bad.wit);
  assert.deepEqual(bad.exports.map((e) => e.split(':')[0]), ['call'], bad.wit);
  const http = await worldOf(jco, join(dir, 'wasi-http.wasm'));
  assert.deepEqual(http.imports, ['wasi:http/outgoing-handler@0.2.0'], http.wit);
  assert.deepEqual(http.exports.map((e) => e.split(':')[0]), ['call'], http.wit);
  const nocall = await worldOf(jco, join(dir, 'no-call.wasm'));
  assert.deepEqual(nocall.imports, [], nocall.wit);
  assert.deepEqual(nocall.exports.map((e) => e.split(':')[0]), ['run'], nocall.wit);
  console.log('check: bad-import.wasm, wasi-http.wasm, no-call.wasm: worlds as intended');

  // Transpile and run the calls in a child.
  const out = mkdtempSync(join(tmpdir(), 'cguest-check-'));
  try {
    const t = spawnSync(process.execPath, [join(jcoDir, 'dist/jco.js'), 'transpile', join(dir, 'cguest.wasm'),
      '--instantiation', 'async', '--name', 'cguest', '-o', out], { encoding: 'utf8' });
    if (t.status !== 0) throw new Error('jco transpile failed:\n' + t.stdout + t.stderr);

    // Every function of interface host is imported, none more: the world, not a subset of it.
    const dts = readFileSync(join(out, 'interfaces/fuscia-host-host.d.ts'), 'utf8');
    assert.deepEqual([...dts.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]).sort(),
      ['artifactRead', 'artifactWrite', 'configGet', 'httpRequest', 'kvDelete', 'kvGet', 'kvSet', 'log']);

    const c = spawnSync(process.execPath, [self, '--calls', jcoDir, out], { encoding: 'utf8', timeout: 120_000 });
    process.stderr.write(c.stderr);
    if (c.status !== 0) throw new Error(`the calls failed (exit ${c.status}, signal ${c.signal})`);
    // printf from "upper", through wasi-libc, the adapter and wasi:cli/stdout.
    assert.match(c.stdout, /^cguest: upper says HELLO, WORLD$/m, 'stdout of the calls:\n' + c.stdout);
    console.log('check: stdout carries the printf line of "upper"');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  console.log('check: ok');
}

// calls runs cguest's export under node: a fresh instance per call, as the host does, with one
// fake host whose KV, config and artifacts outlive the instances. Reports go to stderr; stdout
// is the component's.
async function calls(jcoDir, transpiled) {
  const req = createRequire(join(jcoDir, 'package.json'));
  const { WASIShim } = await import(pathToFileURL(req.resolve('@bytecodealliance/preview2-shim/instantiation')));
  const { instantiate } = await import(pathToFileURL(join(transpiled, 'cguest.js')));

  const data = mkdtempSync(join(tmpdir(), 'cguest-data-'));
  writeFileSync(join(data, 'hello.txt'), 'hi from a file\n');
  const wasiImports = new WASIShim({
    sandbox: { preopens: { '/data': data }, env: {}, args: ['cguest'], enableNetwork: false },
  }).getImportObject();

  const enc = new TextEncoder(), dec = new TextDecoder();
  const kv = new Map(), artifacts = new Map(), logs = [];
  const config = { greeting: 'hello' };
  const host = {
    log: (level, message) => logs.push({ level, message }),
    configGet: (key) => config[key],
    kvGet: (key) => kv.get(key),
    kvSet: (key, value) => kv.set(key, Uint8Array.from(value)),
    kvDelete: (key) => kv.delete(key),
    artifactWrite: (contentType, bytes) => {
      const artifactId = 'art-' + (artifacts.size + 1);
      artifacts.set(artifactId, Uint8Array.from(bytes));
      return { artifactId, contentType, size: BigInt(bytes.length) };
    },
    artifactRead: (id) => artifacts.get(id),
    httpRequest: (r) => {
      assert.equal(r.method, 'GET');
      assert.deepEqual(r.headers, []);
      assert.equal(r.body.length, 0);
      assert.equal(r.timeoutMs, undefined);
      if (r.url.startsWith('http://allowed.test/')) return { status: 204, headers: [['x-a', 'b']], body: enc.encode('ok') };
      if (r.url.startsWith('http://down.test/')) throw { payload: { kind: 'network', message: 'connection refused' } };
      throw { payload: { kind: 'sandbox-violation', message: `${r.url} is not allowed` } };
    },
  };
  const imports = { ...wasiImports, 'fuscia:host/host': host, 'fuscia:host/types': {} };

  const modules = new Map();
  const getCoreModule = (path) => {
    if (!modules.has(path)) modules.set(path, WebAssembly.compile(readFileSync(join(transpiled, path))));
    return modules.get(path);
  };

  const context = { executionId: 'ex-1', workflow: 'wf', node: 'task.c', taskId: 'task-1', attempt: 1, iteration: 3 };
  const invoke = async (name, target, state) => {
    const { call } = await instantiate(getCoreModule, imports);
    return call({ name, target, context, state });
  };
  const task = (name, input, state) => invoke(name, { tag: 'task', val: input }, state);
  const ok = (val) => ({ tag: 'task', val: { tag: 'success', val } });
  const taskErr = (kind, message, extra = {}) =>
    ({ tag: 'task', val: { tag: 'error', val: { kind, message, backoffHintMs: undefined, partialOutput: undefined, ...extra } } });
  let n = 0;
  const check = async (what, got, want) => {
    assert.deepEqual(await got, want, what);
    n++;
  };
  const throws = async (what, p) => {
    await assert.rejects(p, undefined, what);
    n++;
  };

  await check('upper', task('upper', '{"text": "hello, world"}'), ok('{"text":"HELLO, WORLD"}'));
  assert.deepEqual(logs, [{ level: 'info', message: 'cguest: upper of 12 bytes' }]);
  const esc = await task('upper', '{"n": 1, "text": "caf\\u00e9 \\"q\\"\\n\\ud83d\\ude00"}');
  assert.equal(esc.val.tag, 'success');
  await check('upper escapes', JSON.parse(esc.val.val), { text: 'CAFé "Q"\n😀' });
  await check('upper, bad JSON', task('upper', '{"text": '), taskErr('validation', 'input is not a JSON object'));
  await check('upper, not an object', task('upper', '[1]'), taskErr('validation', 'input is not a JSON object'));
  await check('upper, deep JSON', task('upper', '['.repeat(100000)), taskErr('validation', 'input is not a JSON object'));
  await check('upper, text not a string', task('upper', '{"text": 5}'), taskErr('validation', 'input.text: a string is required'));
  await check('upper, no text', task('upper', '{}'), taskErr('validation', 'input.text: a string is required'));

  const doc = '{"a": [1, 2.5e3, {"b": null}], "s": "x\\u0000y", "t": true}';
  await check('echo', task('echo', doc), ok(doc));
  await check('echo, bad JSON', task('echo', '{"a":}'), taskErr('validation', 'input is not valid JSON'));

  await check('config', task('config', '{"key": "greeting"}'), ok('{"value":"hello"}'));
  await check('config, none', task('config', '{"key": "missing"}'), ok('{"value":null}'));

  await check('kv', task('kv', '{"key": "k", "value": "v1 \\u00e9"}'), ok('{"value":"v1 é"}'));
  assert.equal(dec.decode(kv.get('k')), 'v1 é');
  await check('kv-delete', task('kv-delete', '{"key": "k"}'), ok('{"value":null}'));
  assert.equal(kv.has('k'), false);

  await check('artifact', task('artifact', '{"data": "abc"}'),
    ok('{"artifact_id":"art-1","content_type":"text/plain","size":3,"content":"abc"}'));

  await check('http', task('http', '{"url": "http://allowed.test/x"}'), ok('{"status":204}'));
  await check('http, refused', task('http', '{"url": "http://evil.test/"}'), taskErr('fatal', 'http://evil.test/ is not allowed'));
  await check('http, network', task('http', '{"url": "http://down.test/"}'), taskErr('retryable', 'connection refused'));

  await check('read', task('read', '{"path": "/data/hello.txt"}'), ok('{"content":"hi from a file\\n"}'));
  const outside = await task('read', '{"path": "/etc/passwd"}');
  assert.equal(outside.val.tag, 'error');
  assert.equal(outside.val.val.kind, 'fatal');
  await check('read outside the preopens', outside.val.val.message.startsWith('open /etc/passwd: '), true);

  await check('skip', task('skip', '{}'), { tag: 'task', val: { tag: 'skip', val: 'cguest: asked to skip' } });
  await check('branch', task('branch', '{"selected": "right"}'),
    { tag: 'task', val: { tag: 'branch', val: { selected: 'right', output: '{"selected":"right"}' } } });
  await check('branch, default', task('branch', '{}'),
    { tag: 'task', val: { tag: 'branch', val: { selected: 'left', output: '{"selected":"left"}' } } });

  const cont = (state, output, progress, delayMs) =>
    ({ tag: 'task', val: { tag: 'continue', val: { state, output, progress, delayMs } } });
  await check('continue 1', task('continue', '{"steps": 2, "delay_ms": 7}'), cont('{"step":1}', '{"step":1}', 0.5, 7n));
  await check('continue 2', task('continue', '{"steps": 2, "delay_ms": 7}', '{"step":1}'), cont('{"step":2}', '{"step":2}', 1, 7n));
  await check('continue done', task('continue', '{"steps": 2}', '{"step":2}'), ok('{"step":2,"done":true}'));
  await check('continue, bad state', task('continue', '{}', 'nope'),
    taskErr('validation', 'state: {"step": a whole number} is required'));

  await check('error-retryable', task('error-retryable', '{}'),
    taskErr('retryable', 'cguest: try again', { backoffHintMs: 1500n, partialOutput: '{"done":1}' }));
  await check('unknown task', task('nope', '{}'), taskErr('validation', 'unknown task nope'));

  const poll = { tag: 'trigger', val: { tag: 'poll' } };
  await check('poll', invoke('tick', poll), { tag: 'trigger', val: { tag: 'completed', val: '{"polled":true}' } });
  await check('poll again', invoke('tick', poll), { tag: 'trigger', val: { tag: 'pending' } });
  const hook = (body) => ({
    tag: 'trigger',
    val: { tag: 'webhook', val: { method: 'POST', path: '/hook', query: [['a', '1']], headers: [['content-type', 'text/plain']], body } },
  });
  await check('webhook', invoke('hook', hook(enc.encode('ping "x"'))),
    { tag: 'trigger', val: { tag: 'completed', val: '{"method":"POST","path":"/hook","body":"ping \\"x\\""}' } });
  await check('webhook, bytes that are not UTF-8', invoke('hook', hook(Uint8Array.of(0xff, 0x41))),
    { tag: 'trigger', val: { tag: 'completed', val: '{"method":"POST","path":"/hook","body":"\uFFFDA"}' } });

  await throws('trap', task('trap', '{}'));
  await throws('bad-level', task('bad-level', '{}'));
  await throws('bad-pointer', task('bad-pointer', '{}'));

  rmSync(data, { recursive: true, force: true });
  console.error(`check: ${n} calls of cguest.wasm answered as expected`);
}
