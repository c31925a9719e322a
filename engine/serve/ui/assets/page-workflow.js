// A workflow's page: what it is, its DAG, its recent runs and the Run dialog for its manual
// triggers.
import { h, replace, every } from './dom.js';
import * as api from './api.js';
import { normalizeGraph, renderDag } from './dag.js';
import { triggerList } from './triggers.js';
import { jsonEditor } from './jsoneditor.js';
import { runsTable } from './runtable.js';

export function canOperate(session) { return !session || session.scope === 'operate' || session.scope === 'admin'; }

function runDialog(wf, manual, ctx) {
  const dialogTitle = h('h2', { id: 'run-dialog-title' }, `Run ${wf.name}`);
  const submit = h('button', { type: 'button', id: 'run-submit', class: 'primary' }, 'Run');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const result = h('p', { class: 'error-text', role: 'alert', hidden: true });
  const editor = jsonEditor({
    id: 'payload', errorID: 'payload-error', label: 'Payload (JSON object)', value: '{}', objectOnly: true, rows: 10,
    onChange: (ok) => { submit.disabled = !ok; },
  });
  let select = null;
  if (manual.length > 1) {
    select = h('select', { id: 'run-trigger' }, manual.map((t) => h('option', { value: t.name }, t.name)));
  }
  const dialog = h('dialog', { id: 'run-dialog', 'aria-labelledby': 'run-dialog-title' },
    h('div', { class: 'dialog-body' }, dialogTitle,
      select ? h('p', {}, h('label', { for: 'run-trigger' }, 'Trigger '), select) : h('p', { class: 'muted small' }, `Trigger: ${manual[0].name}`),
      editor.el,
      h('p', { class: 'muted small' }, 'The payload is the run\'s trigger.payload. Ctrl+Enter runs.'),
      result,
      h('div', { class: 'actions' }, cancel, submit)));
  cancel.addEventListener('click', () => dialog.close());
  const go = async () => {
    if (!editor.state.ok || submit.disabled) return;
    submit.disabled = true;
    result.hidden = true;
    try {
      const body = { payload: editor.state.value };
      if (select) body.trigger = select.value;
      const res = await api.post(`/v1/workflows/${api.enc(wf.name)}/runs`, body, { signal: ctx.signal });
      dialog.close();
      if (res && res.execution_id) ctx.navigate(`/ui/runs/${api.enc(res.execution_id)}`);
    } catch (e) {
      if (e.name === 'AbortError') return;
      result.hidden = false;
      if (e.status === 409 && e.body.skipped) result.textContent = `Not started: ${e.body.reason || 'a run of this workflow is going on'}.`;
      else if (e.status === 403) result.textContent = `Not allowed: ${e.message}`;
      else result.textContent = `Could not start the run: ${e.message}`;
    } finally {
      submit.disabled = !editor.state.ok;
    }
  };
  submit.addEventListener('click', go);
  editor.area.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); go(); }
  });
  return { dialog, open: () => { result.hidden = true; dialog.showModal(); editor.area.focus(); } };
}

// showNode says what a node of the graph is and what it is linked to.
function showNode(host, g, id) {
  const i = g.index.get(id);
  if (i === undefined) return;
  const n = g.nodes[i];
  const ups = [];
  const downs = [];
  for (const e of g.edges) {
    const label = e.labels.length ? ` (${e.labels.join(', ')})` : '';
    if (e.to === i) ups.push(g.nodes[e.from].id + label);
    if (e.from === i) downs.push(g.nodes[e.to].id + label);
  }
  const list = (xs) => (xs.length ? h('ul', { class: 'inline-list' }, xs.map((x) => h('li', {}, h('code', {}, x)))) : h('span', { class: 'muted' }, 'none'));
  replace(host, h('h3', {}, h('code', {}, n.id)),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Kind'), h('dd', {}, n.kind),
      n.uses ? [h('dt', {}, 'Runs'), h('dd', {}, h('code', {}, n.uses), n.forEach ? ' for each item' : '')] : null,
      n.calls ? [h('dt', {}, 'Calls'), h('dd', {}, h('a', { href: `/ui/workflows/${api.enc(n.calls)}` }, n.calls))] : null,
      n.group ? [h('dt', {}, 'Inside'), h('dd', {}, h('code', {}, n.group))] : null,
      h('dt', {}, 'After'), h('dd', {}, list(ups)),
      h('dt', {}, 'Before'), h('dd', {}, list(downs))));
}

