// How values read on the page: times in the browser's zone (UTC on hover), human durations,
// statuses, JSON.
import { h } from './dom.js';

const local = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
});
const localShort = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function utc(d) {
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, '') + ' UTC';
}

// time is a <time> element for an RFC 3339 string: the local time, the UTC time in its title.
export function time(iso, { short = false } = {}) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h('span', {}, String(iso));
  const sameDay = new Date().toDateString() === d.toDateString();
  const text = (short && sameDay) ? localShort.format(d) : local.format(d);
  return h('time', { datetime: iso, title: utc(d) }, text);
}

// duration renders milliseconds as "350 ms", "1.2 s", "3 min 4 s", "2 h 5 min", "3 d 4 h".
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const sec = ms / 1000;
  if (sec < 10) return `${(Math.floor(sec * 10) / 10).toFixed(1)} s`;
  if (sec < 60) return `${Math.floor(sec)} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) { const r = Math.floor(sec - m * 60); return r ? `${m} min ${r} s` : `${m} min`; }
  const hr = Math.floor(m / 60);
  if (hr < 24) { const r = m - hr * 60; return r ? `${hr} h ${r} min` : `${hr} h`; }
  const d = Math.floor(hr / 24);
  const r = hr - d * 24;
  return r ? `${d} d ${r} h` : `${d} d`;
}

// between is the duration from start to end (now when end is missing).
export function between(start, end) {
  if (!start) return null;
  const a = Date.parse(start);
  const b = end ? Date.parse(end) : Date.now();
  return b - a;
}

// The statuses a node shows as (the DOM contract's set); the others map to the closest.
const NODE_STATUS = new Set(['pending', 'running', 'succeeded', 'failed', 'cancelled', 'skipped', 'waiting', 'retrying']);
export function nodeStatus(st) {
  if (NODE_STATUS.has(st)) return st;
  if (st === 'timed_out' || st === 'completed_with_errors') return 'failed';
  if (st === 'interrupted') return 'running';
  return 'pending';
}

export function finished(runStatus) {
  return ['succeeded', 'failed', 'completed_with_errors', 'cancelled', 'timed_out'].includes(runStatus);
}

export function statusLabel(st) { return String(st || 'unknown').replace(/_/g, ' '); }

// badge is a status with its colour and its word (colour is never the only sign).
export function badge(st, extra) {
  return h('span', { class: ['badge', `st-${st}`], ...(extra || {}) }, statusLabel(st));
}

// displayJSON replaces {"sensitive": true} markers by "(sensitive)" and pretty-prints.
export function displayJSON(v) {
  if (v === undefined) return '';
  const swap = (x) => {
    if (Array.isArray(x)) return x.map(swap);
    if (x && typeof x === 'object') {
      const keys = Object.keys(x);
      if (keys.length === 1 && keys[0] === 'sensitive' && x.sensitive === true) return '(sensitive)';
      if (keys.length === 1 && keys[0] === 'unknown' && x.unknown === true) return '(known after apply)';
      const o = {};
      for (const k of keys) o[k] = swap(x[k]);
      return o;
    }
    return x;
  };
  return JSON.stringify(swap(v), null, 2);
}

const MAX_JSON_CHARS = 200000;

// jsonBlock is a <pre> holding JSON as text; a huge value is cut (the API has all of it).
export function jsonBlock(v, attrs) {
  let text = (v === undefined || v === null) ? 'null' : displayJSON(v);
  let cut = null;
  if (text.length > MAX_JSON_CHARS) {
    cut = h('p', { class: 'muted small' }, `The first ${MAX_JSON_CHARS.toLocaleString()} of ${text.length.toLocaleString()} characters.`);
    text = text.slice(0, MAX_JSON_CHARS) + '\n…';
  }
  const pre = h('pre', { class: 'json', ...(attrs || {}) }, text);
  return cut ? h('div', {}, pre, cut) : pre;
}

export function errorText(err) {
  if (!err) return '';
  if (typeof err === 'string') return err;
  return err.kind ? `${err.kind}: ${err.message || ''}` : (err.message || JSON.stringify(err));
}

export function shortID(id) { return id && id.length > 12 ? id.slice(0, 10) + '…' : id; }

export function plural(n, one, many) { return `${n} ${n === 1 ? one : (many || one + 's')}`; }

// visibleControls writes the control characters of a line of text (an ANSI escape's ESC, a
// bell, a carriage return) as \xNN, as `fuscia logs` does in a terminal table: shown raw they
// are invisible, and a line could pass for another.
export function visibleControls(text) {
  return String(text).replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
