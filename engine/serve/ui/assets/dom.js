// Building the page's elements. Every piece of text goes in as a text node (textContent), never
// as HTML: workflow names, node names, outputs and errors come from users and runs.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'hidden' || k === 'disabled' || k === 'checked' || k === 'selected') el[k] = Boolean(v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// h makes an HTML element: h('a', {href: '/ui/', class: 'x'}, 'text', child…).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

// s makes an SVG element the same way.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

// replace empties el and puts children in it.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// on adds a listener that the page's signal removes when the page goes.
export function on(target, type, fn, signal, opts) {
  target.addEventListener(type, fn, { ...(opts || {}), signal });
}

// every runs fn every ms while signal is live and the page is visible.
export function every(ms, fn, signal) {
  let timer = 0;
  let running = false;
  const tick = async () => {
    if (signal.aborted) return;
    if (!document.hidden && !running) {
      running = true;
      try { await fn(); } catch (e) { /* the next tick retries */ } finally { running = false; }
    }
    if (!signal.aborted) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  signal.addEventListener('abort', () => clearTimeout(timer));
}

// sleep resolves after ms, or rejects when signal aborts.
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(new DOMException('aborted', 'AbortError')); }, { once: true });
  });
}

let ids = 0;
// uid gives a page-unique id for label/aria wiring.
export function uid(prefix) { ids += 1; return `${prefix}-${ids}`; }
