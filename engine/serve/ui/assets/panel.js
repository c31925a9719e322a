// The node panel of a run's page: a node's status, error, attempts, input and output, its
// for_each items or loop iterations (paged) and its log lines (followed while the run goes on).
import { h, replace, uid } from './dom.js';
import * as api from './api.js';
import { time, duration, between, badge, jsonBlock, errorText, visibleControls } from './format.js';
import { followLogs } from './stream.js';

const ITEMS_PAGE = 50;
const MAX_LOG_LINES = 5000;

// nodeViewOf finds a node in the execution object: a top-level node, or a loop body's node
// (loop.l/task.x) in the loop's last iteration that has it.
export function nodeViewOf(ex, id) {
  if (!ex || !ex.nodes) return null;
  if (ex.nodes[id]) return ex.nodes[id];
  const slash = id.indexOf('/');
  if (slash < 0) return null;
  const loop = ex.nodes[id.slice(0, slash)];
  const local = id.slice(slash + 1);
  const its = (loop && loop.iterations) || [];
  for (let i = its.length - 1; i >= 0; i--) if (its[i].nodes && its[i].nodes[local]) return its[i].nodes[local];
  return null;
}

// fromView makes a node detail (the shape of GET …/nodes/{node}) from the execution object's view.
function fromView(id, v, offset, limit) {
  const all = (v && (v.instances || v.iterations)) || [];
  const items = all.slice(offset, offset + limit).map((it, i) => ({
    index: [offset + i], key: it.key, status: it.status, attempts: it.attempts, error: it.error,
  }));
  return {
    node: id, status: v ? v.status : 'pending', attempts: null, attemptCount: v ? v.attempts : 0, input: undefined,
    output: v ? v.output : undefined, error: v ? v.error : null, items, items_total: all.length, derived: true,
    started_at: v && v.started_at, finished_at: v && v.finished_at,
  };
}

