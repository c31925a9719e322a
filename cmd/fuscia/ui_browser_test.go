package main

// The web UI's browser tests (docs/ui.md): a real `fuscia serve` with example-like workflows and
// a headless Chromium, driven with chromedp, reading the page only through the DOM hooks
// docs/ui.md lists. They check that the workflows page lists the workflows and draws their
// graphs; that a webhook's run appears in the runs list and its nodes go from running to
// succeeded without a reload; that a failed node shows its error; that an approval is answered by
// a click (and the journal names the token); that cancel works; that a secret a run used is
// nowhere in the pages, their network answers or their console; that without a session the UI
// asks for a token and the API answers 401; and how long a 1,000-node run takes to draw.
// FUSCIA_UPDATE_SCREENSHOTS=1 (`make screenshots`) writes the run page's screenshot to
// docs/ui-run.png.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fuscia/fuscia/engine/journal"
)

// uiOrdersWorkflow is a webhook workflow whose task.check calls a gate (%[1]s) that answers only
// when the test opens it, then branches, fans out, joins and loops: every shape the graph draws.
const uiOrdersWorkflow = `workflow "orders" {
  description = "Take an order from a webhook, check it, pack it, ship it"
}

trigger "webhook" "order" {
  path = "/hooks/order"
}

task "receive" {
  uses   = builtin.transform
  inputs = { order = trigger.payload.body }
}

task "check" {
  uses    = builtin.http
  timeout = "10m"
  inputs = {
    method  = "POST"
    url     = "%[1]s/check"
    body    = task.receive.output.order
    timeout = "10m"
  }
}

switch "size" {
  case "big" { when = length(task.receive.output.order.lines) > 2 }
  default "small" {}
}

task "pack" {
  uses     = builtin.transform
  after    = [task.check, switch.size.big]
  for_each = task.receive.output.order.lines
  inputs   = { line = each.value }
}

task "envelope" {
  uses   = builtin.transform
  after  = [task.check, switch.size.small]
  inputs = { lines = task.receive.output.order.lines }
}

join "packed" {
  after    = [task.pack, task.envelope]
  strategy = "any"
}

task "ship" {
  uses   = builtin.transform
  after  = [join.packed]
  inputs = { order = task.receive.output.order.id }
}

loop "notify" {
  for_each = task.receive.output.order.lines
  after    = [task.ship]

  task "mail" {
    uses   = builtin.transform
    inputs = { line = each.value }
  }

  output = task.mail.output
}

output "shipped" { value = task.ship.output.order }
`

// uiBillingWorkflow has a node that fails, and a manual trigger.
const uiBillingWorkflow = `workflow "billing" {
  description = "Charge a card; the charge is declined"
}

trigger "manual" "go" {}

task "prepare" {
  uses   = builtin.transform
  inputs = { amount = 42 }
}

task "charge" {
  uses   = builtin.fail
  inputs = { message = "card declined: insufficient funds (amount ${task.prepare.output.amount})" }
}

task "receipt" {
  uses   = builtin.transform
  inputs = { paid = task.charge.output }
}
`

// uiReleaseWorkflow waits for a person's approval.
const uiReleaseWorkflow = `workflow "release" {
  description = "A person approves the release"
}

trigger "manual" "go" {}

task "build" {
  uses   = builtin.transform
  inputs = { version = "1.4.0" }
}

wait "approve" {
  after = [task.build]
  approval { message = "Release 1.4.0?" }
}

task "deploy" {
  uses   = builtin.transform
  inputs = { answer = wait.approve.output }
}

output "answer" { value = task.deploy.output.answer }
`

// uiNightlyWorkflow runs long enough to be cancelled, and has a schedule.
const uiNightlyWorkflow = `workflow "nightly" {
  description = "A long job"
}

trigger "manual" "go" {}

trigger "schedule" "night" {
  cron = "0 3 * * *"
}

task "crunch" {
  uses   = builtin.sleep
  inputs = { duration = "30m" }
}

task "report" {
  uses   = builtin.transform
  inputs = { slept = task.crunch.output.slept }
}
`

// uiBrokenWorkflow does not load: line 4 names no builtin.
const uiBrokenWorkflow = `workflow "broken" {}

task "x" {
  uses = builtin.nope
}
`

// uiVaultWorkflow hands its secret to a server (%[1]s: in a URL, a header), to a transform and to
// an error message, holds at the gate (%[2]s) so that its page is open while it runs, and calls a
// server that sends the secret back on its own (only the scrubber hides it there).
const uiVaultWorkflow = `workflow "vault" {
  description = "Calls a service with a secret"
}

secret "api_key" { env = "UI_E2E_API_KEY" }

trigger "manual" "go" {}

task "call" {
  uses = builtin.http
  inputs = {
    url     = "%[1]s/echo?key=${urlencode(secret.api_key)}"
    headers = { Authorization = "Bearer ${secret.api_key}" }
  }
}

task "shape" {
  uses   = builtin.transform
  inputs = { key = secret.api_key, note = "shaped" }
}

task "hold" {
  uses    = builtin.http
  after   = [task.call, task.shape]
  timeout = "10m"
  inputs  = { url = "%[2]s/hold", timeout = "10m" }
}

task "leak" {
  uses   = builtin.http
  after  = [task.hold]
  inputs = { url = "%[1]s/repeat" }
}

task "deny" {
  uses          = builtin.fail
  after         = [task.hold]
  fail_workflow = false
  inputs        = { message = "refused key ${secret.api_key}" }
}
`

