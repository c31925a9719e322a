package main

// The harness of the web UI's browser tests (ui_browser_test.go, docs/ui.md): a real `fuscia
// serve` with an admin API token, and a headless Chromium driven by chromedp with its own fresh
// profile, whose console, JavaScript dialogs and network answers are recorded. Every wait polls a
// condition of the page (a JavaScript expression) until a generous deadline; nothing sleeps to
// let the page catch up.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fuscia/fuscia/internal/syncbuf"
)

// uiDeadline bounds every wait of the browser tests for the page: a browser on 2 busy cores
// can take seconds to start, load and draw.
const uiDeadline = 45 * time.Second

const chromiumHint = "The web UI's browser tests drive a headless Chromium: install it (Debian: " +
	"apt-get install chromium) or name a Chrome binary in FUSCIA_CHROMIUM. " +
	"FUSCIA_SKIP_BROWSER=1 skips these tests."

// chromiumPath returns the browser to drive: $FUSCIA_CHROMIUM, else the first of Debian's and
// Chrome's usual names on PATH. Without one the test fails saying what to install, unless
// FUSCIA_SKIP_BROWSER=1 asks to skip it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("FUSCIA_SKIP_BROWSER") == "1" {
		t.Skip("FUSCIA_SKIP_BROWSER=1: the browser tests are skipped")
	}
	if p := os.Getenv("FUSCIA_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("FUSCIA_CHROMIUM=%s: %v. %s", p, err, chromiumHint)
		}
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no Chromium found (looked for chromium, chromium-browser, google-chrome). %s", chromiumHint)
	return ""
}

// ---------------------------------------------------------------------------------------------
// serve

// uiServe is one `fuscia serve` for the browser tests, with the workflows in h.dir/flows and an
// admin API token made with `fuscia token create` before it started.
type uiServe struct {
	t     *testing.T
	h     *harness
	sp    *serveProc
	token createdToken
}

// uiTokenName is the name of the browser tests' token: the journal records it as who answered
// an approval made in the UI.
const uiTokenName = "ui-admin"

// startUIServe is serveUIFiles for a test that drives a browser: it checks first that there is
// one (or skips the test with FUSCIA_SKIP_BROWSER=1) before anything starts.
func startUIServe(t *testing.T, files map[string]string, env []string, args ...string) *uiServe {
	t.Helper()
	chromiumPath(t)
	return serveUIFiles(t, files, env, args...)
}

// serveUIFiles writes files (name → content) into flows/ and serves them, with env added.
func serveUIFiles(t *testing.T, files map[string]string, env []string, args ...string) *uiServe {
	t.Helper()
	h := newHarness(t)
	for name, content := range files {
		h.write(filepath.Join("flows", name), content)
	}
	tok := newToken(t, h, uiTokenName, "admin")
	sp := startServe(t, h, env, append([]string{"flows"}, args...)...)
	sp.tokenMu.Lock()
	sp.token = tok.Token // the API requests of the test use the same token as the browser
	sp.tokenMu.Unlock()
	return &uiServe{t: t, h: h, sp: sp, token: tok}
}

