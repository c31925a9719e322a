// The workflows page: every workflow serve runs, its triggers, recent outcomes and last run,
// and the files that do not load with their diagnostics.
import { h, replace, every } from './dom.js';
import * as api from './api.js';
import { time, badge, between, duration, shortID } from './format.js';
import { triggerList } from './triggers.js';

const ORDER = ['running', 'waiting', 'interrupted', 'succeeded', 'completed_with_errors', 'failed', 'timed_out', 'cancelled'];

function counts(name, runs) {
  const keys = Object.keys(runs || {}).filter((k) => runs[k] > 0);
  if (keys.length === 0) return h('p', { class: 'muted' }, 'no runs');
  keys.sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99));
  return h('ul', { class: 'counts', 'aria-label': 'Outcomes of the last 100 runs' }, keys.map((k) => h('li', {},
    h('a', { href: `/ui/runs${api.q({ workflow: name, status: k })}`, class: ['count', `st-${k}`] }, `${runs[k]} ${k.replace(/_/g, ' ')}`))));
}

function basename(p) { return String(p || '').split('/').pop(); }

function lastRun(r) {
  if (!r) return h('span', { class: 'muted' }, '—');
  return h('div', { class: 'last-run' },
    h('a', { href: `/ui/runs/${api.enc(r.execution_id)}`, title: r.execution_id }, shortID(r.execution_id)), ' ', badge(r.status),
    h('div', { class: 'muted small' }, time(r.started_at), r.finished_at ? ` · ${duration(between(r.started_at, r.finished_at))}` : ''));
}

function table(workflows) {
  if (workflows.length === 0) {
    return h('p', { class: 'empty' }, 'serve runs no workflow. Give it a directory or files: ', h('code', {}, 'fuscia serve DIR'), '.');
  }
  const rows = workflows.map((w) => {
    const all = h('a', { class: 'small', href: `/ui/runs${api.q({ workflow: w.name })}` }, 'all runs');
    const runsCell = h('td', { class: 'runs' }, w.runs !== undefined ? counts(w.name, w.runs) : null, all);
    return h('tr', { 'data-workflow': w.name },
      h('th', { scope: 'row' }, h('a', { href: `/ui/workflows/${api.enc(w.name)}`, class: 'wf-name' }, w.name),
        w.description ? h('div', { class: 'muted small' }, w.description) : null),
      h('td', { class: 'trig' }, triggerList(w.triggers)),
      runsCell,
      h('td', { class: 'last' }, w.last_run !== undefined ? lastRun(w.last_run) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'file' }, h('code', { class: 'path', title: w.file || '' }, basename(w.file))));
  });
  return h('div', { class: 'table-wrap' }, h('table', { id: 'workflows', class: 'data' },
    h('caption', { class: 'sr-only' }, 'Workflows'),
    h('thead', {}, h('tr', {}, ['Workflow', 'Triggers', 'Recent runs', 'Last run', 'File'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)));
}

// diagWhere is where a diagnostic of file is: its line, and its file when that is another one (a
// file the workflow calls).
function diagWhere(file, d) {
  const line = d.line ? `line ${d.line}${d.column ? `:${d.column}` : ''}` : '';
  if (d.filename && d.filename !== file) return line ? `${d.filename} ${line}` : d.filename;
  return line || d.filename || '';
}

export function loadErrors(errors) {
  if (!errors || errors.length === 0) return null;
  return h('section', { id: 'load-errors', class: 'card danger', 'aria-labelledby': 'load-errors-title' },
    h('h2', { id: 'load-errors-title' }, errors.length === 1 ? 'A file does not load' : `${errors.length} files do not load`),
    h('p', { class: 'muted small' }, 'serve loads these files again when they change. A file that broke on a reload keeps its previous version running (listed above); the others are not served until they are fixed.'),
    h('ul', { class: 'load-errors' }, errors.map((e) => h('li', {},
      h('code', { class: 'path' }, e.file || ''),
      h('ul', { class: 'diags' }, (e.diagnostics || []).map((d) => h('li', { class: `diag ${d.severity || 'error'}` },
        h('span', { class: 'diag-where' }, diagWhere(e.file, d)),
        ' ', h('strong', { class: 'diag-summary' }, d.summary || ''),
        d.detail ? h('div', { class: 'diag-detail' }, d.detail) : null)))))));
}

export async function render(main, ctx) {
  ctx.setTitle('Workflows');
  const body = h('div', { class: 'page-body' }, h('p', { class: 'muted' }, 'Loading…'));
  replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Workflows')), body);
  let last = '';
  const load = async () => {
    const data = await api.get('/v1/workflows', { signal: ctx.signal });
    const key = JSON.stringify(data);
    if (key === last) return; // unchanged: keep the focus where it is
    last = key;
    const wfs = (data.workflows || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    replace(body, loadErrors(data.errors), table(wfs));
  };
  await load();
  every(10000, load, ctx.signal);
}
