// The Gantt chart of a run's attempts: one row per node (or item), a bar per attempt coloured
// by its outcome, waits hatched, time running left to right from the run's start.
import { h, s, replace, uid } from './dom.js';
import { duration, errorText, utc } from './format.js';

const ROW = 22;
const AXIS = 26;
const MAX_ROWS = 2000;

// fromExecution builds a timeline from the execution object when serve has no timeline
// endpoint: one bar per started top-level node.
export function fromExecution(ex) {
  const nodes = [];
  for (const [id, n] of Object.entries(ex.nodes || {})) {
    if (!n.started_at) continue;
    const bar = { started_at: n.started_at, finished_at: n.finished_at || null, status: n.status, error: n.error || null };
    if (id.startsWith('wait.')) nodes.push({ node: id, index: null, attempts: [], waits: [bar] });
    else nodes.push({ node: id, index: null, attempts: [{ attempt: n.attempts || 1, ...bar }], waits: [] });
  }
  return { execution_id: ex.execution_id, started_at: ex.started_at, finished_at: ex.finished_at, nodes, derived: true };
}

function niceStep(span, target) {
  const raw = span / target;
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000,
    900000, 1800000, 3600000, 7200000, 10800000, 21600000, 43200000, 86400000, 172800000, 604800000];
  for (const st of steps) if (st >= raw) return st;
  return steps[steps.length - 1];
}

const MAX_ITEM_ROWS = 10;

// mergeItems gives a node with many items or iterations one row where all their bars are
// drawn, instead of a row each: a for_each over 10,000 items stays one line.
function mergeItems(nodes) {
  const count = new Map();
  for (const r of nodes) if (Array.isArray(r.index) && r.index.length) count.set(r.node, (count.get(r.node) || 0) + 1);
  const out = [];
  const merged = new Map();
  for (const r of nodes) {
    const n = count.get(r.node) || 0;
    if (n <= MAX_ITEM_ROWS || !Array.isArray(r.index) || !r.index.length) { out.push(r); continue; }
    let m = merged.get(r.node);
    if (!m) {
      m = { node: r.node, index: null, items: n, attempts: [], waits: [] };
      merged.set(r.node, m);
      out.push(m);
    }
    const tag = `[${r.index.join(', ')}]`;
    for (const a of r.attempts || []) m.attempts.push({ ...a, tag });
    for (const w of r.waits || []) m.waits.push({ ...w, tag });
  }
  return out;
}

function parse(t) { const v = t ? Date.parse(t) : NaN; return Number.isNaN(v) ? null : v; }

