// The runs page: filters (workflow, status, time range), paging through the server's cursor,
// and new runs showing up while the first page is open (it is fetched again every 2 s).
import { h, replace, every } from './dom.js';
import * as api from './api.js';
import { runsTable } from './runtable.js';

const STATUSES = ['running', 'waiting', 'interrupted', 'succeeded', 'failed', 'completed_with_errors', 'cancelled', 'timed_out'];
const PAGE = 50;

// localInput turns an RFC 3339 time into a datetime-local value (the browser's zone), and back.
function toLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
function fromLocalInput(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

export async function render(main, ctx) {
  ctx.setTitle('Runs');
  const f = {
    workflow: ctx.query.get('workflow') || '',
    status: ctx.query.get('status') || '',
    from: ctx.query.get('from') || '',
    to: ctx.query.get('to') || '',
  };
  const wfSelect = h('select', { id: 'filter-workflow' }, h('option', { value: '' }, 'All workflows'));
  if (f.workflow) wfSelect.appendChild(h('option', { value: f.workflow }, f.workflow));
  wfSelect.value = f.workflow;
  const stSelect = h('select', { id: 'filter-status' }, h('option', { value: '' }, 'Any status'),
    STATUSES.map((st) => h('option', { value: st }, st.replace(/_/g, ' '))));
  stSelect.value = f.status;
  const fromIn = h('input', { id: 'filter-from', type: 'datetime-local', value: f.from ? toLocalInput(f.from) : '' });
  const toIn = h('input', { id: 'filter-to', type: 'datetime-local', value: f.to ? toLocalInput(f.to) : '' });
  const clear = h('button', { type: 'button', class: 'small' }, 'Clear filters');
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter runs' },
    h('div', { class: 'field' }, h('label', { for: 'filter-workflow' }, 'Workflow'), wfSelect),
    h('div', { class: 'field' }, h('label', { for: 'filter-status' }, 'Status'), stSelect),
    h('div', { class: 'field' }, h('label', { for: 'filter-from' }, 'Started after'), fromIn),
    h('div', { class: 'field' }, h('label', { for: 'filter-to' }, 'Started before'), toIn),
    h('div', { class: 'field end' }, clear));
  filters.addEventListener('submit', (ev) => ev.preventDefault());

  const runs = runsTable({ id: 'runs', caption: 'Runs, newest first' });
  const prev = h('button', { type: 'button', id: 'prev-page', disabled: true }, '← Newer');
  const next = h('button', { type: 'button', id: 'next-page', disabled: true }, 'Older →');
  const info = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const err = h('p', { class: 'error-box', role: 'alert', hidden: true });
  replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Runs')), filters, err,
    h('div', { class: 'table-wrap' }, runs.table),
    h('nav', { class: 'pager', 'aria-label': 'Pages of runs' }, prev, info, next));

  // Workflows for the filter.
  api.get('/v1/workflows', { signal: ctx.signal }).then((data) => {
    const names = (data.workflows || []).map((w) => w.name).sort();
    const cur = wfSelect.value;
    replace(wfSelect, h('option', { value: '' }, 'All workflows'), names.map((n) => h('option', { value: n }, n)),
      cur && !names.includes(cur) ? h('option', { value: cur }, cur) : null);
    wfSelect.value = cur;
  }).catch(() => {});

  const stack = []; // cursors of the pages before this one
  let cursor = '';
  let nextCursor = '';
  let page = 1;
  let seq = 0;

  const params = () => api.q({
    workflow: f.workflow, status: f.status, started_after: f.from, started_before: f.to, limit: PAGE, cursor,
  });
  const load = async () => {
    const mine = ++seq;
    let data;
    try {
      data = await api.get(`/v1/executions${params()}`, { signal: ctx.signal });
    } catch (e) {
      if (e.name === 'AbortError' || mine !== seq) return;
      err.hidden = false;
      err.textContent = e.status === 400 ? `The filter was refused: ${e.message}` : `Cannot load the runs: ${e.message}`;
      return;
    }
    if (mine !== seq) return; // an older answer that came late
    err.hidden = true;
    const list = data.executions || [];
    nextCursor = data.next_cursor || '';
    const filtered = f.workflow || f.status || f.from || f.to;
    runs.set(list, { empty: filtered ? 'No run matches these filters.' : 'No runs yet. Runs appear here as they start.' });
    prev.disabled = stack.length === 0;
    next.disabled = !nextCursor;
    info.textContent = list.length ? `Page ${page} · ${list.length} run${list.length === 1 ? '' : 's'}${page === 1 ? ' · updating live' : ''}` : '';
  };
  const reset = async () => {
    stack.length = 0;
    cursor = '';
    page = 1;
    const u = api.q({ workflow: f.workflow, status: f.status, from: f.from, to: f.to });
    history.replaceState(null, '', `/ui/runs${u}`);
    await load();
  };
  wfSelect.addEventListener('change', () => { f.workflow = wfSelect.value; reset(); });
  stSelect.addEventListener('change', () => { f.status = stSelect.value; reset(); });
  fromIn.addEventListener('change', () => { f.from = fromLocalInput(fromIn.value); reset(); });
  toIn.addEventListener('change', () => { f.to = fromLocalInput(toIn.value); reset(); });
  clear.addEventListener('click', () => {
    f.workflow = ''; f.status = ''; f.from = ''; f.to = '';
    wfSelect.value = ''; stSelect.value = ''; fromIn.value = ''; toIn.value = '';
    reset();
  });
  next.addEventListener('click', async () => {
    if (!nextCursor) return;
    stack.push(cursor);
    cursor = nextCursor;
    page++;
    await load();
    runs.firstLoad();
  });
  prev.addEventListener('click', async () => {
    if (stack.length === 0) return;
    cursor = stack.pop();
    page--;
    await load();
    runs.firstLoad();
  });

  await load();
  runs.firstLoad();
  // The first page is fetched again while it is shown: new runs come in at its top.
  every(2000, async () => { if (page === 1) await load(); }, ctx.signal);
}
