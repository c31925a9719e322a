package testfile

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang/addrs"
)

// mockRoots are what a mock expression (output, error, data, and mock_http's headers, body and
// json) may read: the call's input, the attempt number, and the run's variables.
var mockRoots = []string{"input", "attempt", "var"}

// mocks decodes the mock blocks of one scope (where: "the test file" or `run "x"`), reporting
// a second mock of the same node, component, plugin or task in that scope.
func (d *decoder) mocks(blocks hcl.Blocks, where string) Mocks {
	var m Mocks
	nodes := map[string]*NodeMock{}
	components := map[string]*GroupMock{}
	plugins := map[string]*GroupMock{}
	for _, b := range blocks {
		switch b.Type {
		case "mock":
			nm := d.nodeMock(b)
			if nm == nil {
				continue
			}
			if prev := nodes[nm.Addr]; prev != nil {
				d.add(errorf(b.LabelRanges[0], "Duplicate mock",
					"%s is already mocked in %s at line %d. Mock a node once per scope: put every attempt in one mock block.",
					nm.Addr, where, prev.DeclRange.Start.Line))
				continue
			}
			nodes[nm.Addr] = nm
			m.Nodes = append(m.Nodes, nm)
		case "mock_component", "mock_plugin":
			seen, what := components, "component"
			if b.Type == "mock_plugin" {
				seen, what = plugins, "plugin"
			}
			g := d.groupMock(b, what)
			if prev := seen[g.Name]; prev != nil {
				d.add(errorf(b.LabelRanges[0], "Duplicate "+b.Type,
					"The %s %q is already mocked in %s at line %d. Put all its tasks in one %s block.",
					what, g.Name, where, prev.DeclRange.Start.Line, b.Type))
				continue
			}
			seen[g.Name] = g
			if what == "component" {
				m.Components = append(m.Components, g)
			} else {
				m.Plugins = append(m.Plugins, g)
			}
		case "mock_http":
			if h := d.httpMock(b); h != nil {
				m.HTTP = append(m.HTTP, h)
			}
		}
	}
	return m
}

// nodeMock decodes `mock "task.NAME"` or `mock "wait.NAME"`; nil when the address is invalid.
func (d *decoder) nodeMock(b *hcl.Block) *NodeMock {
	label, rng := b.Labels[0], b.LabelRanges[0]
	kind, name, _ := strings.Cut(label, ".")
	addr, ok := addrs.ParseNode(label)
	switch {
	case ok && addr.Loop != "":
		d.add(errorf(rng, "Invalid mock address",
			"%q is a node in the body of loop %q; a mock names a node at the top level of the workflow: task.NAME or wait.NAME.",
			label, addr.Loop))
		return nil
	case ok && addr.Kind != addrs.KindTask && addr.Kind != addrs.KindWait:
		d.add(errorf(rng, "Invalid mock address",
			"%q is a %s; only task and wait nodes can be mocked (task.NAME or wait.NAME). A %s runs for real: mock the tasks and waits it leads to.",
			label, addr.Kind, addr.Kind))
		return nil
	case !ok && (kind == "task" || kind == "wait"):
		d.add(errorf(rng, "Invalid mock address",
			"%q is not a valid node name: names start with a lowercase letter a-z and contain only a-z, 0-9, \"_\" and \"-\" (at most %d characters).",
			name, addrs.MaxNameLength))
		return nil
	case !ok:
		d.add(errorf(rng, "Invalid mock address",
			"%q is not a node address. A mock names a task or wait of the workflow: task.NAME or wait.NAME. Mock components, plugins and HTTP with mock_component, mock_plugin and mock_http blocks.",
			label))
		return nil
	}
	nm := &NodeMock{Kind: string(addr.Kind), Name: addr.Name, Addr: addr.String(), DeclRange: b.DefRange}
	if addr.Kind == addrs.KindTask {
		nm.Results = d.results(b, "a task mock", fmt.Sprintf("the mock of %s", nm.Addr))
		return nm
	}
	nm.Wait = d.waitMock(b, nm.Addr)
	return nm
}

