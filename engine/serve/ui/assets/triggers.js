// How a workflow's triggers read.
import { h } from './dom.js';
import { time } from './format.js';

export function triggerItem(t) {
  const name = t.name && t.name !== 'default' ? ` ${t.name}` : '';
  switch (t.type) {
    case 'schedule':
      return h('li', { class: 'trigger' }, h('span', { class: 'tag' }, 'schedule'), name, ' ', h('code', {}, t.cron || ''),
        t.timezone ? ` (${t.timezone})` : '', t.next ? [' · next ', time(t.next)] : null);
    case 'webhook':
      return h('li', { class: 'trigger' }, h('span', { class: 'tag' }, 'webhook'), name, ' ', h('code', {}, `${t.method || 'POST'} ${t.path || ''}`));
    case 'poll':
      return h('li', { class: 'trigger' }, h('span', { class: 'tag' }, 'poll'), name, t.interval ? [' every ', h('code', {}, t.interval)] : null,
        t.next ? [' · next ', time(t.next)] : null);
    case 'manual':
      return h('li', { class: 'trigger' }, h('span', { class: 'tag' }, 'manual'), name);
    default:
      return h('li', { class: 'trigger' }, h('span', { class: 'tag' }, t.type || 'trigger'), name);
  }
}

export function triggerList(triggers) {
  if (!triggers || triggers.length === 0) return h('span', { class: 'muted' }, 'none');
  return h('ul', { class: 'triggers' }, triggers.map(triggerItem));
}
