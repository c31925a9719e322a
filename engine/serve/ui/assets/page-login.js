// The login page: an API token (`fuscia token create`) is exchanged for a session cookie.
import { h, replace } from './dom.js';
import * as api from './api.js';

export function render(main, ctx) {
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true,
    'aria-describedby': 'token-help login-error',
  });
  const err = h('p', { id: 'login-error', class: 'error-text', role: 'alert', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Log in');
  const form = h('form', { id: 'login', class: 'card login', novalidate: true },
    h('h1', {}, h('span', { class: 'logo', 'aria-hidden': 'true' }), 'Fuscia'),
    h('label', { for: 'token' }, 'API token'),
    input,
    h('p', { id: 'token-help', class: 'muted small' }, 'A token made with ', h('code', {}, 'fuscia token create NAME'),
      '. It stays on the server; this browser keeps only a session cookie.'),
    err, submit);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const token = input.value.trim();
    if (!token) { err.textContent = 'Enter an API token.'; input.focus(); return; }
    submit.disabled = true;
    err.textContent = '';
    try {
      const s = await api.login(token);
      input.value = '';
      ctx.done(s);
    } catch (e) {
      if (e.status === 429) err.textContent = 'Too many failed attempts from this address. Wait a minute and try again.';
      else if (e.status === 401 || e.status === 403) err.textContent = 'This token is not valid: it may be mistyped, revoked or expired.';
      else err.textContent = `Cannot log in: ${e.message}`;
      input.focus();
      input.select();
    } finally {
      submit.disabled = false;
    }
  });
  replace(main, form);
  input.focus();
}