// results decodes the body of a task mock: `output`, `error`, or `attempt` blocks, exactly one
// of them. The result list is empty when the body is invalid.
func (d *decoder) results(b *hcl.Block, where, what string) []*Result {
	c, diags := content(b.Body, taskMockSchema, where)
	d.add(diags...)
	out, errAttr := c.Attributes["output"], c.Attributes["error"]
	attempts := c.Blocks.OfType("attempt")
	set := 0
	for _, present := range []bool{out != nil, errAttr != nil, len(attempts) > 0} {
		if present {
			set++
		}
	}
	if set == 0 && diags.HasErrors() {
		return nil // an unsupported argument, most likely a misspelt output or error, was reported
	}
	if set != 1 {
		rng := b.DefRange
		if set > 1 && errAttr != nil {
			rng = errAttr.NameRange
		} else if set > 1 {
			rng = attempts[0].DefRange
		}
		d.add(errorf(rng, "Invalid task mock",
			"%s must set exactly one of: output = {…} (every attempt succeeds), error = { kind = …, message = … } (every attempt fails), or one or more attempt blocks (one result per attempt, the last repeating).",
			upperFirst(what)))
		return nil
	}
	if len(attempts) == 0 {
		r := d.result(out, errAttr, b.DefRange)
		if r == nil {
			return nil
		}
		return []*Result{r}
	}
	var rs []*Result
	for _, ab := range attempts {
		ac, diags := content(ab.Body, attemptSchema, "an attempt block")
		d.add(diags...)
		o, e := ac.Attributes["output"], ac.Attributes["error"]
		if o == nil && e == nil && diags.HasErrors() {
			continue // a misspelt output or error was reported
		}
		if (o == nil) == (e == nil) {
			rng := ab.DefRange
			if e != nil {
				rng = e.NameRange
			}
			d.add(errorf(rng, "Invalid attempt",
				"An attempt block sets exactly one of output = {…} (the attempt succeeds) and error = { kind = …, message = … } (it fails)."))
			continue
		}
		if r := d.result(o, e, ab.DefRange); r != nil {
			rs = append(rs, r)
		}
	}
	return rs
}

// result makes a Result from one of output and errAttr.
func (d *decoder) result(output, errAttr *hcl.Attribute, rng hcl.Range) *Result {
	if output != nil {
		d.checkRoots(output.Expr, "A mocked output", mockRoots)
		return &Result{Output: output.Expr, DeclRange: rng}
	}
	if !d.errorObject(errAttr) {
		return nil
	}
	return &Result{Error: errAttr.Expr, DeclRange: rng}
}

// errorObject checks a mocked error: an object literal with a static, known kind and a
// message.
func (d *decoder) errorObject(attr *hcl.Attribute) bool {
	kinds := make([]string, len(errorKinds))
	for i, k := range errorKinds {
		kinds[i] = string(k)
	}
	obj, ok := attr.Expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		d.add(errorf(attr.Expr.Range(), "Invalid mocked error",
			"A mocked error is an object written out: error = { kind = \"retryable\", message = \"…\" }; kind is one of %s.",
			quoteList(kinds)))
		return false
	}
	var kindExpr, msgExpr hclsyntax.Expression
	valid := true
	for _, item := range obj.Items {
		key, ok := literalKey(item.KeyExpr)
		switch {
		case ok && key == "kind":
			kindExpr = item.ValueExpr
		case ok && key == "message":
			msgExpr = item.ValueExpr
		default:
			name := "this key"
			if ok {
				name = fmt.Sprintf("%q", key)
			}
			d.add(errorf(item.KeyExpr.Range(), "Invalid mocked error",
				"A mocked error has the attributes kind and message only, not %s.%s", name, suggestion(key, []string{"kind", "message"})))
			valid = false
		}
	}
	if kindExpr == nil {
		d.add(errorf(attr.Expr.Range(), "Invalid mocked error",
			"The mocked error has no kind: add kind = \"retryable\" (or one of %s).", quoteList(kinds)))
		valid = false
	} else if v, ok := d.static.value(kindExpr, "the kind of a mocked error"); ok {
		if v.Type() != cty.String || !slices.Contains(kinds, v.AsString()) {
			got := typeName(v.Type())
			if v.Type() == cty.String {
				got = fmt.Sprintf("%q", v.AsString())
			}
			hint := ""
			if v.Type() == cty.String {
				hint = suggestion(v.AsString(), kinds)
			}
			d.add(errorf(kindExpr.Range(), "Invalid mocked error kind",
				"The kind of a mocked error is one of %s; got %s.%s", quoteList(kinds), got, hint))
			valid = false
		}
	} else {
		valid = false
	}
	if msgExpr == nil {
		d.add(errorf(attr.Expr.Range(), "Invalid mocked error",
			"The mocked error has no message: add message = \"…\", which the run reports as the task's error."))
		valid = false
	} else {
		d.checkRoots(msgExpr, "A mocked error message", mockRoots)
	}
	return valid
}

