// A run's page: its DAG with each node's state, updated live from the run's event stream; the
// errors of failed nodes without a click; the timeline of attempts; the node panel; and the
// actions (cancel, resume, approve or reject a waiting approval, answer a callback).
import { h, replace, on, every } from './dom.js';
import * as api from './api.js';
import { time, duration, between, nodeStatus, finished, statusLabel, errorText, jsonBlock, shortID } from './format.js';
import { normalizeGraph, renderDag, addNode } from './dag.js';
import { renderTimeline, fromExecution } from './timeline.js';
import { createPanel, nodeViewOf } from './panel.js';
import { followEvents } from './stream.js';
import { jsonEditor } from './jsoneditor.js';
import { canOperate } from './page-workflow.js';

// bodyStatus is a loop body node's status over the loop's iterations: running while one runs,
// else its status in the last iteration that has it.
function bodyViews(ex) {
  const out = new Map();
  for (const [loopID, n] of Object.entries(ex.nodes || {})) {
    for (const it of n.iterations || []) {
      for (const [local, v] of Object.entries(it.nodes || {})) {
        const id = `${loopID}/${local}`;
        const old = out.get(id);
        if (old && old.status === 'running') continue;
        out.set(id, v);
      }
    }
  }
  return out;
}

const FINAL = new Set(['succeeded', 'failed', 'completed_with_errors', 'skipped', 'cancelled', 'timed_out']);

// shownError: a node's error is drawn in it when the node failed (or was cancelled with a reason).
function shownError(v) {
  return Boolean(v && v.error && ['failed', 'timed_out', 'completed_with_errors', 'cancelled'].includes(v.status));
}

// inNode is the error drawn in a node: its message (the kind is in the list above the graph and
// in the node's panel), so that the little room there goes to what happened.
function inNode(err) { return err.message || err.kind || 'error'; }

function subFor(v) {
  if (!v) return 'pending';
  const parts = [statusLabel(v.status)];
  if (v.attempts > 1) parts.push(`${v.attempts} attempts`);
  const items = v.instances || v.iterations;
  if (items && items.length) parts.push(`${items.length} ${v.iterations ? 'iterations' : 'items'}`);
  if (v.started_at && v.finished_at) parts.push(duration(between(v.started_at, v.finished_at)));
  return parts.join(' · ');
}

// graphFromExecution is the picture when serve cannot draw the workflow: its nodes, no edges.
function graphFromExecution(ex) {
  const nodes = [];
  for (const id of Object.keys(ex.nodes || {})) nodes.push({ id });
  for (const id of bodyViews(ex).keys()) nodes.push({ id, group: id.slice(0, id.indexOf('/')) });
  return { nodes, edges: [], groups: [] };
}

