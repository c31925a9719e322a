// Following a run: its events and its log lines, read with a streaming fetch (NDJSON) and
// picked up again from the last cursor when the connection is cut.
import { ndjson, enc, APIError } from './api.js';
import { sleep } from './dom.js';

function isAbort(e) { return e && (e.name === 'AbortError'); }

// followEvents calls onEvent with each event of run id until the run ends (execution_finished),
// reconnecting with entry_after/log_after after a cut. isOver() is asked after a stream ends
// without execution_finished (a finished run whose stream stopped short).
export async function followEvents(id, { signal, onEvent, onState, isOver }) {
  let cursor = null;
  let delay = 1000;
  while (!signal.aborted) {
    let params = 'follow=1';
    if (cursor) params += `&entry_after=${enc(cursor.entry_seq ?? 0)}&log_after=${enc(cursor.log_seq ?? 0)}`;
    let done = false;
    try {
      onState?.('live');
      await ndjson(`/v1/executions/${enc(id)}/events?${params}`, (line) => {
        if (line.cursor) cursor = line.cursor;
        const ev = line.event || line;
        if (ev.type === 'execution_finished') done = true;
        delay = 1000;
        onEvent(ev);
      }, signal);
    } catch (e) {
      if (isAbort(e) || signal.aborted) return;
      if (e instanceof APIError && (e.status === 401 || e.status === 403 || e.status === 404)) {
        onState?.('unavailable', e);
        return;
      }
    }
    if (done) { onState?.('ended'); return; }
    if (isOver && await isOver().catch(() => false)) { onState?.('ended'); return; }
    onState?.('reconnecting');
    try { await sleep(delay, signal); } catch { return; }
    delay = Math.min(delay * 2, 10000);
  }
}

// followLogs calls onLine with each log line of a node, following while the run goes on.
export async function followLogs(id, node, { signal, follow, onLine, isOver, onState }) {
  let after = null;
  let delay = 1000;
  while (!signal.aborted) {
    const params = new URLSearchParams({ node });
    if (follow) params.set('follow', '1');
    if (after !== null) params.set('after', String(after));
    try {
      await ndjson(`/v1/executions/${enc(id)}/logs?${params}`, (line) => {
        if (typeof line.seq === 'number') after = line.seq;
        delay = 1000;
        onLine(line);
      }, signal);
    } catch (e) {
      if (isAbort(e) || signal.aborted) return;
      if (e instanceof APIError) { onState?.('error', e); return; }
    }
    if (!follow) return;
    if (isOver && await isOver().catch(() => false)) return;
    try { await sleep(delay, signal); } catch { return; }
    delay = Math.min(delay * 2, 10000);
  }
}