export async function render(main, ctx) {
  const name = ctx.params[0];
  ctx.setTitle(name);
  replace(main, h('p', { class: 'muted' }, 'Loading…'));
  const [list, graph] = await Promise.all([
    api.get('/v1/workflows', { signal: ctx.signal }),
    api.get(`/v1/workflows/${api.enc(name)}/graph`, { signal: ctx.signal }).catch((e) => {
      if (e.name === 'AbortError') throw e;
      return { error: e };
    }),
  ]);
  const wf = (list.workflows || []).find((w) => w.name === name);
  if (!wf) {
    replace(main, h('h1', {}, name), h('p', { role: 'alert', class: 'error-box' }, 'serve runs no workflow of this name. ',
      h('a', { href: '/ui/' }, 'See the workflows.')));
    return;
  }
  const manual = (wf.triggers || []).filter((t) => t.type === 'manual');
  const head = h('div', { class: 'page-head' },
    h('div', {}, h('p', { class: 'crumbs' }, h('a', { href: '/ui/' }, 'Workflows'), ' / '), h('h1', {}, wf.name),
      wf.description ? h('p', { class: 'lead' }, wf.description) : null),
    h('div', { class: 'head-actions' }));
  let dlg = null;
  if (manual.length) {
    dlg = runDialog(wf, manual, ctx);
    const btn = h('button', { type: 'button', id: 'run', class: 'primary', 'aria-haspopup': 'dialog' }, 'Run…');
    if (!canOperate(ctx.session)) { btn.disabled = true; btn.title = 'Your token\'s scope is read: starting runs needs operate.'; }
    btn.addEventListener('click', () => dlg.open());
    head.lastChild.appendChild(btn);
  }
  const facts = h('dl', { class: 'facts' },
    h('dt', {}, 'File'), h('dd', {}, h('code', { class: 'path' }, wf.file || '')),
    h('dt', {}, 'Triggers'), h('dd', {}, triggerList(wf.triggers)));
  const dagHost = h('div', { class: 'dag-host' });
  const runs = runsTable({ id: 'workflow-runs', withWorkflow: false, caption: `Recent runs of ${wf.name}` });
  replace(main, head, facts,
    h('section', { 'aria-labelledby': 'graph-title' }, h('h2', { id: 'graph-title' }, 'Graph'), dagHost),
    h('section', { 'aria-labelledby': 'recent-title' }, h('div', { class: 'section-head' }, h('h2', { id: 'recent-title' }, 'Recent runs'),
      h('a', { href: `/ui/runs?workflow=${api.enc(wf.name)}` }, 'All runs')), h('div', { class: 'table-wrap' }, runs.table)),
    dlg ? dlg.dialog : null);

  if (graph.error) {
    const e = graph.error;
    replace(dagHost, h('p', { class: 'muted' }, e.status === 404 ? 'This serve does not draw graphs yet (no graph endpoint).' : `The graph could not be loaded: ${e.message}`));
  } else {
    const g = normalizeGraph(graph);
    const info = h('div', { id: 'node-info', class: 'node-info', 'aria-live': 'polite' });
    const dag = renderDag(dagHost, g, {
      title: `Graph of workflow ${wf.name}: ${g.nodes.length} nodes`,
      onOpen: (id) => { dag.setSelected(id); showNode(info, g, id); },
    });
    dagHost.appendChild(info);
  }

  const loadRuns = async () => {
    const data = await api.get(`/v1/executions${api.q({ workflow: wf.name, limit: 10 })}`, { signal: ctx.signal });
    runs.set(data.executions || [], { empty: manual.length ? 'No runs yet. Run it with the Run button.' : 'No runs yet.' });
  };
  await loadRuns();
  runs.firstLoad();
  every(3000, loadRuns, ctx.signal);
}