export async function render(main, ctx) {
  const id = ctx.params[0];
  ctx.setTitle(`Run ${shortID(id)}`);
  replace(main, h('p', { class: 'muted' }, 'Loading…'));
  const signal = ctx.signal;
  let ex;
  try {
    ex = await api.get(`/v1/executions/${api.enc(id)}`, { signal });
  } catch (e) {
    if (e.status === 404) {
      replace(main, h('h1', {}, `Run ${id}`), h('p', { class: 'error-box', role: 'alert' }, 'There is no run with this id (it may have been pruned). ', h('a', { href: '/ui/runs' }, 'See the runs.')));
      return;
    }
    throw e;
  }
  if (ex.execution_id && ex.execution_id !== id) history.replaceState(null, '', `/ui/runs/${api.enc(ex.execution_id)}${location.search}`);
  const execID = ex.execution_id || id;
  ctx.setTitle(`${ex.workflow} run ${shortID(execID)}`);
  // The graph the run started with (its journaled plan), not the workflow's current version,
  // whose nodes may have changed since.
  const graphP = api.get(`/v1/executions/${api.enc(execID)}/graph`, { signal }).catch((e) => {
    if (e.name === 'AbortError') throw e;
    return null;
  });
  graphP.catch(() => {}); // awaited below; this only keeps a page left early from logging a rejection

  // Header, facts and actions.
  const statusEl = h('span', { id: 'run-status', class: ['badge', `st-${ex.status}`], role: 'status' }, ex.status);
  const cancelBtn = h('button', { type: 'button', id: 'cancel', class: 'danger' }, 'Cancel run');
  const resumeBtn = h('button', { type: 'button', id: 'resume' }, 'Resume');
  const actionMsg = h('p', { id: 'action-result', class: 'small', role: 'status', 'aria-live': 'polite' });
  const durEl = h('span', {});
  const finishedEl = h('span', {});
  const liveEl = h('span', { class: 'live muted small', 'aria-live': 'polite' });
  const trig = ex.trigger || {};
  const facts = h('dl', { class: 'facts' },
    h('dt', {}, 'Workflow'), h('dd', {}, h('a', { href: `/ui/workflows/${api.enc(ex.workflow)}` }, ex.workflow)),
    h('dt', {}, 'Trigger'), h('dd', {}, `${trig.type || ''}${trig.name && trig.name !== 'default' ? ` ${trig.name}` : ''}`),
    h('dt', {}, 'Started'), h('dd', {}, time(ex.started_at)),
    h('dt', {}, 'Finished'), h('dd', {}, finishedEl),
    h('dt', {}, 'Duration'), h('dd', {}, durEl),
    ex.parent_execution_id ? [h('dt', {}, 'Called by'), h('dd', {}, h('a', { href: `/ui/runs/${api.enc(ex.parent_execution_id)}` }, ex.parent_execution_id))] : null,
    h('dt', {}, 'Execution'), h('dd', {}, h('code', { class: 'mono' }, execID)),
    trig.payload !== undefined ? [h('dt', {}, 'Payload'), h('dd', {}, h('details', { class: 'payload' }, h('summary', {}, 'the trigger\'s payload'), jsonBlock(trig.payload)))] : null);
  const errorsList = h('ul', { id: 'run-errors', class: 'run-errors' });
  const errorsBox = h('section', { class: 'card danger', 'aria-labelledby': 'errors-title', hidden: true },
    h('h2', { id: 'errors-title' }, 'Errors'), errorsList);
  const waitBox = h('div', { class: 'wait-host' });
  const dagHost = h('div', { class: 'dag-host' });
  const tlHost = h('div', { class: 'timeline-host' }, h('p', { class: 'muted' }, 'Loading…'));
  const outputsBox = h('section', { 'aria-labelledby': 'outputs-title', hidden: true }, h('h2', { id: 'outputs-title' }, 'Outputs'), h('div', {}));
  const panel = createPanel({
    execID, signal,
    getExecution: () => ex,
    fetchExecution: async (sig) => { ex = await api.get(`/v1/executions/${api.enc(execID)}`, { signal: sig }); return ex; },
    isOver: () => finished(ex.status),
    onClose: () => { dag?.setSelected(null); setQueryNode(null); },
  });
  const head = h('div', { class: 'page-head' },
    h('div', {}, h('p', { class: 'crumbs' }, h('a', { href: '/ui/runs' }, 'Runs'), ' / ', h('a', { href: `/ui/workflows/${api.enc(ex.workflow)}` }, ex.workflow), ' / '),
      h('h1', {}, 'Run ', h('span', { class: 'mono', title: execID }, shortID(execID)), ' ', statusEl), liveEl),
    h('div', { class: 'head-actions' }, resumeBtn, cancelBtn));
  replace(main, h('div', { class: 'run-layout' },
    h('div', { class: 'run-main' }, head, actionMsg, facts, errorsBox, waitBox,
      h('section', { 'aria-labelledby': 'graph-title' }, h('h2', { id: 'graph-title' }, 'Graph'), dagHost),
      h('section', { 'aria-labelledby': 'timeline-title' }, h('h2', { id: 'timeline-title' }, 'Timeline'), tlHost),
      outputsBox),
    panel.el));

  const operate = canOperate(ctx.session);
  const updateHeader = () => {
    statusEl.textContent = ex.status;
    statusEl.className = `badge st-${ex.status}`;
    const over = finished(ex.status);
    cancelBtn.disabled = over || !operate;
    cancelBtn.hidden = over;
    resumeBtn.disabled = ex.status !== 'interrupted' || !operate;
    resumeBtn.hidden = ex.status !== 'interrupted';
    if (!operate) cancelBtn.title = resumeBtn.title = 'Your token\'s scope is read: this needs operate.';
    replace(finishedEl, ex.finished_at ? time(ex.finished_at) : h('span', { class: 'muted' }, 'not yet'));
    durEl.textContent = `${duration(between(ex.started_at, ex.finished_at))}${ex.finished_at ? '' : ' so far'}`;
    if (over) {
      outputsBox.hidden = ex.outputs === null || ex.outputs === undefined || (typeof ex.outputs === 'object' && Object.keys(ex.outputs).length === 0);
      replace(outputsBox.lastChild, jsonBlock(ex.outputs));
    }
  };
  updateHeader();
  every(1000, async () => { if (!finished(ex.status)) durEl.textContent = `${duration(between(ex.started_at))} so far`; }, signal);

  // Errors shown without a click: the run's own and every failed node's (and failed items).
  const errors = new Map();
  const renderErrors = () => {
    const items = [];
    if (ex.error) items.push(h('li', { class: 'run-error' }, h('strong', {}, 'Run: '), errorText(ex.error)));
    let n = 0;
    for (const [key, e] of errors) {
      if (++n > 50) { items.push(h('li', { class: 'muted' }, `and ${errors.size - 50} more`)); break; }
      items.push(h('li', { 'data-node': key },
        h('button', { type: 'button', class: 'link', onclick: () => openNode(e.node) }, e.label), ': ',
        h('span', { class: 'error-kind' }, e.error.kind || 'error'), ' ', h('span', { class: 'error-message' }, e.error.message || '')));
    }
    replace(errorsList, items);
    errorsBox.hidden = items.length === 0;
  };
  // errorsSoon draws the list once per frame however many failures arrive (a for_each's items).
  let errorsFrame = 0;
  const errorsSoon = () => {
    if (!errorsFrame) errorsFrame = requestAnimationFrame(() => { errorsFrame = 0; renderErrors(); });
  };
  const addError = (node, index, error) => {
    if (!error) return;
    const idx = Array.isArray(index) && index.length ? `[${index.join(', ')}]` : '';
    errors.set(node + idx, { node, label: node + idx, error });
  };

  // The graph.
  let dag = null;
  const graphData = await graphP;
  const g = normalizeGraph(graphData || graphFromExecution(ex));
  for (const nid of Object.keys(ex.nodes || {})) addNode(g, nid);
  for (const nid of bodyViews(ex).keys()) addNode(g, nid, nid.slice(0, nid.indexOf('/')));
  performance.mark('fuscia:run-data');
  const bodies = bodyViews(ex);
  dag = renderDag(dagHost, g, {
    run: true,
    title: `Graph of run ${execID} of ${ex.workflow}: ${g.nodes.length} nodes`,
    initial: (nid) => {
      const v = (ex.nodes || {})[nid] || bodies.get(nid);
      if (!v) return { status: 'pending', sub: 'pending' };
      return { status: nodeStatus(v.status), sub: subFor(v), error: shownError(v) ? inNode(v.error) : null };
    },
    onOpen: (nid) => openNode(nid),
  });
  if (!graphData) dagHost.prepend(h('p', { class: 'muted small' }, 'serve could not draw this workflow\'s graph: the nodes are shown without their edges.'));

  // Node states: from the execution object, then from events, applied once per frame.
  const pending = new Map();
  let frame = 0;
  const flush = () => {
    frame = 0;
    for (const [nid, u] of pending) {
      if (u.status) dag.setStatus(nid, nodeStatus(u.status), u.sub);
      if (u.error !== undefined) dag.setError(nid, u.error ? inNode(u.error) : null);
    }
    pending.clear();
  };
  // A top-level node's final status is final: the history an event stream replays does not
  // take it back (a loop body's nodes run again in each iteration, so they may).
  const finals = new Set();
  const update = (nid, u) => {
    if (!dag.has(nid)) return;
    if (!nid.includes('/')) {
      if (finals.has(nid) && u.status && !FINAL.has(u.status)) return;
      if (u.status && FINAL.has(u.status)) finals.add(nid);
    }
    const old = pending.get(nid);
    pending.set(nid, old ? { ...old, ...u } : u);
    if (!frame) frame = requestAnimationFrame(flush);
  };
  const applyExecution = () => {
    errors.clear();
    for (const [nid, v] of Object.entries(ex.nodes || {})) {
      update(nid, { status: v.status, sub: subFor(v), error: shownError(v) ? v.error : null });
      if (v.error && v.status !== 'cancelled') addError(nid, null, v.error);
      (v.instances || []).forEach((it, i) => { if (it.error && it.status !== 'cancelled') addError(nid, [i], it.error); });
    }
    for (const [nid, v] of bodyViews(ex)) {
      update(nid, { status: v.status, sub: subFor(v), error: shownError(v) ? v.error : null });
      if (v.error && v.status !== 'cancelled') addError(nid, null, v.error);
    }
    renderErrors();
    updateHeader();
  };
  // The graph was drawn in its states; this fills the error list and the header.
  applyExecution();
  pending.clear();
  // For the browser tests and anyone curious: the graph with its states is on the page.
  performance.mark('fuscia:dag-drawn');

  // Waits that a person answers: approvals and callbacks.
  const waits = new Map(); // node → {reason, message, deadline}
  const renderWaits = () => renderWaitBox(waitBox, [...waits.entries()], { execID, signal, operate, answered: (node) => { waits.delete(node); renderWaits(); } });

  // The timeline: from serve's timeline endpoint, else made from the execution object.
  let tlMissing = false;
  let tlDirty = false;
  const loadTimeline = async () => {
    let data = null;
    if (!tlMissing) {
      try {
        data = await api.get(`/v1/executions/${api.enc(execID)}/timeline`, { signal });
      } catch (e) {
        if (e.name === 'AbortError') throw e;
        if (e.status === 404) tlMissing = true;
        else { replace(tlHost, h('p', { class: 'muted' }, `The timeline could not be loaded: ${e.message}`)); return; }
      }
    }
    if (!data) {
      if (!finished(ex.status)) ex = await api.get(`/v1/executions/${api.enc(execID)}`, { signal });
      data = fromExecution(ex);
    }
    try {
      renderTimeline(tlHost, data, { running: !finished(ex.status), onOpen: (nid) => openNode(nid) });
    } catch (e) {
      replace(tlHost, h('p', { class: 'muted' }, `The timeline could not be drawn: ${e.message}`));
    }
  };
  // After the graph's first paint: the timeline is below it and can wait a frame.
  requestAnimationFrame(() => setTimeout(() => {
    performance.mark('fuscia:dag-painted');
    if (!signal.aborted) loadTimeline().catch(() => {});
  }, 0));
  every(3000, async () => {
    if (!tlDirty && finished(ex.status)) return;
    tlDirty = false;
    await loadTimeline();
  }, signal);

  // Events: live states.
  const onEvent = (ev) => {
    const nid = ev.node;
    const idx = Array.isArray(ev.index) && ev.index.length ? ev.index : null;
    const body = nid && nid.includes('/');
    switch (ev.type) {
      case 'execution_started':
        if (!finished(ex.status)) { ex.status = 'running'; updateHeader(); }
        break;
      case 'node_started':
        if (idx && !body) break;
        update(nid, { status: 'running', sub: ev.attempt > 1 ? `running · attempt ${ev.attempt}` : (ev.total ? `running · 0/${ev.total}` : 'running'), error: null });
        tlDirty = true;
        break;
      case 'node_progress':
        update(nid, { status: 'running', sub: `running · ${ev.done}/${ev.total}` });
        break;
      case 'node_retrying':
        if (idx && !body) break;
        update(nid, { status: 'retrying', sub: `retrying · attempt ${ev.attempt} failed${ev.error ? ` (${ev.error.kind})` : ''}` });
        tlDirty = true;
        break;
      case 'node_waiting':
        update(nid, { status: 'waiting', sub: `waiting · ${ev.reason || ''}` });
        if (ev.reason === 'approval' || ev.reason === 'callback') {
          waits.set(nid, { reason: ev.reason, message: ev.message, deadline: ev.deadline });
          renderWaits();
        }
        if (ex.status === 'running') { ex.status = 'waiting'; updateHeader(); }
        tlDirty = true;
        break;
      case 'node_finished': {
        tlDirty = true;
        if (waits.delete(nid)) renderWaits();
        if (idx && !body) {
          if (ev.error && ev.status !== 'cancelled') { addError(nid, idx, ev.error); errorsSoon(); }
          break;
        }
        const failed = ['failed', 'timed_out', 'completed_with_errors'].includes(ev.status);
        const dur = typeof ev.duration === 'number' ? ` · ${duration(ev.duration * 1000)}` : '';
        update(nid, { status: ev.status, sub: `${statusLabel(ev.status)}${dur}`, error: failed || (ev.status === 'cancelled' && ev.error) ? ev.error || null : null });
        if (ev.error && ev.status !== 'cancelled') { addError(nid, null, ev.error); errorsSoon(); }
        if (ex.status === 'waiting' && waits.size === 0) { ex.status = 'running'; updateHeader(); }
        break;
      }
      case 'execution_finished':
        if (ev.execution) ex = ev.execution;
        else { ex.status = ev.status; ex.error = ev.error; }
        waits.clear();
        renderWaits();
        applyExecution();
        tlDirty = true;
        break;
      default:
        return;
    }
    if (nid) panel.refresh(nid);
  };
  let following = false;
  const follow = () => {
    if (following) return;
    following = true;
    followEvents(execID, {
      signal, onEvent,
      onState: (st) => {
        liveEl.textContent = st === 'live' ? (finished(ex.status) ? '' : '● live') : st === 'reconnecting' ? 'reconnecting…' : '';
        if (st === 'unavailable') pollFallback();
      },
      isOver: async () => {
        const fresh = await api.get(`/v1/executions/${api.enc(execID)}`, { signal });
        if (finished(fresh.status)) { ex = fresh; applyExecution(); return true; }
        return false;
      },
    }).finally(() => { following = false; if (!signal.aborted && finished(ex.status)) liveEl.textContent = ''; });
  };
  // Without an events stream, the execution object is fetched again every 2 s.
  let polling = false;
  const pollFallback = () => {
    if (polling) return;
    polling = true;
    for (const [nid, v] of Object.entries(ex.nodes || {})) if (v.status === 'waiting' && nid.startsWith('wait.')) waits.set(nid, { reason: 'approval' });
    renderWaits();
    every(2000, async () => {
      if (finished(ex.status)) return;
      ex = await api.get(`/v1/executions/${api.enc(execID)}`, { signal });
      applyExecution();
      panel.refresh();
    }, signal);
  };
  // A run that ended is shown from its execution object; a run that goes on is followed.
  if (!finished(ex.status)) follow();

  cancelBtn.addEventListener('click', async () => {
    cancelBtn.disabled = true;
    actionMsg.textContent = 'Cancelling…';
    try {
      const r = await api.post(`/v1/executions/${api.enc(execID)}/cancel`, undefined, { signal });
      actionMsg.textContent = `Cancel requested (${r && r.status ? r.status : 'accepted'}).`;
    } catch (e) {
      if (e.name === 'AbortError') return;
      actionMsg.textContent = e.code === 'finished' ? `The run already ended (${e.body.status || ''}).` : `Could not cancel: ${e.message}`;
      cancelBtn.disabled = finished(ex.status) || !operate;
    }
  });
  resumeBtn.addEventListener('click', async () => {
    resumeBtn.disabled = true;
    actionMsg.textContent = 'Resuming…';
    try {
      await api.post(`/v1/executions/${api.enc(execID)}/resume`, undefined, { signal });
      actionMsg.textContent = 'Resumed.';
      ex.status = 'running';
      updateHeader();
      follow();
    } catch (e) {
      if (e.name === 'AbortError') return;
      actionMsg.textContent = `Could not resume: ${e.message}`;
      updateHeader();
    }
  });

  // The node panel: opened by a click, Enter, the error list, or ?node= in the address.
  function setQueryNode(nid) {
    const u = new URL(location.href);
    if (nid) u.searchParams.set('node', nid); else u.searchParams.delete('node');
    history.replaceState(null, '', u.pathname + u.search);
  }
  function openNode(nid) {
    const from = dag.el(nid) || document.activeElement;
    dag.setSelected(nid);
    setQueryNode(nid);
    panel.open(nid, from);
  }
  on(document, 'keydown', (ev) => {
    if (ev.key !== 'Escape' || !panel.node) return;
    if (document.querySelector('dialog[open]')) return;
    ev.preventDefault();
    panel.close();
  }, signal);
  const initial = ctx.query.get('node');
  if (initial) openNode(initial);
}

