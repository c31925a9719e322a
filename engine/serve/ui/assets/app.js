// The Fuscia UI (docs/ui.md): a small router over path routes under /ui/, the page shell
// (navigation, logout) and the session. Each page is a module with render(main, ctx); ctx.signal
// ends when the page is left, which stops its requests, streams and timers.
import { h, replace } from './dom.js';
import * as api from './api.js';
import * as loginPage from './page-login.js';
import * as workflowsPage from './page-workflows.js';
import * as workflowPage from './page-workflow.js';
import * as runsPage from './page-runs.js';
import * as runPage from './page-run.js';
import * as clusterPage from './page-cluster.js';

const routes = [
  { re: /^\/ui\/?$/, page: workflowsPage, nav: '/ui/' },
  { re: /^\/ui\/workflows\/([^/]+)\/?$/, page: workflowPage, nav: '/ui/' },
  { re: /^\/ui\/runs\/?$/, page: runsPage, nav: '/ui/runs' },
  { re: /^\/ui\/runs\/([^/]+)\/?$/, page: runPage, nav: '/ui/runs' },
  { re: /^\/ui\/cluster\/?$/, page: clusterPage, nav: '/ui/cluster' },
];

const root = document.getElementById('app');
let who = null; // the session: {name, scope, csrf}
let pageCtl = null;
let shell = null;

function navigate(path, { replace: rep = false } = {}) {
  if (rep) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

function buildShell() {
  const links = [['/ui/', 'Workflows'], ['/ui/runs', 'Runs'], ['/ui/cluster', 'Cluster']];
  const nav = h('nav', { 'aria-label': 'Main' }, h('ul', {}, links.map(([href, text]) => h('li', {}, h('a', { href }, text)))));
  const logoutBtn = h('button', { type: 'button', id: 'logout', class: 'small' }, 'Log out');
  logoutBtn.addEventListener('click', async () => {
    try { await api.logout(); } catch { /* the session is gone either way */ }
    who = null;
    navigate('/ui/login');
  });
  const user = h('span', { class: 'who' });
  const main = h('main', { id: 'main', tabindex: -1 });
  const header = h('header', { class: 'topbar' },
    h('a', { class: 'brand', href: '/ui/' }, h('span', { class: 'logo', 'aria-hidden': 'true' }), 'Fuscia'),
    nav, h('div', { class: 'session' }, user, logoutBtn));
  replace(root, h('a', { class: 'skip', href: '#main' }, 'Skip to content'), header, main);
  return { nav, main, user };
}

async function render() {
  pageCtl?.abort();
  pageCtl = new AbortController();
  const signal = pageCtl.signal;
  const path = location.pathname;
  const query = new URLSearchParams(location.search);

  if (!who) {
    try {
      who = await api.session();
    } catch (e) {
      if (signal.aborted) return;
      shell = null;
      replace(root, h('main', { id: 'main', class: 'center' }, h('p', { role: 'alert', class: 'error-box' }, `Cannot reach serve: ${e.message}`),
        h('button', { type: 'button', onclick: () => render() }, 'Try again')));
      return;
    }
    if (signal.aborted) return;
  }
  if (path === '/ui/login' || !who) {
    shell = null;
    const next = path === '/ui/login' ? (query.get('next') || '/ui/') : path + location.search;
    if (path !== '/ui/login') history.replaceState(null, '', `/ui/login?next=${encodeURIComponent(next)}`);
    if (who && path === '/ui/login') { navigate(safeNext(next), { replace: true }); return; }
    const main = h('main', { id: 'main', class: 'center' });
    replace(root, main);
    document.title = 'Log in · Fuscia';
    loginPage.render(main, {
      signal, next,
      done: (s) => { who = s; navigate(safeNext(next), { replace: true }); },
    });
    return;
  }

  if (!shell) shell = buildShell();
  shell.user.textContent = who.name ? `${who.name} (${who.scope})` : '';
  const route = routes.find((r) => r.re.test(path));
  for (const a of shell.nav.querySelectorAll('a')) {
    if (route && a.getAttribute('href') === route.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const main = shell.main;
  main.replaceChildren();
  main.className = '';
  if (!route) {
    document.title = 'Not found · Fuscia';
    replace(main, h('h1', {}, 'Page not found'), h('p', {}, 'There is no page at this address. ', h('a', { href: '/ui/' }, 'Go to the workflows.')));
    return;
  }
  const params = path.match(route.re).slice(1).map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
  try {
    await route.page.render(main, { params, query, signal, navigate, session: who, setTitle });
  } catch (e) {
    if (signal.aborted || e.name === 'AbortError') return;
    if (e instanceof api.APIError && e.status === 401) return;
    main.appendChild(h('p', { role: 'alert', class: 'error-box' }, e.message || String(e)));
  }
}

function setTitle(t) { document.title = t ? `${t} · Fuscia` : 'Fuscia'; }

// safeNext keeps the redirect after login inside the UI.
function safeNext(p) {
  if (typeof p !== 'string') return '/ui/';
  // Resolved as the browser would (/ui/..//x is //x): what is left must be a page of the UI here.
  let u;
  try { u = new URL(p, location.origin); } catch { return '/ui/'; }
  if (u.origin !== location.origin || !u.pathname.startsWith('/ui/') || u.pathname.startsWith('/ui/login') || u.pathname.startsWith('/ui/assets/')) return '/ui/';
  return u.pathname + u.search + u.hash;
}

// Links inside the UI change the page without a reload; modified clicks open tabs as usual.
document.addEventListener('click', (ev) => {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = ev.target.closest && ev.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || url.pathname.startsWith('/ui/assets/')) return;
  ev.preventDefault();
  if (url.pathname === location.pathname && url.search === location.search) {
    if (url.hash) { document.getElementById(url.hash.slice(1))?.focus(); }
    return;
  }
  navigate(url.pathname + url.search);
  shell?.main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
window.addEventListener('popstate', () => render());
window.addEventListener('fuscia:unauthorized', () => {
  if (!who) return;
  who = null;
  render();
});
// Another tab logged in again as another token: show the session there is now.
window.addEventListener('fuscia:session-changed', () => {
  who = null;
  render();
});

// A run's page needs its execution as soon as the session is known: ask for both at once.
{
  const m = /^\/ui\/runs\/([^/]+)\/?$/.exec(location.pathname);
  if (m) api.prefetch(`/v1/executions/${m[1]}`);
}
render();