// evalAwait evaluates expr, a promise, and decodes what it resolves to.
func evalAwait[T any](b *uiBrowser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\n%s", expr, err, b.where())
	}
	return v
}

// nodeSel is the selector of a node of the drawn graph, with a status when status is not "".
func nodeSel(addr, status string) string {
	s := `svg#dag g.node[data-node="` + addr + `"]`
	if status != "" {
		s += `[data-status="` + status + `"]`
	}
	return s
}

// waitRunStatus waits until #run-status says status.
func (b *uiBrowser) waitRunStatus(status string) {
	b.t.Helper()
	b.waitJS("#run-status "+status, `document.querySelector("#run-status")?.textContent.trim().toLowerCase().includes(`+jsq(status)+`)`)
}

// TestUILogin: without a session the UI shows the login page and the API answers 401; a wrong
// token is refused on the page; the right one opens a session whose cookie the page's scripts
// cannot read, the token is kept nowhere in the browser, a change without the CSRF header is
// refused, logout ends the session, and revoking the token ends its sessions at once.
func TestUILogin(t *testing.T) {
	t.Parallel()
	start := time.Now()
	s := startUIServe(t, map[string]string{"billing.fsc.hcl": uiBillingWorkflow}, nil)

	if c := callAPI(t, serveClient, s.sp.base, http.MethodGet, "/v1/workflows", "", ""); c.code != http.StatusUnauthorized {
		t.Errorf("GET /v1/workflows without a token: %d %s, want 401", c.code, c.body)
	}

	b := newUIBrowser(t, s.sp.base)
	ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(s.sp.base+"/ui/"))
	cancel()
	if err != nil {
		t.Fatalf("open /ui/: %v", err)
	}
	if resp.Status != http.StatusOK {
		t.Errorf("/ui/ answered %d, want 200 (the page, which asks for a token)", resp.Status)
	}
	csp := ""
	for k, v := range resp.Headers {
		if strings.EqualFold(k, "Content-Security-Policy") {
			csp = fmt.Sprint(v)
		}
	}
	if !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("/ui/ has Content-Security-Policy %q, want one with default-src 'self'", csp)
	}
	b.waitVisible("form#login")
	if label := evalJS[string](b, `[...(document.querySelector("#token")?.labels ?? [])].map(l => l.textContent).join(" ")`); !strings.Contains(label, "API token") {
		t.Errorf("input#token's label is %q, want it to say \"API token\"", label)
	}
	if n := evalJS[int](b, `document.querySelectorAll('nav[aria-label="Main"]').length`); n != 0 {
		t.Errorf("the login page shows the main navigation")
	}
	if code := evalAwait[int](b, `fetch("/v1/workflows").then(r => r.status)`); code != http.StatusUnauthorized {
		t.Errorf("the page's fetch of /v1/workflows without a session: %d, want 401", code)
	}

	// A wrong token.
	b.typeInto("input#token", "fsc_not-a-token-0123456789")
	b.click("form#login button[type=submit]")
	b.waitVisible("#login-error")
	b.waitJS("#login-error saying why", `document.querySelector("#login-error").textContent.trim() !== ""`)
	if n := evalJS[int](b, `document.querySelectorAll('nav[aria-label="Main"]').length`); n != 0 {
		t.Errorf("a wrong token opened the UI")
	}

	// The right one.
	b.typeInto("input#token", s.token.Token)
	b.click("form#login button[type=submit]")
	b.waitVisible(`nav[aria-label="Main"]`)
	b.waitVisible("main#main")
	b.waitVisible("button#logout")
	links := evalJS[[]string](b, `[...document.querySelectorAll('nav[aria-label="Main"] a')].map(a => a.textContent.trim() + " " + new URL(a.href).pathname)`)
	for _, want := range []string{"Workflows /ui/", "Runs /ui/runs", "Cluster /ui/cluster"} {
		if !containsString(links, want) {
			t.Errorf("main navigation links %q, want one %q", links, want)
		}
	}

	ctx, cancel = context.WithTimeout(b.ctx, uiDeadline)
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{s.sp.base + "/"}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range cookies.Cookies {
		if c.Name == "fuscia_session" {
			session = c
		}
	}
	switch {
	case session == nil:
		t.Errorf("no fuscia_session cookie after login; cookies: %+v", cookies.Cookies)
	case !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict || session.Path != "/":
		t.Errorf("fuscia_session: HttpOnly %v, SameSite %q, Path %q; want HttpOnly, Strict, /", session.HTTPOnly, session.SameSite, session.Path)
	case strings.Contains(session.Value, s.token.Token):
		t.Errorf("the session cookie holds the API token")
	}
	if c := evalJS[string](b, "document.cookie"); strings.Contains(c, "fuscia_session") {
		t.Errorf("the page's scripts can read the session cookie: %q", c)
	}
	if st := evalJS[string](b, "JSON.stringify(Object.assign({}, localStorage)) + JSON.stringify(Object.assign({}, sessionStorage))"); strings.Contains(st, s.token.Token) {
		t.Errorf("the API token is kept in the browser's storage: %s", st)
	}

	// The API with the session: reads pass; a change needs the CSRF header.
	if code := evalAwait[int](b, `fetch("/v1/workflows").then(r => r.status)`); code != http.StatusOK {
		t.Errorf("the page's fetch of /v1/workflows with a session: %d, want 200", code)
	}
	const post = `fetch("/v1/workflows/billing/runs", {method: "POST", headers: %s, body: JSON.stringify({payload: {}})}).then(r => r.status)`
	if code := evalAwait[int](b, fmt.Sprintf(post, `{"Content-Type": "application/json"}`)); code != http.StatusForbidden {
		t.Errorf("POST /v1/workflows/billing/runs with the session and no CSRF header: %d, want 403", code)
	}
	if runs := s.sp.executions("?workflow=billing"); len(runs) != 0 {
		t.Errorf("a POST without the CSRF header started %d run(s)", len(runs))
	}
	withCSRF := fmt.Sprintf(`fetch("/ui/session").then(r => r.json()).then(s => `+post+`)`,
		`{"Content-Type": "application/json", "X-Fuscia-CSRF": s.csrf}`)
	if code := evalAwait[int](b, withCSRF); code != http.StatusAccepted {
		t.Errorf("POST /v1/workflows/billing/runs with the session and its CSRF header: %d, want 202", code)
	}

	// Logout.
	b.click("button#logout")
	b.waitVisible("form#login")
	if code := evalAwait[int](b, `fetch("/v1/workflows").then(r => r.status)`); code != http.StatusUnauthorized {
		t.Errorf("after logout the page's fetch of /v1/workflows: %d, want 401", code)
	}
	b.navigate("/ui/runs")
	b.waitVisible("form#login")

	// A revoked token ends its session at once.
	b.login(s.token.Token)
	wantCode(t, s.h.run("token", "revoke", uiTokenName), 0)
	if code := evalAwait[int](b, `fetch("/v1/workflows").then(r => r.status)`); code != http.StatusUnauthorized {
		t.Errorf("after the token's revocation the page's fetch of /v1/workflows: %d, want 401", code)
	}
	b.navigate("/ui/")
	b.waitVisible("form#login")
	b.checkConsole()
	t.Logf("login, CSRF, logout and revocation checked in %s", time.Since(start).Round(time.Millisecond))
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestUIDisabled: `serve -ui=false` answers 404 under /ui/, and the API is unchanged.
func TestUIDisabled(t *testing.T) {
	t.Parallel()
	s := serveUIFiles(t, map[string]string{"billing.fsc.hcl": uiBillingWorkflow}, nil, "-ui=false")
	for _, path := range []string{"/ui/", "/ui/login", "/ui/runs"} {
		if c := callAPI(t, serveClient, s.sp.base, http.MethodGet, path, "", ""); c.code != http.StatusNotFound {
			t.Errorf("GET %s with -ui=false: %d, want 404", path, c.code)
		}
	}
	if c := callAPI(t, serveClient, s.sp.base, http.MethodGet, "/v1/workflows", s.token.Token, ""); c.code != http.StatusOK {
		t.Errorf("GET /v1/workflows with -ui=false: %d %s, want 200", c.code, c.body)
	}
}