// renderWaitBox shows the waits a person answers, with the data to send and the buttons.
function renderWaitBox(host, list, { execID, signal, operate, answered }) {
  if (list.length === 0) { host.replaceChildren(); return; }
  let sel = list[0][0];
  const select = list.length > 1 ? h('select', { id: 'signal-node' }, list.map(([nid]) => h('option', { value: nid }, nid))) : null;
  const msg = h('p', { class: 'wait-message' });
  const deadline = h('p', { class: 'muted small' });
  const result = h('p', { class: 'small', role: 'status', 'aria-live': 'polite' });
  const approve = h('button', { type: 'button', id: 'approve', class: 'primary' }, 'Approve');
  const reject = h('button', { type: 'button', id: 'reject', class: 'danger' }, 'Reject');
  const send = h('button', { type: 'button', id: 'signal-send', class: 'primary' }, 'Send');
  const editor = jsonEditor({
    id: 'signal-data', errorID: 'signal-data-error', label: 'Data (optional JSON, the wait\'s output)', allowEmpty: true, rows: 3,
    onChange: (ok) => { approve.disabled = !ok || !operate; reject.disabled = !ok || !operate; send.disabled = !ok || !operate; },
  });
  const title = h('h2', { id: 'wait-title' });
  const show = () => {
    const w = list.find(([nid]) => nid === sel)[1];
    title.textContent = w.reason === 'callback' ? `Waiting for a callback: ${sel}` : `Waiting for approval: ${sel}`;
    msg.textContent = w.message || '';
    replace(deadline, w.deadline ? ['Times out ', time(w.deadline)] : '');
    approve.hidden = w.reason === 'callback';
    reject.hidden = w.reason === 'callback';
    send.hidden = w.reason !== 'callback';
  };
  const act = async (rejectIt) => {
    const body = { node: sel, reject: rejectIt };
    if (editor.state.value !== undefined) body.data = editor.state.value;
    approve.disabled = reject.disabled = send.disabled = true;
    result.textContent = 'Sending…';
    try {
      const r = await api.post(`/v1/executions/${api.enc(execID)}/signal`, body, { signal });
      result.textContent = `${rejectIt ? 'Rejected' : 'Answered'} (${r && r.status ? r.status : 'ok'}).`;
      answered(sel);
    } catch (e) {
      if (e.name === 'AbortError') return;
      result.textContent = e.code === 'not_waiting' ? 'This wait is no longer waiting.' : `Could not answer: ${e.message}`;
      approve.disabled = reject.disabled = send.disabled = !operate;
    }
  };
  approve.addEventListener('click', () => act(false));
  reject.addEventListener('click', () => act(true));
  send.addEventListener('click', () => act(false));
  select?.addEventListener('change', () => { sel = select.value; show(); });
  replace(host, h('section', { id: 'approval', class: 'card attention', 'aria-labelledby': 'wait-title' },
    title, select ? h('p', {}, h('label', { for: 'signal-node' }, 'Wait '), select) : null, msg, deadline, editor.el,
    h('div', { class: 'actions' }, approve, reject, send),
    operate ? null : h('p', { class: 'muted small' }, 'Your token\'s scope is read: answering needs operate.'), result));
  show();
}
