// The DAG drawn in SVG: nodes, curved edges with branch labels, group boxes for loop bodies
// and calls. Nodes are focusable (Tab, arrow keys along edges and layers, Enter opens). The
// scroll box pans by dragging; the toolbar zooms.
import { h, s, replace, uid } from './dom.js';
import { layout } from './layout.js';
import { statusLabel, plural } from './format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const CHAR_W = 7.2; // an estimate of the label font's width: no measuring, so no layout thrash
const SUB_CHAR_W = 6.2;

// normalizeGraph turns the graph API's answer into indexed nodes and merged edges.
export function normalizeGraph(g) {
  const nodes = [];
  const index = new Map();
  for (const n of (g && g.nodes) || []) {
    if (!n || typeof n.id !== 'string' || index.has(n.id)) continue;
    index.set(n.id, nodes.length);
    nodes.push({
      id: n.id, kind: n.kind || kindOf(n.id), label: n.label || labelOf(n.id), uses: n.uses || '', group: n.group || '',
      forEach: Boolean(n.for_each), calls: n.calls || '',
    });
  }
  const edges = [];
  const byPair = new Map();
  for (const e of (g && g.edges) || []) {
    if (!e || !index.has(e.from) || !index.has(e.to)) continue;
    const k = e.from + '\u0000' + e.to;
    const old = byPair.get(k);
    if (old) {
      if (e.label && !old.labels.includes(e.label)) old.labels.push(e.label);
      continue;
    }
    const edge = { from: index.get(e.from), to: index.get(e.to), labels: e.label ? [e.label] : [] };
    byPair.set(k, edge);
    edges.push(edge);
  }
  const groups = [];
  const gseen = new Set();
  for (const gr of (g && g.groups) || []) {
    if (!gr || !gr.id || gseen.has(gr.id)) continue;
    gseen.add(gr.id);
    groups.push({ id: gr.id, kind: gr.kind || kindOf(gr.id), label: gr.label || labelOf(gr.id) });
  }
  // A call is drawn as a group around its node: the box stands for the workflow it runs.
  for (const n of nodes) {
    if (n.kind === 'call' && !gseen.has(n.id)) {
      gseen.add(n.id);
      groups.push({ id: n.id, kind: 'call', label: n.label, title: n.calls ? `calls ${n.calls}` : 'call' });
    }
  }
  for (const n of nodes) {
    if (n.group && !gseen.has(n.group)) {
      gseen.add(n.group);
      groups.push({ id: n.group, kind: kindOf(n.group), label: labelOf(n.group) });
    }
  }
  return { nodes, edges, groups, index };
}

// addNode adds a node the graph did not have (a run of an older version of the workflow).
export function addNode(g, id, group) {
  if (g.index.has(id)) return;
  g.index.set(id, g.nodes.length);
  g.nodes.push({ id, kind: kindOf(id), label: labelOf(id), uses: '', group: group || '' });
  if (group && !g.groups.some((x) => x.id === group)) g.groups.push({ id: group, kind: kindOf(group), label: labelOf(group) });
}

export function kindOf(id) {
  const last = String(id).split('/').pop();
  const dot = last.indexOf('.');
  return dot > 0 ? last.slice(0, dot) : 'task';
}
export function labelOf(id) {
  const last = String(id).split('/').pop();
  const dot = last.indexOf('.');
  return dot > 0 ? last.slice(dot + 1) : last;
}

// describe is a node's second line on a workflow's page: what it runs.
function describe(n) {
  if (n.calls) return `call ${n.calls}`;
  return `${n.uses || n.kind}${n.forEach ? ' · for_each' : ''}`;
}

