// Talking to serve: the /v1 API and the session endpoints under /ui. The session cookie goes
// with every request (same origin); state-changing ones carry the session's CSRF token.

let csrf = '';

export function setCSRF(v) { csrf = v || ''; }

export class APIError extends Error {
  constructor(status, body) {
    super((body && body.error) || `The server answered ${status}.`);
    this.status = status;
    this.code = (body && body.code) || '';
    this.body = body || {};
  }
}

// Any 401 from the API means the session ended (logout elsewhere, token revoked, serve restarted):
// the app shows the login page.
function unauthorized() { window.dispatchEvent(new CustomEvent('fuscia:unauthorized')); }

async function parse(res) {
  const text = await res.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch { return { error: text.slice(0, 300) }; }
}

// sessionName is the name of the token this tab logged in with (session, login).
let sessionName = '';

async function request(method, path, body, { signal, quiet401 = false, retried = false } = {}) {
  const headers = { Accept: 'application/json' };
  const init = { method, headers, credentials: 'same-origin', signal, cache: 'no-store' };
  if (method !== 'GET' && method !== 'HEAD') {
    headers['X-Fuscia-CSRF'] = csrf;
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
  }
  const res = await fetch(path, init);
  const data = await parse(res);
  if (!res.ok) {
    if (res.status === 401 && !quiet401) unauthorized();
    if (res.status === 403 && data && data.code === 'csrf' && !retried) {
      // Another tab logged out and in again: the cookie is a new session's, and this tab's
      // CSRF value the old one's. Take the new value; send again only as the same token.
      const s = await request('GET', '/ui/session', undefined, { signal, quiet401: true }).catch(() => null);
      if (s && s.csrf && s.name === sessionName) {
        setCSRF(s.csrf);
        return request(method, path, body, { signal, quiet401, retried: true });
      }
      window.dispatchEvent(new CustomEvent('fuscia:session-changed'));
      throw new APIError(403, { code: 'csrf', error: 'The session changed in another tab (logged in again, or as another token): the page shows the new one; try again there.' });
    }
    throw new APIError(res.status, data);
  }
  return data;
}

// prefetched holds GETs started before their page asked (app.js starts a run's at boot, beside
// the session check): the page's first get of the path takes the answer instead of asking again.
const prefetched = new Map();

export function prefetch(path) {
  const p = request('GET', path, undefined, { quiet401: true });
  p.catch(() => {}); // a page that never asks does not log the rejection
  prefetched.set(path, { p, at: Date.now() });
  setTimeout(() => prefetched.delete(path), 5000);
}

export function get(path, opts) {
  const pre = prefetched.get(path);
  if (pre) {
    prefetched.delete(path);
    if (Date.now() - pre.at < 5000) return pre.p.catch(() => request('GET', path, undefined, opts));
  }
  return request('GET', path, undefined, opts);
}
export const post = (path, body, opts) => request('POST', path, body, opts);

export function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;

// session answers who is logged in, or null.
export async function session() {
  try {
    const s = await request('GET', '/ui/session', undefined, { quiet401: true });
    setCSRF(s.csrf);
    sessionName = s.name || '';
    return s;
  } catch (e) {
    if (e instanceof APIError && e.status === 401) return null;
    throw e;
  }
}

export async function login(token) {
  const s = await request('POST', '/ui/login', { token }, { quiet401: true });
  setCSRF(s.csrf);
  sessionName = s.name || '';
  return s;
}

export async function logout() {
  try { await request('POST', '/ui/logout', undefined, { quiet401: true }); } finally { setCSRF(''); }
}

// ndjson reads a streaming answer line by line and calls onLine with each parsed line. It
// resolves when the stream ends (normally or cut), rejects with APIError for an error answer.
export async function ndjson(path, onLine, signal) {
  const res = await fetch(path, { credentials: 'same-origin', signal, cache: 'no-store', headers: { Accept: 'application/x-ndjson' } });
  if (!res.ok) {
    const data = await parse(res);
    if (res.status === 401) unauthorized();
    throw new APIError(res.status, data);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        let obj;
        try { obj = JSON.parse(line); } catch { continue; }
        onLine(obj);
      }
    }
  } finally {
    reader.releaseLock?.();
  }
  const rest = buf.trim();
  if (rest) { try { onLine(JSON.parse(rest)); } catch { /* a cut line */ } }
}