// hook POSTs body to the webhook path and returns the execution id of the 202 answer.
func (s *uiServe) hook(path, body string) string {
	s.t.Helper()
	code, b := s.sp.request(http.MethodPost, path, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
	if code != http.StatusAccepted {
		s.t.Fatalf("POST %s: %d %s, want 202", path, code, b)
	}
	return executionID(s.t, b)
}

// gate is an HTTP server whose answers wait until the test opens it: a builtin.http task
// calling it stays running, for as long as the test needs, with no clock involved.
type gate struct {
	srv     *httptest.Server
	release chan struct{}
	once    sync.Once
	hits    atomic.Int32
}

func newGate(t *testing.T) *gate {
	t.Helper()
	g := &gate{release: make(chan struct{})}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		select {
		case <-g.release:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"checked": true}`)
		case <-r.Context().Done():
		}
	}))
	// Open before closing: Close waits for the requests being answered.
	t.Cleanup(func() { g.open(); g.srv.Close() })
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// ---------------------------------------------------------------------------------------------
// the browser

// uiBrowser is one headless Chromium with one tab, at serve's base URL.
type uiBrowser struct {
	t    *testing.T
	ctx  context.Context // the tab
	base string
	dir  string // the profile directory
	// capture makes navigate read the network answers' bodies before leaving a page.
	capture bool

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
	dialogs []string
	output  syncbuf.Buffer // the browser's own stdout and stderr
	logs    syncbuf.Buffer // chromedp's log and error lines
	net     map[network.RequestID]*uiResponse
	netIDs  []network.RequestID
}

// uiResponse is one network answer the page received, with its body once fetched.
type uiResponse struct {
	url      string
	status   int64
	headers  map[string]string
	finished bool
	failed   bool
	fetched  bool // the body was read (or the attempt failed: fetchErr)
	body     []byte
	fetchErr string
}

// newUIBrowser starts Chromium (headless, a fresh profile in a temporary directory, 1280×900)
// and opens its tab. The test's cleanup closes it, waits for the process and kills whatever
// process of that profile is left.
func newUIBrowser(t *testing.T, base string) *uiBrowser {
	t.Helper()
	exe := chromiumPath(t)
	b := &uiBrowser{t: t, base: base, net: map[network.RequestID]*uiResponse{}}
	var (
		ctx                    context.Context
		cancelTab, cancelAlloc context.CancelFunc
	)
	// A Chromium that dies before it answers its first command is started again, twice at most,
	// with a new profile: that crash (seen once in many runs on a loaded machine, with crashpad's
	// report and nothing else in the output) is the browser's, not the UI's.
	const starts = 3
	for i := 1; ; i++ {
		b.dir = filepath.Join(t.TempDir(), "profile")
		b.output = syncbuf.Buffer{}
		var err error
		ctx, cancelTab, cancelAlloc, err = startChromium(exe, b)
		if err == nil {
			break
		}
		out := b.output.String()
		if err := killProfileLeftovers(b.dir, 10*time.Second); err != nil {
			t.Error(err)
		}
		if i == starts || !strings.Contains(err.Error(), "failed to start") {
			t.Fatalf("start %s: %v\n--- browser output:\n%s. %s", exe, err, out, chromiumHint)
		}
		t.Logf("start %s (attempt %d of %d): %v; starting it again", exe, i, starts, err)
	}
	b.ctx = ctx

	var bg sync.WaitGroup // the goroutines reading the console and the dialogs; they end with ctx
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = chromedp.Cancel(cctx) // closes the browser gracefully, and waits for it
		cancel()
		cancelTab()
		cancelAlloc() // waits until the allocator freed everything
		bg.Wait()
		if err := killProfileLeftovers(b.dir, 10*time.Second); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			b.dump()
		}
	})

	messages := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	if err := chromedp.Listen(ctx, b.onEvent); err != nil {
		t.Fatal(err)
	}
	bg.Add(2)
	go func() {
		defer bg.Done()
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	go func() {
		// A confirm() the UI may ask before an action is accepted, as a person would.
		defer bg.Done()
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(ev.Type)+": "+ev.Message)
			b.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return b
}

// startChromium starts the browser of b.dir and opens its tab. The first action binds the
// browser to the tab's context, which has no deadline; a start that hangs is cut by cancelling
// that context, which kills the process. On an error everything is stopped and waited for.
func startChromium(exe string, b *uiBrowser) (ctx context.Context, cancelTab, cancelAlloc context.CancelFunc, err error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", "new"),
		chromedp.UserDataDir(b.dir),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("lang", "en-US"),
		chromedp.CombinedOutput(&b.output),
	)
	if os.Getuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	logf := func(format string, args ...any) { fmt.Fprintf(&b.logs, format+"\n", args...) }
	ctx, cancelTab = chromedp.NewContext(allocCtx, chromedp.WithLogf(logf), chromedp.WithErrorf(logf))
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(uiDeadline):
		cancelTab()
		<-started
		err = fmt.Errorf("the browser did not start within %s", uiDeadline)
	}
	if err != nil {
		cancelTab()
		cancelAlloc()
		return nil, nil, nil, err
	}
	return ctx, cancelTab, cancelAlloc, nil
}

// onEvent records the network answers; it runs in the tab's message loop, so it only records.
func (b *uiBrowser) onEvent(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventResponseReceived:
		r := &uiResponse{url: ev.Response.URL, status: ev.Response.Status, headers: map[string]string{}}
		for k, v := range ev.Response.Headers {
			r.headers[strings.ToLower(k)] = fmt.Sprint(v)
		}
		if _, ok := b.net[ev.RequestID]; !ok {
			b.netIDs = append(b.netIDs, ev.RequestID)
		}
		b.net[ev.RequestID] = r
	case *network.EventDataReceived:
		// Only a response streamed with Network.streamResourceContent carries its data here.
		if r := b.net[ev.RequestID]; r != nil && len(ev.Data) > 0 {
			r.body = append(r.body, ev.Data...)
		}
	case *network.EventLoadingFinished:
		if r := b.net[ev.RequestID]; r != nil {
			r.finished = true
		}
	case *network.EventLoadingFailed:
		if r := b.net[ev.RequestID]; r != nil {
			r.failed = true
		}
	}
}

// collectBodies reads the body of every answer received so far that was not read yet: a
// finished one with Network.getResponseBody; one still streaming (the events of a run) with
// Network.streamResourceContent, whose later data arrive in dataReceived events. Call it before
// leaving a page, which discards the page's bodies.
func (b *uiBrowser) collectBodies() {
	b.t.Helper()
	b.mu.Lock()
	var finished, streaming []network.RequestID
	for _, id := range b.netIDs {
		r := b.net[id]
		switch {
		case r.fetched || r.failed:
		case r.finished:
			finished = append(finished, id)
		default:
			streaming = append(streaming, id)
		}
	}
	b.mu.Unlock()
	for _, id := range finished {
		ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
		res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
		cancel()
		b.mu.Lock()
		r := b.net[id]
		r.fetched = true
		if err != nil {
			r.fetchErr = err.Error()
		} else {
			r.body = append(r.body, res.Body...)
		}
		b.mu.Unlock()
	}
	for _, id := range streaming {
		ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
		res, err := chromedp.Call(ctx, network.StreamResourceContent, network.StreamResourceContentParams{RequestID: id})
		var body []byte
		if err != nil {
			// It finished since it was looked at: read it whole.
			var whole network.GetResponseBodyResult
			whole, err = chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
			body = whole.Body
		} else {
			body = res.BufferedData
		}
		cancel()
		b.mu.Lock()
		r := b.net[id]
		r.fetched = true
		if err != nil {
			r.fetchErr = err.Error()
		} else {
			r.body = append(body, r.body...)
		}
		b.mu.Unlock()
	}
}

// waitAnswer waits until the page received an answer whose URL's path is path, and its whole
// body (network events are recorded while the page runs, so this is a condition, not a guess).
func (b *uiBrowser) waitAnswer(path string) {
	b.t.Helper()
	deadline := time.Now().Add(uiDeadline)
	for {
		b.mu.Lock()
		done := false
		for _, id := range b.netIDs {
			r := b.net[id]
			if u, err := url.Parse(r.url); err == nil && u.Path == path && r.finished {
				done = true
			}
		}
		b.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the page received no answer to %s within %s\n%s", path, uiDeadline, b.where())
		}
		time.Sleep(50 * time.Millisecond) // the polling interval of a condition, not a synchronisation
	}
}

// responses returns a copy of the answers recorded so far.
func (b *uiBrowser) responses() []uiResponse {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]uiResponse, 0, len(b.netIDs))
	for _, id := range b.netIDs {
		r := *b.net[id]
		r.body = append([]byte(nil), r.body...)
		out = append(out, r)
	}
	return out
}

// consoleMessages returns a copy of the console messages so far.
func (b *uiBrowser) consoleMessages() []chromedp.ConsoleMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), b.console...)
}

// checkConsole fails the test on an uncaught exception or a Content-Security-Policy violation
// in the page: both are bugs of the UI even when the test's checks pass.
func (b *uiBrowser) checkConsole() {
	b.t.Helper()
	for _, m := range b.consoleMessages() {
		if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
			b.t.Errorf("the page's console has %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1)
		}
	}
}

// dump logs what helps to understand a failure: the page's console, dialogs, and the browser's
// and chromedp's output.
func (b *uiBrowser) dump() {
	var sb strings.Builder
	for _, m := range b.consoleMessages() {
		fmt.Fprintf(&sb, "  console %s: %s (%s:%d)\n", m.Type, m.Text, m.URL, m.Line+1)
	}
	b.mu.Lock()
	for _, d := range b.dialogs {
		fmt.Fprintf(&sb, "  dialog %s\n", d)
	}
	b.mu.Unlock()
	b.t.Logf("browser console and dialogs:\n%s--- chromedp:\n%s--- browser output:\n%s", sb.String(), b.logs.String(), lastLines(b.output.String(), 40))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// killProfileLeftovers kills every process still running with the profile directory dir (a
// renderer or utility process can outlive the browser's main process, which chromedp waited
// for) and waits until none is left.
func killProfileLeftovers(dir string, limit time.Duration) error {
	want := "--user-data-dir=" + dir
	deadline := time.Now().Add(limit)
	for {
		var pids []int
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return nil // not Linux: nothing to look at
		}
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil {
				continue
			}
			for _, arg := range strings.Split(string(cmdline), "\x00") {
				if arg == want {
					pids = append(pids, pid)
					break
				}
			}
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("browser processes %v of profile %s still run %s after the browser stopped", pids, dir, limit)
		}
		time.Sleep(20 * time.Millisecond) // a poll for the kernel to remove them, not a synchronisation
	}
}

// do runs actions with the UI deadline.
func (b *uiBrowser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.where())
	}
}

// navigate loads base+path and waits for its load event. With capture on, the bodies of the
// page being left are read first (a navigation discards them).
func (b *uiBrowser) navigate(path string) {
	b.t.Helper()
	if b.capture {
		b.collectBodies()
	}
	b.do("open "+path, chromedp.Navigate(b.base+path))
}

// evalJS evaluates expr in the page and decodes its value into T.
func evalJS[T any](b *uiBrowser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\n%s", expr, err, b.where())
	}
	return v
}

// waitJS polls the JavaScript expression cond until it is true, for up to uiDeadline; what says
// what is awaited, for the failure. The expression is evaluated by the DevTools protocol, so the
// page's Content-Security-Policy (no eval) does not apply to it.
func (b *uiBrowser) waitJS(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(uiDeadline)
	expr := "(() => { try { return !!(" + cond + "); } catch (e) { return false; } })()"
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if err != nil {
			lastErr = err // a navigation destroys the context of the evaluation: try again
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the page did not show %s within %s (last error: %v)\n%s", what, uiDeadline, lastErr, b.where())
		}
		time.Sleep(50 * time.Millisecond) // the polling interval of a condition, not a synchronisation
	}
}

// jsq quotes s as a JavaScript string literal.
func jsq(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// visibleJS is a JavaScript expression: the element of the CSS selector sel exists and is
// rendered (for an SVG element too).
func visibleJS(sel string) string {
	return "((e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')(document.querySelector(" + jsq(sel) + "))"
}

// waitVisible waits until the element of sel is rendered.
func (b *uiBrowser) waitVisible(sel string) {
	b.t.Helper()
	b.waitJS(sel+" visible", visibleJS(sel))
}

// waitText waits until the text of the element of sel contains want.
func (b *uiBrowser) waitText(sel, want string) {
	b.t.Helper()
	b.waitJS(fmt.Sprintf("%q in %s", want, sel),
		"(document.querySelector("+jsq(sel)+")?.textContent ?? '').includes("+jsq(want)+")")
}

// text returns the element's text (whitespace collapsed), or "" when there is none.
func (b *uiBrowser) text(sel string) string {
	b.t.Helper()
	return evalJS[string](b, "(document.querySelector("+jsq(sel)+")?.textContent ?? '').replace(/\\s+/g, ' ').trim()")
}

// attr returns the attribute name of the element of sel ("" when either is missing).
func (b *uiBrowser) attr(sel, name string) string {
	b.t.Helper()
	return evalJS[string](b, "document.querySelector("+jsq(sel)+")?.getAttribute("+jsq(name)+") ?? ''")
}

// click scrolls the element of sel to the middle of the view and clicks its centre with the
// mouse, as a person does (so it works for SVG elements too).
func (b *uiBrowser) click(sel string) {
	b.t.Helper()
	b.waitVisible(sel)
	xy := evalJS[[]float64](b, `((e) => { e.scrollIntoView({block: 'center', inline: 'center'});
		const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })(document.querySelector(`+jsq(sel)+`))`)
	if len(xy) != 2 {
		b.t.Fatalf("click %s: no position (%v)", sel, xy)
	}
	b.do("click "+sel, chromedp.MouseClickXY(xy[0], xy[1]))
}

// typeInto empties the field of sel and types s into it, key by key.
func (b *uiBrowser) typeInto(sel, s string) {
	b.t.Helper()
	b.waitVisible(sel)
	evalJS[bool](b, `((e) => { e.focus(); e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); return true; })(document.querySelector(`+jsq(sel)+`))`)
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), s))
}

// login opens the login page, types the token and waits for the logged-in page.
func (b *uiBrowser) login(token string) {
	b.t.Helper()
	b.navigate("/ui/login")
	b.typeInto("input#token", token)
	b.click("form#login button[type=submit]")
	b.waitVisible(`nav[aria-label="Main"]`)
}

// markPage sets a marker in the page's global scope; stillSamePage says whether it is still there,
// i.e. whether the page was not reloaded since.
func (b *uiBrowser) markPage() {
	b.t.Helper()
	evalJS[bool](b, "window.__fusciaTestMark = true")
}

func (b *uiBrowser) stillSamePage() bool {
	b.t.Helper()
	return evalJS[bool](b, "window.__fusciaTestMark === true")
}

// html is the page's HTML as it is now (the DOM, not the source).
func (b *uiBrowser) html() string {
	b.t.Helper()
	return evalJS[string](b, "document.documentElement.outerHTML")
}

// where describes the page for a failure: its address and the start of its main text.
func (b *uiBrowser) where() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`location.href + "\n" + (document.body ? document.body.innerText : "(no body)").slice(0, 3000)`))
	if err != nil {
		return "(the page could not be read: " + err.Error() + ")"
	}
	return "--- page " + s
}

// screenshot takes a PNG of the viewport at w×h.
func (b *uiBrowser) screenshot(w, h int64) []byte {
	b.t.Helper()
	b.do("set the viewport", chromedp.EmulateViewport(w, h))
	ctx, cancel := context.WithTimeout(b.ctx, uiDeadline)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	return png
}