// waitMock decodes the body of `mock "wait.NAME"`.
func (d *decoder) waitMock(b *hcl.Block, addr string) *WaitMock {
	c, diags := content(b.Body, waitMockSchema, "a wait mock")
	d.add(diags...)
	w := &WaitMock{}
	a := c.Attributes
	if attr := a["data"]; attr != nil {
		w.Data = attr.Expr
		d.checkRoots(attr.Expr, "Mocked wait data", mockRoots)
	}
	if attr := a["reject"]; attr != nil {
		w.Reject, _ = d.static.boolean(attr, "the reject of a wait mock")
	}
	if attr := a["timeout"]; attr != nil {
		w.Timeout, _ = d.static.boolean(attr, "the timeout of a wait mock")
	}
	switch {
	case w.Reject && w.Timeout:
		d.add(errorf(a["timeout"].NameRange, "Invalid wait mock",
			"The mock of %s sets both reject and timeout; a wait ends one way: keep one of them.", addr))
	case w.Timeout && w.Data != nil:
		d.add(errorf(a["data"].NameRange, "Invalid wait mock",
			"The mock of %s times out, so nothing answers it with data: remove data, or remove timeout to resolve the wait with it.", addr))
	}
	return w
}

// groupMock decodes `mock_component "LOCAL"` or `mock_plugin "LOCAL"`.
func (d *decoder) groupMock(b *hcl.Block, what string) *GroupMock {
	g := &GroupMock{Name: b.Labels[0], DeclRange: b.DefRange, Tasks: map[string]*TaskMock{}}
	c, diags := content(b.Body, groupMockSchema, "a "+b.Type+" block")
	d.add(diags...)
	for _, tb := range c.Blocks.OfType("task") {
		name := tb.Labels[0]
		if prev := g.Tasks[name]; prev != nil {
			d.add(errorf(tb.LabelRanges[0], "Duplicate task mock",
				"Task %q of %s %q is already mocked at line %d; mock each task once.", name, what, g.Name, prev.DeclRange.Start.Line))
			continue
		}
		g.Tasks[name] = &TaskMock{
			Name:      name,
			DeclRange: tb.DefRange,
			Results:   d.results(tb, "a task block of "+b.Type, fmt.Sprintf("the mock of task %q of %s %q", name, what, g.Name)),
		}
	}
	return g
}

// httpMock decodes a `mock_http` block; nil when its url is missing or invalid.
func (d *decoder) httpMock(b *hcl.Block) *HTTPMock {
	c, diags := content(b.Body, httpMockSchema, "a mock_http block")
	d.add(diags...)
	a := c.Attributes
	h := &HTTPMock{Status: http.StatusOK, DeclRange: b.DefRange}
	valid := true
	if attr := a["url"]; attr != nil {
		u, ok := d.static.str(attr, "the url of mock_http")
		switch {
		case !ok:
			valid = false
		case u == "":
			d.add(errorf(attr.Expr.Range(), "Invalid value for url",
				"The url of mock_http must not be empty: write the URL the request goes to, with * for any run of characters (\"https://api.example.com/*\")."))
			valid = false
		default:
			h.URL = u
		}
	} else {
		valid = false // Content reported it
	}
	if attr := a["method"]; attr != nil {
		if m, ok := d.static.str(attr, "the method of mock_http"); ok {
			if isToken(m) {
				h.Method = strings.ToUpper(m)
			} else {
				d.add(errorf(attr.Expr.Range(), "Invalid value for method",
					"%q is not an HTTP method: write a method such as \"GET\" or \"POST\", or leave method out to match any.", m))
				valid = false
			}
		}
	}
	if attr := a["status"]; attr != nil {
		if s, ok := d.static.integer(attr, "the status of mock_http", 100, 599); ok {
			h.Status = int(s)
		}
	}
	if attr := a["headers"]; attr != nil {
		h.Headers = attr.Expr
		d.checkRoots(attr.Expr, "The headers of mock_http", mockRoots)
	}
	if attr := a["body"]; attr != nil {
		h.Body = attr.Expr
		d.checkRoots(attr.Expr, "The body of mock_http", mockRoots)
	}
	if attr := a["json"]; attr != nil {
		h.JSON = attr.Expr
		d.checkRoots(attr.Expr, "The json of mock_http", mockRoots)
		if h.Body != nil {
			d.add(errorf(attr.NameRange, "Invalid mock_http",
				"A mock_http answers with body (a string) or json (a value sent as JSON), not both: remove one."))
		}
	}
	if !valid {
		return nil
	}
	return h
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar), which a method must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
