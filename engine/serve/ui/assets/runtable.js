// A table of runs (the runs page's and a workflow's recent runs), updated in place so that new
// runs appear and running ones change without disturbing the rest.
import { h, replace } from './dom.js';
import { enc } from './api.js';
import { time, badge, duration, between, shortID } from './format.js';

export function runsTable({ id, withWorkflow = true, caption = 'Runs' }) {
  const tbody = h('tbody');
  const cols = ['Run', ...(withWorkflow ? ['Workflow'] : []), 'Status', 'Trigger', 'Started', 'Duration'];
  const table = h('table', { id, class: 'data runs' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))), tbody);
  const rows = new Map(); // id → {tr, key}
  const row = (r) => {
    const trig = r.trigger ? `${r.trigger.type || ''}${r.trigger.name && r.trigger.name !== 'default' ? ` ${r.trigger.name}` : ''}` : '';
    return h('tr', { 'data-execution': r.execution_id },
      h('th', { scope: 'row' }, h('a', { href: `/ui/runs/${enc(r.execution_id)}`, title: r.execution_id, class: 'mono' }, shortID(r.execution_id)),
        r.parent_execution_id ? h('span', { class: 'muted small' }, ' (child)') : null),
      withWorkflow ? h('td', {}, h('a', { href: `/ui/workflows/${enc(r.workflow)}` }, r.workflow)) : null,
      h('td', { class: 'status' }, badge(r.status)),
      h('td', { class: 'trigger' }, trig),
      h('td', {}, time(r.started_at, { short: true })),
      h('td', { class: 'num' }, r.finished_at ? duration(between(r.started_at, r.finished_at)) : h('span', { class: 'muted' }, `${duration(between(r.started_at))}…`)));
  };
  return {
    table,
    // set shows exactly these runs in this order, reusing unchanged rows.
    set(list, { empty } = {}) {
      const seen = new Set();
      const trs = [];
      for (const r of list) {
        seen.add(r.execution_id);
        const key = `${r.status}|${r.finished_at || ''}|${r.finished_at ? '' : Math.floor(between(r.started_at) / 1000)}`;
        const old = rows.get(r.execution_id);
        if (old && old.key === key) { trs.push(old.tr); continue; }
        const tr = row(r);
        if (!old) tr.classList.add('new');
        rows.set(r.execution_id, { tr, key });
        trs.push(tr);
      }
      for (const k of [...rows.keys()]) if (!seen.has(k)) rows.delete(k);
      if (trs.length === 0) {
        replace(tbody, h('tr', { class: 'empty-row' }, h('td', { colspan: cols.length, class: 'empty' }, empty || 'No runs.')));
        return;
      }
      // Keep nodes that did not move, to keep focus and selection.
      const current = [...tbody.children];
      if (current.length !== trs.length || current.some((tr, i) => tr !== trs[i])) replace(tbody, trs);
    },
    firstLoad() { for (const { tr } of rows.values()) tr.classList.remove('new'); },
  };
}