// TestUIWorkflows: the workflows page lists every served workflow with its triggers and the file
// that does not load with its diagnostic; a workflow's page draws its graph (nodes by address and
// label, edges, branch labels, the loop as a group, in layers, no node over another); the Run
// dialog refuses JSON that does not parse and starts a run with the payload given.
func TestUIWorkflows(t *testing.T) {
	t.Parallel()
	start := time.Now()
	s := startUIServe(t, map[string]string{
		"orders.fsc.hcl":  fmt.Sprintf(uiOrdersWorkflow, "http://127.0.0.1:9"),
		"billing.fsc.hcl": uiBillingWorkflow,
		"release.fsc.hcl": uiReleaseWorkflow,
		"nightly.fsc.hcl": uiNightlyWorkflow,
		"broken.fsc.hcl":  uiBrokenWorkflow,
		// A caller whose called file (outside the served directory) has the error.
		"caller.fsc.hcl":       "workflow \"caller\" {}\n\ncall \"kid\" {\n  workflow = \"../lib/child.fsc.hcl\"\n}\n",
		"../lib/child.fsc.hcl": "workflow \"child\" {}\n\n\ntask \"t\" {\n  uses = builtin.nope\n}\n",
	}, nil)
	b := newUIBrowser(t, s.sp.base)
	b.login(s.token.Token)
	b.navigate("/ui/")
	b.waitVisible("table#workflows")
	for _, name := range []string{"orders", "billing", "release", "nightly"} {
		row := `table#workflows tr[data-workflow="` + name + `"]`
		b.waitVisible(row)
		href := evalJS[string](b, `[...document.querySelectorAll(`+jsq(row+" a")+`)].map(a => new URL(a.href).pathname).join(" ")`)
		if !strings.Contains(href, "/ui/workflows/"+name) {
			t.Errorf("row %s links to %q, want /ui/workflows/%s", name, href, name)
		}
	}
	if n := evalJS[int](b, `document.querySelectorAll('table#workflows tr[data-workflow]').length`); n != 4 {
		t.Errorf("table#workflows has %d workflow rows, want 4", n)
	}
	wantContains(t, "the orders row", b.text(`tr[data-workflow="orders"]`), "/hooks/order")
	wantContains(t, "the nightly row", b.text(`tr[data-workflow="nightly"]`), "0 3 * * *")
	// The schedule's next occurrence is a <time> at 03:00 UTC within a day.
	next := evalJS[[]float64](b, `[...document.querySelectorAll('tr[data-workflow="nightly"] time[datetime]')].map(e => Date.parse(e.getAttribute("datetime")))`)
	found := false
	for _, ms := range next {
		at := time.UnixMilli(int64(ms)).UTC()
		if at.Hour() == 3 && at.Minute() == 0 && at.After(time.Now()) && at.Before(time.Now().Add(25*time.Hour)) {
			found = true
		}
	}
	if !found {
		t.Errorf("the nightly row has no <time datetime> of the next 03:00 UTC (times: %v)", next)
	}
	b.waitText("section#load-errors", "broken.fsc.hcl")
	wantContains(t, "section#load-errors", b.text("section#load-errors"), "broken.fsc.hcl", "4", "Invalid uses")
	// The called file's diagnostic names that file, not the caller.
	b.waitText("section#load-errors", "caller.fsc.hcl")
	wantContains(t, "the caller's diagnostics", b.text("section#load-errors"), "lib/child.fsc.hcl line 5")

	// The graph of orders, reached by its link.
	b.click(`tr[data-workflow="orders"] a[href$="/ui/workflows/orders"]`)
	b.waitJS("the orders workflow's page", `location.pathname === "/ui/workflows/orders"`)
	b.waitVisible("svg#dag")
	nodes := map[string]string{
		"task.receive": "receive", "task.check": "check", "switch.size": "size", "task.pack": "pack",
		"task.envelope": "envelope", "join.packed": "packed", "task.ship": "ship", "loop.notify": "notify",
	}
	for addr, label := range nodes {
		b.waitVisible(nodeSel(addr, ""))
		wantContains(t, addr+"'s text", b.text(nodeSel(addr, "")), label)
	}
	b.waitVisible(`svg#dag g.group[data-group="loop.notify"]`)
	if n := evalJS[int](b, `[...document.querySelectorAll("svg#dag g.node[data-node]")].filter(e => e.dataset.node.endsWith("task.mail") && e.textContent.includes("mail")).length`); n != 1 {
		t.Errorf("the loop body's task.mail is drawn %d times, want once", n)
	}
	for _, e := range [][2]string{{"task.receive", "task.check"}, {"task.check", "task.pack"}, {"switch.size", "task.pack"}, {"switch.size", "task.envelope"}, {"task.pack", "join.packed"}, {"join.packed", "task.ship"}, {"task.ship", "loop.notify"}} {
		if n := evalJS[int](b, `document.querySelectorAll('svg#dag path.edge[data-from="`+e[0]+`"][data-to="`+e[1]+`"]').length`); n != 1 {
			t.Errorf("edge %s → %s drawn %d times, want once", e[0], e[1], n)
		}
	}
	labels := evalJS[[]string](b, `[...document.querySelectorAll("svg#dag text.edge-label")].map(e => e.textContent.trim())`)
	for _, want := range []string{"big", "small"} {
		if !containsString(labels, want) {
			t.Errorf("edge labels %q, want %q", labels, want)
		}
	}
	// Layers: pack and envelope have the same dependencies, so they share a layer, after receive.
	type box struct{ X, Y, W, H float64 }
	boxes := evalJS[map[string]box](b, `Object.fromEntries([...document.querySelectorAll("svg#dag g.node[data-node]")].map(e => {
		const r = e.getBoundingClientRect(); return [e.dataset.node, {X: r.x, Y: r.y, W: r.width, H: r.height}]; }))`)
	centre := func(n string) (float64, float64) { r := boxes[n]; return r.X + r.W/2, r.Y + r.H/2 }
	px, py := centre("task.pack")
	ex, ey := centre("task.envelope")
	rx, ry := centre("task.receive")
	sx, sy := centre("task.ship")
	sameLayer := (abs(px-ex) < 1 && abs(sx-rx) > 1) || (abs(py-ey) < 1 && abs(sy-ry) > 1)
	if !sameLayer {
		t.Errorf("pack (%.0f,%.0f) and envelope (%.0f,%.0f) are not drawn in one layer apart from receive (%.0f,%.0f) and ship (%.0f,%.0f)", px, py, ex, ey, rx, ry, sx, sy)
	}
	var names []string
	for n := range boxes {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, a := range names {
		for _, c := range names[i+1:] {
			ra, rc := boxes[a], boxes[c]
			if ra.X < rc.X+rc.W && rc.X < ra.X+ra.W && ra.Y < rc.Y+rc.H && rc.Y < ra.Y+ra.H {
				t.Errorf("nodes %s %+v and %s %+v overlap", a, ra, c, rc)
			}
		}
	}

	// The Run dialog of a manual trigger checks the JSON before sending it.
	b.navigate("/ui/workflows/billing")
	b.click("button#run")
	b.waitJS("dialog#run-dialog open", `document.querySelector("dialog#run-dialog")?.open === true`)
	b.typeInto("dialog#run-dialog textarea#payload", `{"amount": 42,`)
	b.waitVisible("#payload-error")
	b.waitJS("#run-submit disabled", `document.querySelector("#run-submit").disabled`)
	b.typeInto("dialog#run-dialog textarea#payload", `{"amount": 42}`)
	b.waitJS("#run-submit enabled", `!document.querySelector("#run-submit").disabled`)
	b.waitJS("#payload-error hidden", "!"+visibleJS("#payload-error")+` || document.querySelector("#payload-error").textContent.trim() === ""`)
	b.click("button#run-submit")
	deadline := time.Now().Add(serveDeadline)
	var runs []journal.Summary
	for len(runs) == 0 && time.Now().Before(deadline) {
		runs = s.sp.executions("?workflow=billing")
		if len(runs) == 0 {
			time.Sleep(50 * time.Millisecond) // polling the API for the run the click started
		}
	}
	if len(runs) != 1 {
		t.Fatalf("the Run dialog started %d run(s) of billing, want 1", len(runs))
	}
	jsonSame(t, "the payload of the run started from the dialog", s.sp.execution(runs[0].ID).Trigger.Payload, `{"amount": 42}`)
	b.checkConsole()
	t.Logf("workflows page, graph and Run dialog checked in %s", time.Since(start).Round(time.Millisecond))
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// TestUIWebhookRunLive: a run a webhook starts appears in the open runs list, and on its page
// its nodes go from running to succeeded, all without a reload; a node's panel opens on a click
// and with Enter; the page is screenshot at 1280×900 (docs/ui-run.png with
// FUSCIA_UPDATE_SCREENSHOTS=1).
func TestUIWebhookRunLive(t *testing.T) {
	t.Parallel()
	start := time.Now()
	g := newGate(t)
	s := startUIServe(t, map[string]string{"orders.fsc.hcl": fmt.Sprintf(uiOrdersWorkflow, g.srv.URL)}, nil)
	b := newUIBrowser(t, s.sp.base)
	b.login(s.token.Token)
	b.navigate("/ui/runs")
	b.waitVisible("table#runs")
	b.markPage()

	id := s.hook("/hooks/order", `{"id": "A-1001", "lines": ["apple", "pear", "plum"]}`)
	hooked := time.Now()
	row := `table#runs tr[data-execution="` + id + `"]`
	b.waitVisible(row)
	t.Logf("the webhook's run appeared in the runs list %s after the webhook", time.Since(hooked).Round(time.Millisecond))
	b.waitText(row+" td.status", "running")
	if !b.stillSamePage() {
		t.Errorf("the runs list was reloaded to show the new run")
	}

	b.navigate("/ui/runs/" + id)
	b.waitRunStatus("running")
	b.waitVisible(nodeSel("task.check", "running"))
	b.waitVisible(nodeSel("task.receive", "succeeded"))
	if st := b.attr(nodeSel("task.ship", ""), "data-status"); st != "pending" {
		t.Errorf("task.ship is %q while task.check runs, want pending", st)
	}
	b.markPage()
	g.open()
	opened := time.Now()
	b.waitVisible(nodeSel("task.check", "succeeded"))
	b.waitVisible(nodeSel("task.ship", "succeeded"))
	b.waitVisible(nodeSel("loop.notify", "succeeded"))
	b.waitRunStatus("succeeded")
	t.Logf("the run page showed the run succeeded %s after the gate opened", time.Since(opened).Round(time.Millisecond))
	b.waitVisible(nodeSel("task.envelope", "skipped"))
	if !b.stillSamePage() {
		t.Errorf("the run page was reloaded to follow the run")
	}
	if ex := s.sp.execution(id); ex.Status != "succeeded" {
		t.Errorf("the API says run %s is %s, want succeeded", id, ex.Status)
	}
	b.waitVisible("svg#timeline")
	// The timeline follows the run too: the nodes that ran after the page opened are on it.
	for _, n := range []string{"task.pack", "task.ship", "loop.notify"} {
		b.waitText("svg#timeline", n)
	}

	// The screenshot of the README and docs/ui.md: the whole run, from the top of its page.
	// Chromium 156.0.8078.108 returns a promise from scrollTo (promise-returning scroll
	// methods) where earlier versions returned undefined: an instant scroll, then true.
	evalJS[bool](b, "(window.scrollTo({top: 0, left: 0, behavior: 'instant'}), true)")
	png := b.screenshot(1280, 900)
	checkPNG(t, png, 1280, 900)
	if os.Getenv("FUSCIA_UPDATE_SCREENSHOTS") == "1" {
		out := filepath.Join("..", "..", "docs", "ui-run.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}

	// The panel of a node: by keyboard (focus and Enter), then by a click.
	focused := evalJS[bool](b, `((e) => { e.focus(); return document.activeElement === e; })(document.querySelector(`+jsq(nodeSel("task.receive", ""))+`))`)
	if !focused {
		t.Errorf("task.receive's node cannot take the keyboard's focus")
	} else {
		b.do("press Enter on task.receive", chromedp.KeyEvent("\r"))
		b.waitVisible("aside#node-panel")
		b.waitText("#node-output", "pear")
	}
	b.click(nodeSel("task.check", ""))
	b.waitVisible("aside#node-panel")
	b.waitText("#node-output", "checked")
	b.waitText("#node-input", "A-1001")
	if b.text("#node-attempts") == "" {
		t.Errorf("#node-attempts is empty for task.check")
	}
	b.click(nodeSel("task.pack", ""))
	b.waitVisible("#node-items")
	wantContains(t, "task.pack's items", b.text("#node-items"), "succeeded")
	b.checkConsole()
	t.Logf("webhook run followed live in %s", time.Since(start).Round(time.Millisecond))
}

// checkPNG fails unless data is a PNG of w×h pixels.
func checkPNG(t *testing.T, data []byte, w, h int) {
	t.Helper()
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if cfg.Width != w || cfg.Height != h {
		t.Errorf("the screenshot is %d×%d, want %d×%d", cfg.Width, cfg.Height, w, h)
	}
}

// TestUIFailedNode: a failed node shows its error in the graph and in the list above it, without
// a click; its panel shows the error's kind and message.
func TestUIFailedNode(t *testing.T) {
	t.Parallel()
	s := startUIServe(t, map[string]string{"billing.fsc.hcl": uiBillingWorkflow}, nil)
	id := s.sp.startRun("billing", `{}`)
	s.sp.waitStatus(id, "failed")

	b := newUIBrowser(t, s.sp.base)
	b.login(s.token.Token)
	b.navigate("/ui/runs/" + id)
	b.waitRunStatus("failed")
	b.waitVisible(nodeSel("task.charge", "failed"))
	b.waitVisible(nodeSel("task.charge", "") + " text.node-error")
	wantContains(t, "task.charge's error in the graph", b.text(nodeSel("task.charge", "")+" text.node-error"), "card declined")
	b.waitVisible("#run-errors")
	wantContains(t, "#run-errors", b.text("#run-errors"), "task.charge", "card declined: insufficient funds (amount 42)")
	b.waitVisible(nodeSel("task.prepare", "succeeded"))
	if st := b.attr(nodeSel("task.receipt", ""), "data-status"); st == "succeeded" || st == "running" {
		t.Errorf("task.receipt is %q after task.charge failed", st)
	}
	b.click(nodeSel("task.charge", ""))
	b.waitVisible("aside#node-panel")
	b.waitText("#node-error", "card declined")
	wantContains(t, "#node-error", b.text("#node-error"), "fatal")
	b.checkConsole()
}

// TestUIApproval: a waiting approval is approved by a click with data, the run finishes, and the
// journal names the token as who answered; another is rejected by a click and the run fails.
func TestUIApproval(t *testing.T) {
	t.Parallel()
	s := startUIServe(t, map[string]string{"release.fsc.hcl": uiReleaseWorkflow}, nil)
	id := s.sp.startRun("release", `{}`)
	s.sp.waitStatus(id, "waiting")

	b := newUIBrowser(t, s.sp.base)
	b.login(s.token.Token)
	b.navigate("/ui/runs/" + id)
	b.waitVisible(nodeSel("wait.approve", "waiting"))
	// The timeline draws the wait hatched, as its legend says (a stylesheet rule filled it
	// with the succeeded green).
	b.waitVisible("svg#timeline rect.bar.wait")
	if fill := evalJS[string](b, `getComputedStyle(document.querySelector("svg#timeline rect.bar.wait")).fill`); !strings.HasPrefix(fill, "url(") {
		t.Errorf("the timeline's wait bar is filled %q, want its hatch pattern url(#…)", fill)
	}
	b.waitVisible("button#approve")
	b.waitVisible("button#reject")
	b.typeInto("textarea#signal-data", `{"ok": true, "note": "ship it"}`)
	b.click("button#approve")
	b.waitRunStatus("succeeded")
	b.waitVisible(nodeSel("task.deploy", "succeeded"))
	ex := s.sp.waitStatus(id, "succeeded")
	jsonSame(t, "the outputs of the approved run", ex.Outputs, `{"answer": {"ok": true, "note": "ship it"}}`)
	if by := nodeOf(t, showJSON(t, s.h, id), "wait.approve").AnsweredBy; by != uiTokenName {
		t.Errorf("show -json: wait.approve answered_by %q, want %q (the token's name)", by, uiTokenName)
	}

	id2 := s.sp.startRun("release", `{}`)
	s.sp.waitStatus(id2, "waiting")
	b.navigate("/ui/runs/" + id2)
	b.waitVisible(nodeSel("wait.approve", "waiting"))
	b.click("button#reject")
	b.waitRunStatus("failed")
	b.waitVisible(nodeSel("wait.approve", "failed"))
	ex = s.sp.waitStatus(id2, "failed")
	if n := nodeOf(t, ex, "wait.approve"); n.Error == nil || n.Error.Kind != "rejected" {
		t.Errorf("the rejected wait.approve has error %+v, want kind rejected", n.Error)
	}
	if by := nodeOf(t, showJSON(t, s.h, id2), "wait.approve").AnsweredBy; by != uiTokenName {
		t.Errorf("show -json: the rejected wait.approve answered_by %q, want %q", by, uiTokenName)
	}
	b.checkConsole()
}

// TestUICancel: the Cancel button cancels a running run.
func TestUICancel(t *testing.T) {
	t.Parallel()
	s := startUIServe(t, map[string]string{"nightly.fsc.hcl": uiNightlyWorkflow}, nil)
	id := s.sp.startRun("nightly", `{}`)

	b := newUIBrowser(t, s.sp.base)
	b.login(s.token.Token)
	b.navigate("/ui/runs/" + id)
	b.waitVisible(nodeSel("task.crunch", "running"))
	b.waitRunStatus("running")
	// Logged out and in again with the same token as another tab would: the cookie is a new
	// session's, this page's CSRF value the old one's. The cancel takes the new value and is
	// sent again (it failed with the CSRF refusal until the page was reloaded).
	evalJS[bool](b, `(() => { window.__relogged = false;
	  fetch('/ui/session', {credentials: 'same-origin'}).then((r) => r.json())
	    .then((s) => fetch('/ui/logout', {method: 'POST', credentials: 'same-origin', headers: {'X-Fuscia-CSRF': s.csrf}}))
	    .then(() => fetch('/ui/login', {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({token: `+jsq(s.token.Token)+`})}))
	    .then((r) => { window.__relogged = r.ok; });
	  return true; })()`)
	b.waitJS("the login of the other tab", "window.__relogged === true")
	b.click("button#cancel")
	b.waitRunStatus("cancelled")
	b.waitVisible(nodeSel("task.crunch", "cancelled"))
	s.sp.waitStatus(id, "cancelled")
	if st := b.attr(nodeSel("task.report", ""), "data-status"); st == "succeeded" || st == "running" {
		t.Errorf("task.report is %q after the cancel", st)
	}
	b.checkConsole()
}

// TestUISecretNeverInPage: a secret a run used (in a URL, a header, a transform, an error, and sent
// back by a server) is nowhere in the HTML of any page, in any network answer the pages
// received (the run's live events among them), or in the console, in clear, hex or base64;
// the page does show where it was hidden.
func TestUISecretNeverInPage(t *testing.T) {
	t.Parallel()
	const secret = "uiSecretK3y7c1d9e4f2a"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/echo":
			_ = json.NewEncoder(w).Encode(map[string]string{"key": r.URL.Query().Get("key"), "auth": r.Header.Get("Authorization")})
		case "/repeat":
			_ = json.NewEncoder(w).Encode(map[string]string{"told": "the key is " + secret})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(echo.Close)
	g := newGate(t)
	s := startUIServe(t, map[string]string{"vault.fsc.hcl": fmt.Sprintf(uiVaultWorkflow, echo.URL, g.srv.URL)},
		[]string{"UI_E2E_API_KEY=" + secret})

	b := newUIBrowser(t, s.sp.base)
	b.capture = true
	var pages []string // the HTML of every state of the pages looked at
	snapshot := func(what string) {
		pages = append(pages, "=== "+what+"\n"+b.html())
	}
	b.login(s.token.Token)
	id := s.sp.startRun("vault", `{}`)
	b.navigate("/ui/runs/" + id)
	b.waitVisible(nodeSel("task.hold", "running"))
	b.waitVisible(nodeSel("task.call", "succeeded"))
	snapshot("the run page while it runs")
	g.open()
	b.waitRunStatus("completed_with_errors")
	b.waitVisible(nodeSel("task.deny", "failed"))
	snapshot("the run page once finished")
	for _, n := range []string{"task.call", "task.shape", "task.leak", "task.deny"} {
		b.click(nodeSel(n, ""))
		b.waitVisible("aside#node-panel")
		b.waitJS(n+"'s panel", `document.querySelector("aside#node-panel").textContent.includes(`+jsq(strings.TrimPrefix(n, "task."))+`)`)
		b.waitJS(n+"'s output or error", `(document.querySelector("#node-output")?.textContent.trim() ?? "") !== "" || (document.querySelector("#node-error")?.textContent.trim() ?? "") !== ""`)
		b.waitAnswer("/v1/executions/" + id + "/nodes/" + n)
		snapshot(n + "'s panel")
		if n == "task.leak" {
			b.waitText("#node-output", "(sensitive)")
		}
	}
	b.collectBodies()
	for _, path := range []string{"/ui/", "/ui/workflows/vault", "/ui/runs"} {
		b.navigate(path)
		b.waitVisible("main#main")
		if path == "/ui/runs" {
			b.waitVisible(`table#runs tr[data-execution="` + id + `"]`)
		} else {
			b.waitVisible(`[data-workflow="vault"], svg#dag g.node[data-node="task.call"]`)
		}
		snapshot(path)
		b.collectBodies()
	}

	forms := map[string]string{
		"clear":      secret,
		"hex":        hex.EncodeToString([]byte(secret)),
		"base64":     base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64url":  base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"URL-quoted": url.QueryEscape(secret),
	}
	leak := func(where, text string) {
		for form, v := range forms {
			if strings.Contains(text, v) {
				i := strings.Index(text, v)
				t.Errorf("the secret (%s) is in %s: …%s…", form, where, text[max(0, i-200):min(len(text), i+len(v)+50)])
			}
		}
	}
	for _, p := range pages {
		leak("the page's HTML", p)
	}
	all := strings.Join(pages, "\n")
	if !strings.Contains(all, "(sensitive)") {
		t.Errorf("no page shows (sensitive) where the secret was hidden")
	}
	var apiBodies, streamed int
	sawRedaction := false
	read := map[string]bool{} // the paths whose answer's body was read
	for _, r := range b.responses() {
		leak("the answer to "+r.url, string(r.body))
		for k, v := range r.headers {
			leak("header "+k+" of the answer to "+r.url, v)
		}
		if strings.Contains(r.url, "/v1/") && len(r.body) > 0 {
			apiBodies++
			if strings.Contains(string(r.body), "(sensitive)") || strings.Contains(string(r.body), `"sensitive":true`) || strings.Contains(string(r.body), `"sensitive": true`) {
				sawRedaction = true
			}
			if strings.Contains(r.url, "/events") {
				streamed++
			}
		}
		if r.fetchErr != "" && strings.Contains(r.url, "/v1/") && r.status != http.StatusNoContent {
			t.Logf("could not read the body of %s (%d): %s", r.url, r.status, r.fetchErr)
		}
		if len(r.body) > 0 {
			if u, err := url.Parse(r.url); err == nil {
				read[u.Path] = true
			}
		}
	}
	if apiBodies < 5 || !sawRedaction {
		t.Errorf("read %d API answers, redaction seen %v: the capture of the network missed the run's data", apiBodies, sawRedaction)
	}
	// The answers that carry the run's data were read, so their absence of the secret means something.
	for _, p := range []string{"/v1/executions/" + id, "/v1/executions/" + id + "/events", "/v1/workflows", "/v1/workflows/vault/graph",
		"/v1/executions/" + id + "/nodes/task.call", "/v1/executions/" + id + "/nodes/task.leak"} {
		if !read[p] {
			t.Errorf("no body of an answer to %s was read", p)
		}
	}
	for _, m := range b.consoleMessages() {
		leak("the console", m.Text+" "+m.URL)
		for _, a := range m.Args {
			leak("the console", string(a.Value)+" "+a.Description)
		}
	}
	b.checkConsole()
	t.Logf("looked for the secret in %d page states, %d network answers (%d API bodies, %d of them event streams) and %d console messages",
		len(pages), len(b.responses()), apiBodies, streamed, len(b.consoleMessages()))
}

// uiWideWorkflow generates a workflow of n transform tasks in layers of width: each task after
// the one a layer above it.
func uiWideWorkflow(n, width int) string {
	var sb strings.Builder
	sb.WriteString("workflow \"wide\" {\n  description = \"A generated graph for the UI's drawing time\"\n  durability  = \"relaxed\"\n  max_parallel = 64\n}\n\ntrigger \"manual\" \"go\" {}\n")
	for i := 0; i < n; i++ {
		if i < width {
			fmt.Fprintf(&sb, "\ntask \"n%04d\" {\n  uses   = builtin.transform\n  inputs = { i = %d }\n}\n", i, i)
		} else {
			fmt.Fprintf(&sb, "\ntask \"n%04d\" {\n  uses   = builtin.transform\n  inputs = { i = %d, prev = task.n%04d.output.i }\n}\n", i, i, i-width)
		}
	}
	return sb.String()
}

// drawnScript runs before the page's own scripts: it records, with performance.now() (from the
// start of the navigation), when the graph first has want nodes all succeeded, when the next
// frames after that were painted, and when the last answer of the API had arrived before.
const drawnScript = `(() => {
  const want = %d;
  const check = () => {
    if (window.__fusciaDrawn) return;
    const nodes = document.querySelectorAll('svg#dag g.node[data-status="succeeded"]');
    if (nodes.length < want) return;
    const api = performance.getEntriesByType("resource").filter(e => e.name.includes("/v1/")).map(e => e.responseEnd);
    window.__fusciaDrawn = {dom: performance.now(), data: Math.max(0, ...api)};
    requestAnimationFrame(() => requestAnimationFrame(() => { window.__fusciaDrawn.painted = performance.now(); }));
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"]});
})();`

// TestUIRender1000: the page of a finished run of 1,000 nodes draws them all, with their states.
// The time from the navigation's start to the frame after the last node was drawn is logged
// (docs/performance.md); the target is under 1 s (best of five loads). The test fails only past
// 5 s, a gross regression: a timing check must not turn a busy machine into a failure.
func TestUIRender1000(t *testing.T) {
	// Not parallel: it runs while the package's parallel tests wait, so the figure is the UI's.
	const n, width = 1000, 50
	s := startUIServe(t, map[string]string{"wide.fsc.hcl": uiWideWorkflow(n, width)}, nil)
	id := s.sp.startRun("wide", `{}`)
	deadline := time.Now().Add(3 * time.Minute)
	for s.sp.execution(id).Status != "succeeded" {
		if time.Now().After(deadline) {
			t.Fatalf("the 1,000-node run did not succeed within 3 minutes: %s", s.sp.execution(id).Status)
		}
		time.Sleep(200 * time.Millisecond) // polling the API for the run's end
	}

	b := newUIBrowser(t, s.sp.base)
	b.login(s.token.Token)
	ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(drawnScript, n)})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	type drawn struct {
		DOM     float64 `json:"dom"`
		Painted float64 `json:"painted"`
		Data    float64 `json:"data"`
	}
	best := drawn{DOM: -1}
	var all []string
	const loads = 5
	for i := 0; i < loads; i++ {
		b.navigate("/ui/runs/" + id)
		b.waitJS("1,000 nodes drawn succeeded", `window.__fusciaDrawn && window.__fusciaDrawn.painted > 0`)
		d := evalJS[drawn](b, "window.__fusciaDrawn")
		all = append(all, fmt.Sprintf("%.0f ms (API answered at %.0f, DOM %.0f)", d.Painted, d.Data, d.DOM))
		if best.DOM < 0 || d.Painted < best.Painted {
			best = d
		}
	}
	if got := evalJS[int](b, `document.querySelectorAll("svg#dag g.node[data-node]").length`); got != n {
		t.Errorf("the run page draws %d nodes, want %d", got, n)
	}
	t.Logf("a run of %d nodes (%d layers of %d): drawn with its states %.0f ms after the navigation started (best of %d: %s); target < 1000 ms: %s",
		n, n/width, width, best.Painted, loads, strings.Join(all, ", "), map[bool]string{true: "met", false: "NOT met"}[best.Painted < 1000])
	if best.Painted > 5000 {
		t.Errorf("the 1,000-node run took %.0f ms to draw (best of %d), far past the 1 s target", best.Painted, loads)
	}
	b.checkConsole()
}