export function createPanel({ execID, signal, getExecution, fetchExecution, isOver, onClose }) {
  const titleID = uid('panel-title');
  const el = h('aside', { id: 'node-panel', class: 'panel', 'aria-labelledby': titleID, hidden: true, tabindex: -1 });
  let ctl = null;
  let current = null; // node id
  let returnTo = null;
  let itemsLoaded = 0;
  let itemsTotal = 0;
  let detailMissing = false; // serve has no node detail endpoint
  let refreshTimer = 0;

  const close = () => {
    if (!current) return;
    ctl?.abort();
    ctl = null;
    current = null;
    el.hidden = true;
    document.body.classList.remove('panel-open');
    onClose?.();
    if (returnTo && returnTo.isConnected) returnTo.focus();
  };
  signal.addEventListener('abort', () => { ctl?.abort(); clearTimeout(refreshTimer); document.body.classList.remove('panel-open'); });

  async function loadDetail(id, offset, limit, sig) {
    if (!detailMissing) {
      try {
        return await api.get(`/v1/executions/${api.enc(execID)}/nodes/${api.enc(id)}${api.q({ offset, limit })}`, { signal: sig });
      } catch (e) {
        // A 404 with a code is the endpoint's own answer (no such node in this run): shown as
        // an error, not made up from the execution object as a pending node.
        if (e.name === 'AbortError' || e.status !== 404 || e.code) throw e;
      }
    }
    // No detail endpoint (an older serve): the execution object has most of it.
    const view = nodeViewOf(await fetchExecution(sig), id);
    if (view) detailMissing = true;
    return fromView(id, view, offset, limit);
  }

  const sections = {};
  function build(id) {
    const closeBtn = h('button', { type: 'button', class: 'close', 'aria-label': 'Close the node panel (Escape)' }, '×');
    closeBtn.addEventListener('click', close);
    sections.head = h('div', { class: 'panel-meta' });
    sections.error = h('div', { id: 'node-error' });
    sections.attempts = h('div', { id: 'node-attempts' });
    sections.output = h('div', { id: 'node-output' });
    sections.input = h('div', { id: 'node-input' });
    sections.itemsBox = h('section', { class: 'panel-section', hidden: true });
    sections.items = h('div', { id: 'node-items' });
    sections.more = h('button', { type: 'button', id: 'items-more', class: 'small', hidden: true }, 'Show more');
    sections.itemsTitle = h('h3', {}, 'Items');
    sections.logs = h('ol', { id: 'node-logs', class: 'logs', 'aria-live': 'off' });
    sections.logState = h('span', { class: 'muted small' });
    sections.more.addEventListener('click', () => moreItems());
    sections.itemsBox.append(sections.itemsTitle, sections.items, sections.more);
    replace(el,
      h('div', { class: 'panel-head' }, h('h2', { id: titleID, tabindex: -1 }, id), closeBtn),
      sections.head,
      h('section', { class: 'panel-section' }, h('h3', {}, 'Error'), sections.error),
      h('section', { class: 'panel-section' }, h('h3', {}, 'Attempts'), sections.attempts),
      h('section', { class: 'panel-section' }, h('h3', {}, 'Output'), sections.output),
      h('section', { class: 'panel-section' }, h('h3', {}, 'Input'), sections.input),
      sections.itemsBox,
      h('section', { class: 'panel-section' }, h('div', { class: 'section-head' }, h('h3', {}, 'Logs'), sections.logState), sections.logs));
  }

  function showDetail(d) {
    const ex = getExecution();
    const v = nodeViewOf(ex, current) || {};
    const st = d.status || v.status || 'pending';
    replace(sections.head,
      h('p', {}, badge(st), v.attempts ? ` · ${v.attempts} attempt${v.attempts === 1 ? '' : 's'}` : '',
        v.started_at ? [' · started ', time(v.started_at, { short: true })] : '',
        v.started_at ? ` · ${duration(between(v.started_at, v.finished_at))}${v.finished_at ? '' : ' so far'}` : ''),
      v.reason ? h('p', { class: 'muted' }, `Reason: ${v.reason}`) : null,
      v.deadline ? h('p', {}, 'Deadline: ', time(v.deadline)) : null,
      v.answered_by ? h('p', {}, `Answered by ${v.answered_by}`) : null,
      v.child_execution_id ? h('p', {}, 'Child run: ', h('a', { href: `/ui/runs/${api.enc(v.child_execution_id)}` }, v.child_execution_id)) : null);
    const err = d.error || v.error;
    replace(sections.error, err
      ? h('div', { class: 'error-box' }, h('strong', { class: 'error-kind' }, err.kind || 'error'), ' ', h('span', { class: 'error-message' }, err.message || ''))
      : h('p', { class: 'muted' }, 'No error.'));
    if (Array.isArray(d.attempts) && d.attempts.length) {
      replace(sections.attempts, h('table', { class: 'data compact' },
        h('thead', {}, h('tr', {}, ['#', 'Status', 'Started', 'Took', 'Error'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, d.attempts.map((a) => h('tr', {},
          h('td', { class: 'num' }, String(a.attempt ?? '')), h('td', {}, badge(a.status || 'running')),
          h('td', {}, time(a.started_at, { short: true })), h('td', { class: 'num' }, duration(between(a.started_at, a.finished_at))),
          h('td', { class: 'wrap' }, a.error ? errorText(a.error) : ''))))));
    } else {
      const n = d.attemptCount ?? v.attempts;
      replace(sections.attempts, h('p', { class: 'muted' }, n ? `${n} attempt${n === 1 ? '' : 's'}.` : 'None.'));
    }
    // A for_each task's detail may leave its (large) output to the execution object.
    const out = (d.output !== undefined && d.output !== null) ? d.output : v.output;
    replace(sections.output, out === undefined ? h('p', { class: 'muted' }, finishedNode(st) ? 'No output.' : 'Not yet.') : jsonBlock(out));
    if (d.input === undefined) replace(sections.input, h('p', { class: 'muted' }, 'Not available from this serve.'));
    else if (d.input === null) replace(sections.input, h('p', { class: 'muted' }, 'Not recorded (a node without inputs, or a run journaled before inputs were kept).'));
    else replace(sections.input, jsonBlock(d.input));
    itemsTotal = d.items_total || 0;
    const items = d.items || [];
    if (itemsTotal > 0 || items.length) {
      sections.itemsBox.hidden = false;
      const isLoop = current.startsWith('loop.'); // a loop, or a node of its body: one item an iteration
      sections.itemsTitle.textContent = `${isLoop ? 'Iterations' : 'Items'} (${itemsTotal})`;
      replace(sections.items, h('table', { class: 'data compact' },
        h('thead', {}, h('tr', {}, ['Index', 'Key', 'Status', 'Attempts', 'Error'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map(itemRow))));
      itemsLoaded = items.length;
    } else {
      sections.itemsBox.hidden = true;
      itemsLoaded = 0;
    }
    sections.more.hidden = itemsLoaded >= itemsTotal;
    sections.more.textContent = `Show ${Math.min(ITEMS_PAGE, itemsTotal - itemsLoaded)} more (${itemsLoaded} of ${itemsTotal} shown)`;
  }

  function itemRow(it) {
    const key = it.key === undefined || it.key === null ? '' : (typeof it.key === 'string' ? it.key : JSON.stringify(it.key));
    return h('tr', { 'data-index': Array.isArray(it.index) ? it.index.join(',') : String(it.index ?? '') },
      h('td', { class: 'num' }, Array.isArray(it.index) ? it.index.join(', ') : String(it.index ?? '')),
      h('td', { class: 'wrap' }, key), h('td', {}, badge(it.status || 'pending')),
      h('td', { class: 'num' }, it.attempts ? String(it.attempts) : ''),
      h('td', { class: 'wrap' }, it.error ? errorText(it.error) : ''));
  }

  async function moreItems() {
    if (!current || !ctl) return;
    const sig = ctl.signal;
    sections.more.disabled = true;
    try {
      const d = await loadDetail(current, itemsLoaded, ITEMS_PAGE, sig);
      const tbody = sections.items.querySelector('tbody');
      for (const it of d.items || []) tbody.appendChild(itemRow(it));
      itemsLoaded += (d.items || []).length;
      itemsTotal = d.items_total || itemsTotal;
      sections.itemsTitle.textContent = sections.itemsTitle.textContent.replace(/\(\d+\)/, `(${itemsTotal})`);
      sections.more.hidden = itemsLoaded >= itemsTotal || (d.items || []).length === 0;
      sections.more.textContent = `Show ${Math.min(ITEMS_PAGE, itemsTotal - itemsLoaded)} more (${itemsLoaded} of ${itemsTotal} shown)`;
    } catch (e) {
      if (e.name !== 'AbortError') sections.more.textContent = `Could not load more: ${e.message}. Try again`;
    } finally {
      sections.more.disabled = false;
    }
  }

  function logLine(l) {
    const idx = Array.isArray(l.index) && l.index.length ? `[${l.index.join(',')}] ` : '';
    return h('li', { class: `log ${l.level || 'info'}` }, time(l.time, { short: true }), ' ',
      h('span', { class: 'level' }, (l.level || 'info').toUpperCase()), ' ',
      h('span', { class: 'msg' }, `${idx}${l.attempt > 1 ? `(attempt ${l.attempt}) ` : ''}${visibleControls(l.message ?? '')}`));
  }

  function startLogs(id, sig) {
    const over = isOver();
    sections.logState.textContent = over ? '' : 'following';
    let count = 0;
    let pending = [];
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      if (!pending.length || sig.aborted) return;
      const box = sections.logs;
      const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
      const frag = document.createDocumentFragment();
      for (const l of pending) frag.appendChild(logLine(l));
      pending = [];
      box.appendChild(frag);
      while (box.childElementCount > MAX_LOG_LINES) box.firstElementChild.remove();
      if (stick) box.scrollTop = box.scrollHeight;
    };
    followLogs(execID, id, {
      signal: sig, follow: !over, isOver: async () => isOver(),
      onLine: (l) => { count++; pending.push(l); if (!scheduled) { scheduled = true; requestAnimationFrame(flush); } },
      onState: (st, e) => { if (st === 'error') sections.logState.textContent = `logs unavailable: ${e.message}`; },
    }).then(() => {
      if (sig.aborted) return;
      flush();
      sections.logState.textContent = '';
      if (count === 0 && !sections.logs.childElementCount) sections.logs.replaceChildren(h('li', { class: 'muted' }, 'No log lines.'));
    });
  }

  async function open(id, from) {
    ctl?.abort();
    ctl = new AbortController();
    const sig = ctl.signal;
    signal.addEventListener('abort', () => ctl?.abort(), { once: true });
    const wasOpen = Boolean(current);
    current = id;
    returnTo = from || (document.activeElement !== document.body ? document.activeElement : null);
    build(id);
    el.hidden = false;
    document.body.classList.add('panel-open');
    el.querySelector('h2').focus({ preventScroll: wasOpen });
    replace(sections.error, h('p', { class: 'muted' }, 'Loading…'));
    try {
      showDetail(await loadDetail(id, 0, ITEMS_PAGE, sig));
    } catch (e) {
      if (e.name === 'AbortError') return;
      replace(sections.error, h('p', { class: 'error-box', role: 'alert' }, `Cannot load the node: ${e.message}`));
      if (e.status === 404) return; // no such node: no logs to follow
    }
    startLogs(id, sig);
  }

  // refresh loads the open node again (its status changed); at most once a second.
  function refresh(id) {
    if (!current || (id && id !== current && !current.startsWith(id + '/'))) return;
    if (refreshTimer) return;
    refreshTimer = setTimeout(async () => {
      refreshTimer = 0;
      if (!current || !ctl) return;
      const sig = ctl.signal;
      try {
        const d = await loadDetail(current, 0, Math.min(500, Math.max(ITEMS_PAGE, itemsLoaded)), sig);
        if (!sig.aborted) showDetail(d);
      } catch { /* kept as it was */ }
    }, 1000);
  }

  return { el, open, close, refresh, get node() { return current; } };
}

function finishedNode(st) { return !['pending', 'running', 'waiting', 'retrying'].includes(st); }
