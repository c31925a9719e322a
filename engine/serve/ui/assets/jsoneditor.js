// A textarea for JSON that says where the JSON breaks and tells its owner whether it parses.
import { h } from './dom.js';

// where turns a parse error into "line L, column C" using the position the engine gives.
function where(text, err) {
  const m = /position (\d+)/.exec(err.message) || /column (\d+)/.exec(err.message);
  const lm = /line (\d+) column (\d+)/.exec(err.message);
  if (lm) return `line ${lm[1]}, column ${lm[2]}`;
  if (!m) return '';
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return `line ${line}, column ${col}`;
}

// jsonEditor makes a labelled textarea (id) and an error line (errorID). objectOnly refuses
// anything but a JSON object; allowEmpty takes an empty text as "no value". onChange(ok, value)
// runs at each edit.
export function jsonEditor({ id, errorID, label, value = '', objectOnly = false, allowEmpty = false, rows = 8, onChange }) {
  const area = h('textarea', {
    id, rows, spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off', class: 'code', 'aria-describedby': errorID,
  });
  area.value = value;
  const err = h('p', { id: errorID, class: 'error-text', role: 'status', 'aria-live': 'polite', hidden: true });
  const state = { ok: true, value: undefined };
  const check = () => {
    const text = area.value;
    let msg = '';
    let val;
    if (text.trim() === '') {
      if (!allowEmpty) msg = 'Enter JSON, for example {}.';
    } else {
      try {
        val = JSON.parse(text);
        if (objectOnly && (val === null || typeof val !== 'object' || Array.isArray(val))) msg = 'The payload must be a JSON object, like {"key": "value"}.';
      } catch (e) {
        const at = /line \d+/.test(e.message) ? '' : where(text, e);
        msg = `Not valid JSON${at ? ` at ${at}` : ''}: ${e.message}`;
      }
    }
    state.ok = !msg;
    state.value = val;
    err.textContent = msg;
    err.hidden = !msg;
    area.setAttribute('aria-invalid', msg ? 'true' : 'false');
    onChange?.(state.ok, val);
  };
  area.addEventListener('input', check);
  const format = h('button', { type: 'button', class: 'small' }, 'Format');
  format.addEventListener('click', () => {
    if (state.ok && state.value !== undefined) { area.value = JSON.stringify(state.value, null, 2); check(); }
    area.focus();
  });
  const el = h('div', { class: 'json-editor' },
    h('div', { class: 'label-row' }, h('label', { for: id }, label), format), area, err);
  check();
  return { el, area, state, check };
}