function fit(text, width, charW) {
  const max = Math.max(4, Math.floor(width / charW));
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

function curve(pts) {
  let d = `M${pts[0].toFixed(1)},${pts[1].toFixed(1)}`;
  for (let i = 2; i < pts.length; i += 2) {
    const x0 = pts[i - 2];
    const y0 = pts[i - 1];
    const x1 = pts[i];
    const y1 = pts[i + 1];
    const c = Math.max(Math.abs(x1 - x0) / 2, 24);
    if (y0 === y1 && x1 > x0) d += `L${x1.toFixed(1)},${y1.toFixed(1)}`;
    else d += `C${(x0 + c).toFixed(1)},${y0.toFixed(1)} ${(x1 - c).toFixed(1)},${y1.toFixed(1)} ${x1.toFixed(1)},${y1.toFixed(1)}`;
  }
  return d;
}

// renderDag draws graph g (normalizeGraph's) into host. opts: title (for screen readers),
// run (true on a run's page: room for a status line and an error), sub(node) the second line,
// onOpen(id) when a node is clicked or Enter is pressed on it.
export function renderDag(host, g, opts = {}) {
  const run = Boolean(opts.run);
  const H = run ? 62 : 50;
  const sizes = g.nodes.map((n) => ({
    w: Math.min(240, Math.max(run ? 156 : 128, n.label.length * CHAR_W + 30, run ? 0 : describe(n).length * SUB_CHAR_W + 30)),
    h: H, group: n.group || (n.kind === 'call' ? n.id : ''), // a call's box needs the room of a group
  }));
  const lay = layout(sizes, g.edges, { gapX: g.edges.some((e) => e.labels.length) ? 96 : 72 });

  const titleID = uid('dag-title');
  const descID = uid('dag-desc');
  const markerID = uid('arrow');
  const svg = s('svg', {
    id: 'dag', class: 'dag', role: 'img', 'aria-labelledby': titleID, 'aria-describedby': descID,
    width: Math.ceil(lay.width), height: Math.ceil(lay.height), viewBox: `0 0 ${Math.ceil(lay.width)} ${Math.ceil(lay.height)}`,
  });
  svg.appendChild(s('title', { id: titleID }, opts.title || 'Workflow graph'));
  svg.appendChild(s('desc', { id: descID }, `${plural(g.nodes.length, 'node')} and ${plural(g.edges.length, 'edge')}, drawn left to right. Each node can be focused with Tab; Enter opens it. The list below the graph has the same nodes.`));
  svg.appendChild(s('defs', {}, s('marker', {
    id: markerID, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse', class: 'arrow',
  }, s('path', { d: 'M0,0 L10,5 L0,10 z' }))));

  // Groups: a box around their members (or around the node of the same id, for a call).
  const gGroups = s('g', { class: 'groups' });
  const members = new Map();
  g.nodes.forEach((n, i) => {
    if (!n.group) return;
    if (!members.has(n.group)) members.set(n.group, []);
    members.get(n.group).push(i);
  });
  for (const gr of g.groups) {
    let list = members.get(gr.id);
    let pad = 12;
    if (!list || list.length === 0) {
      const self = g.index.get(gr.id);
      if (self === undefined) continue;
      list = [self];
      pad = 7;
    }
    let x0 = Infinity; let y0 = Infinity; let x1 = -Infinity; let y1 = -Infinity;
    for (const i of list) {
      x0 = Math.min(x0, lay.x[i]); y0 = Math.min(y0, lay.y[i]);
      x1 = Math.max(x1, lay.x[i] + sizes[i].w); y1 = Math.max(y1, lay.y[i] + sizes[i].h);
    }
    const top = y0 - pad - 16;
    gGroups.appendChild(s('g', { class: ['group', `kind-${gr.kind}`], 'data-group': gr.id },
      s('rect', { class: 'group-box', x: x0 - pad, y: top, width: x1 - x0 + 2 * pad, height: y1 - top + pad, rx: 10 }),
      s('text', { class: 'group-label', x: x0 - pad + 8, y: top + 13 }, gr.title || `${gr.kind} ${gr.label}`)));
  }
  svg.appendChild(gGroups);

  const gEdges = s('g', { class: 'edges' });
  const gLabels = s('g', { class: 'edge-labels' });
  const edgeEls = [];
  const marker = `url(#${markerID})`;
  g.edges.forEach((e, k) => {
    const pts = lay.routes[k];
    const back = lay.layerOf[e.to] <= lay.layerOf[e.from];
    const path = document.createElementNS(SVG_NS, 'path');
    path.setAttribute('class', back ? 'edge back' : 'edge');
    path.setAttribute('d', curve(pts));
    path.setAttribute('data-from', g.nodes[e.from].id);
    path.setAttribute('data-to', g.nodes[e.to].id);
    path.setAttribute('marker-end', marker);
    gEdges.appendChild(path);
    edgeEls.push(path);
    if (e.labels.length) {
      const lx = (pts[0] + pts[2]) / 2;
      const ly = (pts[1] + pts[3]) / 2 - 5;
      gLabels.appendChild(s('text', {
        class: 'edge-label', x: lx.toFixed(1), y: ly.toFixed(1), 'text-anchor': 'middle',
        'data-from': g.nodes[e.from].id, 'data-to': g.nodes[e.to].id,
      }, e.labels.join(', ')));
    }
  });
  svg.appendChild(gEdges);
  svg.appendChild(gLabels);

  const gNodes = s('g', { class: 'nodes' });
  const els = new Array(g.nodes.length);
  const subs = new Array(g.nodes.length);
  const errs = new Array(g.nodes.length);
  const status = new Array(g.nodes.length).fill('pending');
  // Four elements a node, cloned from one template and built directly in their first state:
  // a 1,000-node run draws in one pass of style and layout.
  const tpl = s('g', { tabindex: 0 },
    s('rect', { class: 'node-box', height: H, rx: 8 }),
    s('text', { class: 'node-label', x: 12, y: 21 }),
    s('text', { class: 'node-sub', x: 12, y: 38 }));
  for (let i = 0; i < g.nodes.length; i++) {
    const n = g.nodes[i];
    const w = sizes[i].w;
    const first = opts.initial ? opts.initial(n.id) : null;
    const el = tpl.cloneNode(true);
    el.setAttribute('class', `node kind-${n.kind}`);
    el.setAttribute('data-node', n.id);
    if (run) {
      status[i] = first ? first.status : 'pending';
      el.setAttribute('data-status', status[i]);
    }
    el.setAttribute('transform', `translate(${lay.x[i].toFixed(1)},${lay.y[i].toFixed(1)})`);
    const [box, label, sub] = el.childNodes;
    box.setAttribute('width', w);
    label.textContent = n.label;
    if (n.label.length * CHAR_W > w - 24) { label.setAttribute('textLength', w - 24); label.setAttribute('lengthAdjust', 'spacingAndGlyphs'); }
    sub.textContent = fit(first ? first.sub : describe(n), w - 24, SUB_CHAR_W);
    if (first && first.error) {
      errs[i] = s('text', { class: 'node-error', x: 12, y: 54 }, fit(first.error, w - 24, SUB_CHAR_W));
      el.appendChild(errs[i]);
    }
    els[i] = el;
    subs[i] = sub;
    gNodes.appendChild(el);
  }
  svg.appendChild(gNodes);

  // The scroll box, the toolbar and the list of nodes for screen readers and small screens.
  const scroller = h('div', { class: 'dag-scroll', tabindex: -1 }, svg);
  let scale = 1;
  const zoomLabel = h('span', { class: 'zoom-level', 'aria-live': 'polite' }, '100%');
  const setScale = (v) => {
    scale = Math.min(2, Math.max(0.1, v));
    svg.setAttribute('width', Math.ceil(lay.width * scale));
    svg.setAttribute('height', Math.ceil(lay.height * scale));
    zoomLabel.textContent = `${Math.round(scale * 100)}%`;
  };
  const fitScale = () => {
    const w = scroller.clientWidth || 800;
    setScale(Math.min(1, (w - 8) / lay.width));
  };
  const toolbar = h('div', { class: 'dag-tools', role: 'toolbar', 'aria-label': 'Graph zoom' },
    h('button', { type: 'button', class: 'small', 'aria-label': 'Zoom out', onclick: () => setScale(scale / 1.25) }, '−'),
    zoomLabel,
    h('button', { type: 'button', class: 'small', 'aria-label': 'Zoom in', onclick: () => setScale(scale * 1.25) }, '+'),
    h('button', { type: 'button', class: 'small', onclick: fitScale }, 'Fit'),
    h('button', { type: 'button', class: 'small', onclick: () => setScale(1) }, '100%'),
    h('span', { class: 'muted' }, plural(g.nodes.length, 'node')));

  const listItems = new Map();
  const list = h('ul', { class: 'node-list-items' });
  const details = h('details', { class: 'node-list' }, h('summary', {}, g.nodes.length === 1 ? 'The node as a list' : `All ${g.nodes.length} nodes as a list`), list);
  details.addEventListener('toggle', () => {
    if (!details.open || listItems.size) return;
    const frag = document.createDocumentFragment();
    g.nodes.forEach((n, i) => {
      const st = h('span', { class: 'list-status' }, run ? statusLabel(status[i]) : describe(n));
      listItems.set(i, st);
      frag.appendChild(h('li', {}, h('button', { type: 'button', class: 'link', 'data-list-node': n.id, onclick: () => opts.onOpen?.(n.id) }, n.id), ' — ', st));
    });
    list.appendChild(frag);
  });

  replace(host, toolbar, scroller, details);

  // Keyboard: Enter/Space opens; arrows move along edges (left/right) and layers (up/down).
  const pos = new Int32Array(g.nodes.length);
  lay.layers.forEach((ly) => ly.forEach((v, i) => { pos[v] = i; }));
  const outs = g.nodes.map(() => []);
  const ins = g.nodes.map(() => []);
  for (const e of g.edges) { outs[e.from].push(e.to); ins[e.to].push(e.from); }
  const indexOf = (el) => g.index.get(el.getAttribute('data-node'));
  let drag = null; // a pan by dragging the background
  let moved = false;
  svg.addEventListener('keydown', (ev) => {
    const el = ev.target.closest && ev.target.closest('g.node');
    if (!el) return;
    const i = indexOf(el);
    let to = -1;
    if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); opts.onOpen?.(g.nodes[i].id); return; }
    if (ev.key === 'ArrowRight' && outs[i].length) to = outs[i][0];
    else if (ev.key === 'ArrowLeft' && ins[i].length) to = ins[i][0];
    else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      const ly = lay.layers[lay.layerOf[i]];
      const p = pos[i] + (ev.key === 'ArrowDown' ? 1 : -1);
      if (p >= 0 && p < ly.length) to = ly[p];
    } else return;
    ev.preventDefault();
    if (to >= 0) els[to].focus();
  });
  svg.addEventListener('click', (ev) => {
    const el = ev.target.closest && ev.target.closest('g.node');
    if (el && !moved) opts.onOpen?.(el.getAttribute('data-node'));
  });

  // Pan by dragging the background.
  scroller.addEventListener('pointerdown', (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, l: scroller.scrollLeft, t: scroller.scrollTop, id: ev.pointerId };
    moved = false;
  });
  scroller.addEventListener('pointermove', (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    const dx = ev.clientX - drag.x;
    const dy = ev.clientY - drag.y;
    if (!moved && Math.abs(dx) + Math.abs(dy) < 5) return;
    if (!moved) { moved = true; scroller.setPointerCapture(ev.pointerId); scroller.classList.add('dragging'); }
    scroller.scrollLeft = drag.l - dx;
    scroller.scrollTop = drag.t - dy;
  });
  const end = () => { drag = null; scroller.classList.remove('dragging'); setTimeout(() => { moved = false; }, 0); };
  scroller.addEventListener('pointerup', end);
  scroller.addEventListener('pointercancel', end);

  // A small graph wider than its box is shown whole; a big one keeps 100% and scrolls. Asked
  // after the first paint, so that measuring the box does not force an early layout.
  // A big one opens on its first nodes.
  requestAnimationFrame(() => {
    if (g.nodes.length <= 60 && lay.width > scroller.clientWidth) {
      setScale(Math.max(0.6, Math.min(1, (scroller.clientWidth - 8) / lay.width)));
      return;
    }
    const first = lay.layers.length ? lay.layers[0][0] : undefined;
    if (first !== undefined && lay.y[first] + sizes[first].h > scroller.clientHeight) scroller.scrollTop = Math.max(0, lay.y[first] - 24);
  });

  return {
    svg,
    has: (id) => g.index.has(id),
    el: (id) => { const i = g.index.get(id); return i === undefined ? null : els[i]; },
    // setStatus shows a node's status (the contract's set, see format.nodeStatus) and its second line.
    setStatus(id, st, subText) {
      const i = g.index.get(id);
      if (i === undefined) return;
      if (status[i] !== st) { status[i] = st; els[i].setAttribute('data-status', st); }
      if (subText !== undefined) subs[i].textContent = fit(subText, sizes[i].w - 24, SUB_CHAR_W);
      const li = listItems.get(i);
      if (li) li.textContent = subText || statusLabel(st);
    },
    // setError shows an error inside the node (text.node-error), or removes it (null).
    setError(id, text) {
      const i = g.index.get(id);
      if (i === undefined) return;
      if (!text) { errs[i]?.remove(); errs[i] = null; return; }
      if (!errs[i]) { errs[i] = s('text', { class: 'node-error', x: 12, y: 54 }); els[i].appendChild(errs[i]); }
      errs[i].textContent = fit(text, sizes[i].w - 24, SUB_CHAR_W);
    },
    focus(id) { const i = g.index.get(id); if (i !== undefined) els[i].focus(); },
    setSelected(id) {
      for (const el of svg.querySelectorAll('g.node.selected')) el.classList.remove('selected');
      const i = g.index.get(id);
      if (i !== undefined) els[i].classList.add('selected');
    },
  };
}
