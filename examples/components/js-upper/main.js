// fuscia/js-upper: a Fuscia component written in JavaScript, of the world
// fuscia:host/component@1.0.0 (hostabi/wit/fuscia.wit), built into a WebAssembly component by
// componentize-js (build.mjs). See README.md and docs/components.md.
//
// The bindings componentize-js makes from the WIT file:
//   - the world's export `call` is this module's export `call`;
//   - the interface `fuscia:host/host@1.0.0` is imported as an ES module of that name;
//   - records are objects with camelCase fields (execution-id is executionId), variants are
//     {tag, val} with the case's WIT name as tag, enums are their WIT names as strings,
//     option<T> is T or undefined, list<u8> is a Uint8Array, u64 is a BigInt;
//   - an import that returns result<T, E> returns T, and throws on E: the thrown value's
//     `payload` is E.

import { log, configGet, kvGet, kvSet, httpRequest } from 'fuscia:host/host@1.0.0';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The key of the execution's KV store that task "count" keeps its counter under. The store is
// shared by every component task of the execution, so the key names this component.
const countKey = 'js-upper.count';

// call answers one request: one task call, in a fresh instance every time.
export function call(request) {
  if (request.target.tag !== 'task') {
    return triggerError('fatal', `js-upper: it has no triggers, and was called as trigger "${request.name}"`);
  }
  let input;
  try {
    input = JSON.parse(request.target.val);
  } catch (e) {
    return taskError('validation', `js-upper: the input is not JSON: ${e.message}`);
  }
  try {
    switch (request.name) {
      case 'upper':
        return upper(request.context, input);
      case 'count':
        return count();
      case 'fetch':
        return fetchURL(input);
      default:
        return taskError('fatal', `js-upper: no task "${request.name}"`);
    }
  } catch (e) {
    // An exception that escaped a task: answer it as an error rather than trap, so the node's
    // error says what went wrong.
    return taskError('fatal', `js-upper: task "${request.name}" failed: ${e && e.message ? e.message : e}`);
  }
}

// upper: {"text"} -> {"text": the config value "prefix" then text in upper case,
// "length": the result's length in characters}.
function upper(context, input) {
  if (typeof input.text !== 'string') {
    return taskError('validation', 'js-upper: the input needs "text", a string');
  }
  const prefix = configGet('prefix') ?? '';
  const text = prefix + input.text.toUpperCase();
  log('info', `js-upper: ${context.node} upper-cased ${codePoints(input.text)} characters (attempt ${context.attempt})`);
  return success({ text, length: codePoints(text) });
}

// codePoints counts the characters of s: code points, not UTF-16 units, and without the array
// that [...s] would build (a megabyte of text would cost tens of megabytes of memory).
function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// count: adds one to the execution's counter and answers it: {"count": n}.
function count() {
  const old = kvGet(countKey);
  const n = (old === undefined ? 0 : Number.parseInt(decoder.decode(old), 10) || 0) + 1;
  kvSet(countKey, encoder.encode(String(n)));
  log('debug', `js-upper: count is ${n}`);
  return success({ count: n });
}

// fetch: GETs input.url through the host's sandbox: {"status", "body"}. A network error is
// retryable; a request the capabilities refuse is fatal (the host fails the attempt with
// sandbox_violation whatever we answer, and never retries it).
function fetchURL(input) {
  if (typeof input.url !== 'string' || input.url === '') {
    return taskError('validation', 'js-upper: the input needs "url", a non-empty string');
  }
  let response;
  try {
    response = httpRequest({
      method: 'GET',
      url: input.url,
      headers: [['accept', 'text/plain, application/json, */*']],
      body: new Uint8Array(0),
      timeoutMs: 10_000n,
    });
  } catch (e) {
    const err = e && e.payload;
    if (err === undefined) throw e;
    if (err.kind === 'network') {
      // The host's message names the method and URL already.
      return taskError('retryable', `js-upper: ${err.message}`, 1000n);
    }
    return taskError('fatal', `js-upper: GET ${input.url} refused: ${err.message}`);
  }
  log('info', `js-upper: GET ${input.url}: ${response.status}`);
  return success({ status: response.status, body: decoder.decode(response.body) });
}

function success(output) {
  return { tag: 'task', val: { tag: 'success', val: JSON.stringify(output) } };
}

function callError(kind, message, backoffHintMs) {
  return { kind, message, backoffHintMs, partialOutput: undefined };
}

function taskError(kind, message, backoffHintMs) {
  return { tag: 'task', val: { tag: 'error', val: callError(kind, message, backoffHintMs) } };
}

function triggerError(kind, message) {
  return { tag: 'trigger', val: { tag: 'error', val: callError(kind, message) } };
}