// renderTimeline draws data into host; onOpen(node) when a row is clicked.
export function renderTimeline(host, data, { onOpen, running } = {}) {
  const rows = mergeItems(data.nodes || []);
  const now = Date.now();
  let t0 = parse(data.started_at);
  let t1 = parse(data.finished_at);
  const startOf = (r) => {
    let m = parse(r.started_at) ?? Infinity;
    for (const a of r.attempts || []) { const v = parse(a.started_at); if (v !== null && v < m) m = v; }
    for (const w of r.waits || []) { const v = parse(w.started_at); if (v !== null && v < m) m = v; }
    return m;
  };
  const starts = new Map(rows.map((r) => [r, startOf(r)]));
  rows.sort((a, b) => (starts.get(a) - starts.get(b)) || String(a.node).localeCompare(String(b.node)));
  let maxEnd = -Infinity;
  for (const r of rows) {
    const st = starts.get(r);
    if (st !== Infinity && (t0 === null || st < t0)) t0 = st;
    for (const b of [...(r.attempts || []), ...(r.waits || []), ...(r.started_at ? [r] : [])]) {
      const e = parse(b.finished_at) ?? now;
      if (e > maxEnd) maxEnd = e;
    }
  }
  if (t1 === null || running) t1 = Math.max(maxEnd, running ? now : -Infinity, t0 ?? now);
  if (t0 === null) t0 = now;
  if (t1 <= t0) t1 = t0 + 1000;
  const span = t1 - t0;
  const shown = rows.slice(0, MAX_ROWS);
  const width = Math.max(340, (host.clientWidth || 960) - 8);
  const LABEL_W = width < 640 ? 120 : 210;
  const chartW = width - LABEL_W - 16;
  const height = AXIS + shown.length * ROW + 8;
  const X = (t) => LABEL_W + ((t - t0) / span) * chartW;

  const titleID = uid('tl-title');
  const svg = s('svg', { id: 'timeline', class: 'timeline', role: 'img', 'aria-labelledby': titleID, width, height, viewBox: `0 0 ${width} ${height}` });
  svg.appendChild(s('title', { id: titleID }, `Timeline of ${rows.length} nodes' attempts over ${duration(span)}`));
  const defs = s('defs');
  const hatch = uid('hatch');
  defs.appendChild(s('pattern', { id: hatch, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
    s('rect', { width: 6, height: 6, class: 'hatch-bg' }), s('line', { x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-line' })));
  svg.appendChild(defs);

  // Axis: time since the run's start.
  const axis = s('g', { class: 'axis' });
  const step = niceStep(span, Math.max(3, Math.floor(chartW / 110)));
  for (let t = 0; t <= span + 1; t += step) {
    const x = X(t0 + t);
    axis.appendChild(s('line', { x1: x, x2: x, y1: AXIS - 6, y2: height, class: 'grid' }));
    const anchor = t === 0 ? 'start' : (x > LABEL_W + chartW - 30 ? 'end' : 'middle');
    axis.appendChild(s('text', { x, y: AXIS - 10, 'text-anchor': anchor }, t === 0 ? '0' : `+${duration(t)}`));
  }
  svg.appendChild(axis);

  const body = s('g', { class: 'rows' });
  shown.forEach((r, i) => {
    const y = AXIS + i * ROW;
    const idx = Array.isArray(r.index) && r.index.length ? `[${r.index.join(', ')}]` : '';
    const sameAsIndex = Array.isArray(r.index) && r.index.length && r.key === r.index[r.index.length - 1];
    const key = r.key !== undefined && r.key !== null && idx && !sameAsIndex ? ` ${typeof r.key === 'string' ? r.key : JSON.stringify(r.key)}` : '';
    const name = r.items ? `${r.node} (${r.items})` : `${r.node}${idx}${key}`;
    const max = LABEL_W < 200 ? 16 : 30;
    const label = name.length > max ? '…' + name.slice(-(max - 1)) : name;
    const g = s('g', { class: 'row', 'data-node': r.node, transform: `translate(0,${y})` },
      s('rect', { class: i % 2 ? 'row-bg odd' : 'row-bg', x: 0, y: 0, width, height: ROW }),
      s('text', { class: 'row-label', x: 6, y: 15 }, label));
    // A loop or an iteration has no attempts of its own: its span from start to end.
    if (!(r.attempts || []).length && !(r.waits || []).length && parse(r.started_at) !== null) {
      const a = parse(r.started_at);
      const b = parse(r.finished_at) ?? now;
      const st = r.status || (r.finished_at ? 'succeeded' : 'running');
      g.appendChild(s('rect', { class: ['bar', 'span', `st-${st}`], x: X(a), y: 8, width: Math.max(2, X(b) - X(a)), height: 6, rx: 2 },
        s('title', {}, `${r.node}${idx}: ${st.replace(/_/g, ' ')} · ${duration(b - a)} (${utc(new Date(a))} → ${r.finished_at ? utc(new Date(b)) : 'now'})`)));
    }
    // A loop or an iteration has no attempts of its own: its span from start to end.
    if (!(r.attempts || []).length && !(r.waits || []).length && parse(r.started_at) !== null) {
      const a = parse(r.started_at);
      const b = parse(r.finished_at) ?? now;
      const st = r.status || (r.finished_at ? 'succeeded' : 'running');
      g.appendChild(s('rect', { class: ['bar', 'span', `st-${st}`], x: X(a), y: 8, width: Math.max(2, X(b) - X(a)), height: 6, rx: 2 },
        s('title', {}, `${r.node}${idx}: ${st.replace(/_/g, ' ')} · ${duration(b - a)} (${utc(new Date(a))} → ${r.finished_at ? utc(new Date(b)) : 'now'})`)));
    }
    for (const w of r.waits || []) {
      const a = parse(w.started_at);
      if (a === null) continue;
      const b = parse(w.finished_at) ?? now;
      g.appendChild(s('rect', { class: 'bar wait', x: X(a), y: 5, width: Math.max(2, X(b) - X(a)), height: 12, fill: `url(#${hatch})` },
        s('title', {}, `${r.node}${w.tag || idx}: waited ${duration(b - a)} (${utc(new Date(a))} → ${w.finished_at ? utc(new Date(b)) : 'now'})`)));
    }
    for (const at of r.attempts || []) {
      const a = parse(at.started_at);
      if (a === null) continue;
      const b = parse(at.finished_at) ?? now;
      const st = at.status || (at.finished_at ? 'succeeded' : 'running');
      const tip = `${r.node}${at.tag || idx} attempt ${at.attempt ?? '?'}: ${st.replace(/_/g, ' ')} · ${duration(b - a)}${at.error ? ` · ${errorText(at.error)}` : ''} (${utc(new Date(a))} → ${at.finished_at ? utc(new Date(b)) : 'now'})`;
      g.appendChild(s('rect', { class: ['bar', `st-${st}`], x: X(a), y: 4, width: Math.max(2, X(b) - X(a)), height: 14, rx: 2 }, s('title', {}, tip)));
    }
    body.appendChild(g);
  });
  svg.appendChild(body);
  if (running) svg.appendChild(s('line', { class: 'now', x1: X(now), x2: X(now), y1: AXIS - 6, y2: height }));
  svg.addEventListener('click', (ev) => {
    const row = ev.target.closest && ev.target.closest('g.row');
    if (row) onOpen?.(row.getAttribute('data-node'));
  });

  const legend = h('ul', { class: 'legend', 'aria-label': 'Legend' },
    ['succeeded', 'failed', 'retrying', 'running', 'cancelled'].map((st) => h('li', {}, h('span', { class: ['swatch', `st-${st}`] }), st)),
    h('li', {}, h('span', { class: 'swatch wait' }), 'waiting'));
  replace(host,
    data.derived ? h('p', { class: 'muted small' }, 'This serve has no timeline of attempts: each bar is a node from its start to its end.') : null,
    h('div', { class: 'timeline-scroll' }, svg), legend,
    rows.length > MAX_ROWS ? h('p', { class: 'muted small' }, `The first ${MAX_ROWS} of ${rows.length} rows.`) : null,
    rows.length === 0 ? h('p', { class: 'muted' }, 'No node has started yet.') : null);
  return svg;
}

