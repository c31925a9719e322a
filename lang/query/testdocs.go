package query

import "strings"

// The blocks and attributes of a test file (*.fsctest.hcl), as lang/testfile decodes them,
// with their documentation (docs/testing.md). lang/testfile sits beside this package in the
// layers, so its schemas are restated here. TestTestDocs decodes, with lang/testfile, a file
// that uses every entry of the table: the decoder must accept each of them, and refuse an
// attribute the table does not list in each block.

// testBlock is one block type of a test file.
type testBlock struct {
	doc    string
	labels int // how many labels the block takes
	attrs  map[string]attrDoc
	blocks []string // keys of testBlocks of the blocks it holds
	// open: any attribute name is allowed (the `variables` block).
	open bool
}

var testBlocks = map[string]testBlock{
	"":          {doc: "A test file.", blocks: []string{"variables", "mock", "mock_component", "mock_plugin", "mock_http", "run"}},
	"variables": {doc: "The variables of every run of the file: `NAME = value` lines (literal values and functions). A run's `variables` attribute overrides them.", open: true},
	"mock.task": {doc: "Mocks a task of the workflow (`mock \"task.NAME\"`): its `output` or `error` on every attempt, or one `attempt` block per attempt (the last repeats).", labels: 1, attrs: map[string]attrDoc{
		"output": {"any", "none", "The task's output. It may read `input` (the call's input), `attempt` (the attempt number, from 1), `var.NAME` and functions."},
		"error":  {"object", "none", "`{ kind = \"…\", message = \"…\" }`: the attempt fails with this kind (`retryable`, `fatal`, `timeout`, `validation`, …)."},
	}, blocks: []string{"attempt"}},
	"mock.wait": {doc: "Mocks a wait of the workflow (`mock \"wait.NAME\"`): resolved with `data`, rejected, or timed out on the virtual clock.", labels: 1, attrs: map[string]attrDoc{
		"data":    {"any", "`{}`", "The answer's data: the wait's output."},
		"reject":  {"bool", "`false`", "`true` rejects the approval: the wait fails with kind `rejected`."},
		"timeout": {"bool", "`false`", "`true` lets the wait's timeout pass."},
	}},
	"attempt": {doc: "What one attempt of the mocked task answers; the last `attempt` block repeats for every later attempt.", attrs: map[string]attrDoc{
		"output": {"any", "none", "The attempt's output (same scope as the mock's `output`)."},
		"error":  {"object", "none", "`{ kind = \"…\", message = \"…\" }`: the attempt fails."},
	}},
	"mock_component": {doc: "Mocks the tasks of a `component` block of the workflow, by its local name: one `task \"NAME\"` block per task.", labels: 1, blocks: []string{"mock.task"}},
	"mock_plugin":    {doc: "Mocks the tasks of a `plugin` block of the workflow, by its local name: one `task \"NAME\"` block per task.", labels: 1, blocks: []string{"mock.task"}},
	"mock_http": {doc: "Answers `builtin.http` requests whose method and URL match; the first match in file order wins (a run's own first).", attrs: map[string]attrDoc{
		"url":     {"string", "required", "A glob over the request URL: `*` matches any run of characters, `/` included."},
		"method":  {"string", "any", "The request method to match."},
		"status":  {"whole number", "`200`", "The response status."},
		"headers": {"object of strings", "`{}`", "The response headers."},
		"body":    {"string", "none", "The response body as a string; or use `json`."},
		"json":    {"any", "none", "A value encoded as the JSON body, with content-type application/json."},
	}},
	"run": {doc: "One run of a workflow with mocks, and what must hold after it.", labels: 1, attrs: map[string]attrDoc{
		"workflow":        {"string", "the test file's stem + `.fsc.hcl`", "The workflow file, relative to the test file."},
		"trigger":         {"string", "the manual trigger", "The name of the trigger that starts the run."},
		"variables":       {"object", "`{}`", "Variables of this run, over the file's `variables`."},
		"payload":         {"any", "none", "The trigger payload."},
		"expect_status":   {"string", "`\"succeeded\"` (`\"failed\"` with `expect_failures`)", "The status the run must end with."},
		"expect_failures": {"list of node references", "`[]`", "Nodes that must end failed, as references: `[task.charge]`."},
	}, blocks: []string{"mock", "mock_component", "mock_plugin", "mock_http", "assert"}},
	"assert": {doc: "A condition that must hold after the run. It sees `output.NAME`, `status`, `node.KIND.NAME.{status, attempts, input, output, error, instances, iterations}`, `var.NAME`, `payload` and functions.", attrs: map[string]attrDoc{
		"condition":     {"bool", "required", "Must be true after the run."},
		"error_message": {"string", "none", "Why it matters: shown when the condition is false."},
	}},
}

// testBlockKey is the testBlocks key of a block of a test file, given its type, its labels
// and its parent's key.
func testBlockKey(parent, typ string, labels []string) string {
	switch {
	case typ == "mock":
		if len(labels) > 0 && strings.HasPrefix(labels[0], "wait.") {
			return "mock.wait"
		}
		return "mock.task"
	case typ == "task" && (parent == "mock_component" || parent == "mock_plugin"):
		return "mock.task"
	}
	return typ
}

// testBlockTypes lists the block types a test-file block of key may hold, by type name.
func testBlockTypes(key string) map[string]string {
	out := map[string]string{}
	for _, k := range testBlocks[key].blocks {
		typ := k
		switch {
		case k == "mock.task" && key != "mock_component" && key != "mock_plugin":
			typ = "mock"
		case k == "mock.task":
			typ = "task"
		}
		out[typ] = k
	}
	return out
}
