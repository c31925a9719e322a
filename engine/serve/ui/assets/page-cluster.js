// The cluster page: serve's workers (with -nats) and the attempts waiting for one, by pool.
import { h, replace, every } from './dom.js';
import * as api from './api.js';
import { time, duration, between } from './format.js';

function workersTable(workers) {
  const rows = workers.map((w) => h('tr', { 'data-worker': w.id, class: w.disabled ? 'disabled' : null },
    h('th', { scope: 'row' }, h('code', {}, w.id), w.local ? h('span', { class: 'tag' }, 'local') : null, w.disabled ? h('span', { class: 'tag warn' }, 'disabled') : null),
    h('td', {}, w.host || ''),
    h('td', {}, (w.pools || []).join(', ')),
    h('td', { class: 'num' }, `${w.running ?? 0} / ${w.concurrency ?? '?'}`),
    h('td', {}, time(w.last_heartbeat, { short: true }), w.last_heartbeat ? h('span', { class: 'muted small' }, ` (${duration(between(w.last_heartbeat))} ago)`) : null),
    h('td', {}, w.version || ''),
    h('td', {}, time(w.started))));
  return h('div', { class: 'table-wrap' }, h('table', { id: 'workers', class: 'data' },
    h('caption', { class: 'sr-only' }, 'Workers'),
    h('thead', {}, h('tr', {}, ['Worker', 'Host', 'Pools', 'Running / slots', 'Last heartbeat', 'Version', 'Started'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No live worker. Start one with fuscia worker.')))));
}

function queue(depth) {
  const pools = Object.keys(depth || {}).sort();
  return h('section', { 'aria-labelledby': 'queue-title' }, h('h2', { id: 'queue-title' }, 'Queue depth'),
    h('dl', { id: 'queue-depth', class: 'queue' }, pools.length ? pools.map((p) => [h('dt', {}, p), h('dd', { 'data-pool': p }, String(depth[p]))])
      : [h('dt', {}, 'all pools'), h('dd', {}, '0')]),
    h('p', { class: 'muted small' }, 'Task attempts waiting for a worker of the pool.'));
}

export async function render(main, ctx) {
  ctx.setTitle('Cluster');
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Cluster')), body);
  let last = '';
  const load = async () => {
    let data;
    try {
      data = await api.get('/v1/workers', { signal: ctx.signal });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      if (e.status === 409 && e.code === 'no_cluster') {
        if (last !== 'no_cluster') {
          last = 'no_cluster';
          replace(body, h('div', { id: 'no-cluster', class: 'card' }, h('h2', {}, 'No cluster'),
            h('p', {}, 'This serve runs every task itself: it was started without ', h('code', {}, '-nats'), '. ',
              'Start serve with ', h('code', {}, '-nats URL'), ' and run ', h('code', {}, 'fuscia worker'), ' on other machines to spread the work; see docs/cluster.md.')));
        }
        return;
      }
      last = '';
      replace(body, h('p', { class: 'error-box', role: 'alert' }, `Cannot load the workers: ${e.message}`));
      return;
    }
    last = 'workers'; // drawn again each time: the heartbeats' ages move on
    const workers = (data.workers || []).slice().sort((a, b) => String(a.id).localeCompare(String(b.id)));
    replace(body, h('section', { 'aria-labelledby': 'workers-title' }, h('h2', { id: 'workers-title' }, `Workers (${workers.length})`), workersTable(workers)),
      queue(data.queue_depth));
  };
  await load();
  every(5000, load, ctx.signal);
}
