package query

import (
	"maps"
	"strings"
	"sync"
)

// The documentation of every block and attribute of a workflow file, shown by hover and
// completion. The words are docs/reference/language.md's; TestBlockDocsCoverSchemas fails when
// lang's decode schemas (lang.BlockSchemas) accept an attribute or a block that has no entry
// here, or when an entry names one they do not accept, so the two cannot drift.

// attrDoc documents one attribute.
type attrDoc struct {
	typ string // "duration", "list of node references", …
	def string // the default, as the reference writes it; "required" when it must be set
	doc string // meaning and constraints
}

// blockDoc documents one block type: what it is, and its body's attributes.
type blockDoc struct {
	doc   string
	attrs map[string]attrDoc
}

// blockDocs is keyed like lang.BlockSchemas ("task", "retry", "trigger.webhook"), plus
// "trigger" for the trigger block itself. It is built at its first use (the language server's,
// not every command's start: ~27 KB allocated at package init otherwise) and never modified.
var blockDocs = sync.OnceValue(buildBlockDocs)

var commonNodeAttrDocs = map[string]attrDoc{
	"after":         {"list of node references", "`[]`", "Extra upstream nodes: `KIND.NAME` orders without data; `switch.NAME.CASE` and `task.NAME.branch.KEY` are branch edges. Not quoted."},
	"depends_on":    {"list of node references", "`[]`", "A synonym of `after`; both may be given and are merged."},
	"when":          {"bool", "runs", "A condition: `false` makes the node `skipped` (and skip spreads to its dependents). It may read anything the node's other expressions may."},
	"timeout":       {"duration", "the workflow's `timeout`", "The time one attempt of a task may take; longer than zero. On a `wait` it bounds the wait; other node kinds accept it and do not use it."},
	"fail_workflow": {"bool", "`true`", "`false` makes the node non-critical: its failure is recorded and its dependents are skipped, but the run goes on and ends `completed_with_errors`."},
}

func node(doc string, attrs map[string]attrDoc) blockDoc {
	all := maps.Clone(commonNodeAttrDocs)
	maps.Copy(all, attrs)
	return blockDoc{doc: doc, attrs: all}
}

func buildBlockDocs() map[string]blockDoc {
	return map[string]blockDoc{
		"": {doc: "A workflow file."},
		"workflow": {doc: "Names the workflow and holds the settings that apply to all of it. A file has exactly one.", attrs: map[string]attrDoc{
			"description":         {"string", "`\"\"`", "What the workflow does, for readers."},
			"timeout":             {"duration", "`\"1h\"`", "The timeout of one attempt of a task, for tasks that set none; longer than zero."},
			"max_duration":        {"duration", "none", "The wall-clock time one run may take; past it the run ends `timed_out`; longer than zero."},
			"max_parallel":        {"whole number", "`16`", "Task attempts running at once in one run, `for_each` items and loop iterations included; 1 to 10,000 (`apply -parallelism` overrides it)."},
			"max_concurrent_runs": {"whole number", "no limit", "Runs of this workflow going at once under `fuscia serve`; 1 to 1,000,000."},
			"on_overlap":          {"string", "`\"queue\"`", "What a trigger does when `max_concurrent_runs` runs are going: `\"queue\"` starts the run when a place frees, `\"skip\"` starts nothing."},
			"durability":          {"string", "`\"strict\"`", "`\"strict\"` syncs the journal to disk before a task's result is acted on; `\"relaxed\"` lets the operating system write it a little later (faster; a machine crash can lose the last results, which then run again)."},
		}},
		"retry": {doc: "How often, and how soon, a failed task attempt is tried again. In a `workflow` block it is the default of every task; in a task it replaces that default as a whole.", attrs: map[string]attrDoc{
			"attempts":      {"whole number", "required", "Attempts in total, the first included: `1` means no retry; 1 to 1,000."},
			"backoff":       {"string", "`\"exponential\"`", "`\"exponential\"`: the delay doubles from one attempt to the next; `\"fixed\"`: it is always `initial_delay`."},
			"initial_delay": {"duration", "`\"1s\"`", "The delay before the second attempt; zero or more."},
			"max_delay":     {"duration", "`\"1m\"`", "The longest delay; not shorter than `initial_delay` when set."},
		}},
		"data": {doc: "Bounds on how much data outputs may hold, so that a run cannot fill memory or the journal.", attrs: map[string]attrDoc{
			"max_node_output": {"size", "`\"10MiB\"`", "The largest output of one task attempt (of one item, for `for_each`), as JSON."},
			"max_total":       {"size", "`\"100MiB\"`", "The outputs of all nodes of one run together."},
			"on_exceed":       {"string", "`\"fail\"`", "What an output over `max_node_output` does: `\"fail\"` fails the attempt with kind `data_limit_exceeded`; `\"spill\"` writes it to the run's artifact store and puts `{ artifact_id, content_type, size }` in its place."},
		}},
		"variable": {doc: "A typed input of the workflow, read as `var.NAME`. Its value is fixed when the workflow is planned and is the same for the whole run.", attrs: map[string]attrDoc{
			"type":        {"type constraint", "`any`", "The variable's type: `string`, `number`, `bool`, `any`, `list(T)`, `set(T)`, `map(T)`, `tuple([…])` or `object({ NAME = T, … })`; a value is converted to it."},
			"default":     {"value of `type`", "none", "The value when none is given; a literal value. Without a default the variable is required."},
			"description": {"string", "`\"\"`", "For readers."},
			"sensitive":   {"bool", "`false`", "`true` treats the value like a secret's: hidden in `plan`, `show`, logs and the journal, and so is everything computed from it."},
		}},
		"secret": {doc: "A sensitive value read when a run starts, never written into a plan. Read it as `secret.NAME`. Exactly one of `env` and `file` is set.", attrs: map[string]attrDoc{
			"env":         {"string", "—", "The environment variable holding the value; unset or empty is an error when the run starts."},
			"file":        {"string", "—", "A file holding the value; one trailing newline is dropped. A relative path is relative to the directory `fuscia` runs in."},
			"description": {"string", "`\"\"`", "For readers."},
		}},
		"component": {doc: "Declares a Wasm component installed in the registry under a local name; tasks and triggers use it as `component.LOCAL.TASK`.", attrs: map[string]attrDoc{
			"source":        {"string", "required", "`\"ORG/NAME\"` in the registry; both parts are names."},
			"version":       {"string", "newest installed", "A version constraint such as `\"~> 1.4\"`; `plan` locks the chosen version and digest in `.fuscia.lock.hcl`."},
			"config":        {"any", "none", "The component's configuration, which it reads with `config_get`; it may use `var.*`, `secret.*` and functions."},
			"allowed_hosts": {"list of strings", "what the manifest grants", "Narrows the hosts the component may reach to these; one the manifest does not grant is an error."},
			"allowed_paths": {"list of strings", "what the manifest grants", "Narrows the directories the component may open."},
			"max_memory":    {"size", "the manifest's, else 256 MiB", "Caps the component's memory; the smaller of this and the manifest's limit applies."},
			"max_fuel":      {"whole number", "the manifest's, else none", "A budget of instructions per call; the smaller of this and the manifest's applies; 1 to 2^62."},
		}},
		"plugin": {doc: "Declares a plugin binary (`fuscia-plugin-NAME`, found in the plugins directory) under a local name; tasks and triggers use it as `plugin.LOCAL.TASK`.", attrs: map[string]attrDoc{
			"source":  {"string", "required", "The plugin's name, as in its file name `fuscia-plugin-<name>`."},
			"version": {"string", "newest found", "A version constraint; `plan` locks the version and digest."},
			"config":  {"any", "none", "Sent to the plugin's `Configure`; it may use `var.*`, `secret.*` and functions."},
		}},
		"trigger":        {doc: "An entry point: what starts a run. The first label is the type (`manual`, `schedule`, `webhook` or `poll`), the second the trigger's name. A run reads it as `trigger.type`, `trigger.name` and `trigger.payload`."},
		"trigger.manual": {doc: "Started by `fuscia apply FILE [-payload JSON]` or by the API; the payload is the JSON given. No attributes."},
		"trigger.schedule": {doc: "Fires on a cron schedule. The payload is `{ scheduled_at, fired_at, timezone }`.", attrs: map[string]attrDoc{
			"cron":     {"string", "required", "When to fire: a cron expression of five fields (minute hour day-of-month month day-of-week)."},
			"timezone": {"string", "`\"UTC\"`", "The IANA time zone whose wall clock `cron` reads."},
		}},
		"trigger.webhook": {doc: "Starts a run on an HTTP request. The payload is `{ method, path, query, headers, body }`.", attrs: map[string]attrDoc{
			"path":           {"string", "required", "The URL path served, starting with `/`; paths under `/v1/` and `/metrics` are refused when served."},
			"method":         {"string", "`\"POST\"`", "`\"GET\"`, `\"POST\"`, `\"PUT\"`, `\"PATCH\"` or `\"DELETE\"`."},
			"max_body_bytes": {"size", "`\"1MiB\"`", "The largest request body; the query and headers together are held to the same number."},
			"uses":           {"reference", "none", "`component.LOCAL.TRIGGER` or `plugin.LOCAL.TRIGGER`: a trigger that checks or reshapes the request before a run starts."},
		}},
		"trigger.poll": {doc: "Asks a component or plugin trigger for events at an interval; each event starts a run whose payload is the event.", attrs: map[string]attrDoc{
			"interval":  {"duration", "required", "How often the trigger is asked; longer than zero."},
			"uses":      {"reference", "required", "`component.LOCAL.TRIGGER` or `plugin.LOCAL.TRIGGER`; not a builtin."},
			"dedup_key": {"expression", "none", "A key per event; an event whose key was seen before starts no run. It may read `event` (the event's payload) and `var.*` only."},
		}},
		"auth": {doc: "A webhook's authentication: holds one `hmac_sha256` block. A request must carry the hex HMAC-SHA256 of its raw body; others get `401`."},
		"hmac_sha256": {doc: "Checks the HMAC-SHA256 signature of a webhook request's body.", attrs: map[string]attrDoc{
			"secret": {"reference", "required", "A reference `secret.NAME` to a declared secret: the key."},
			"header": {"string", "`\"X-Signature\"`", "The request header that carries the signature."},
		}},
		"output": {doc: "A value the run returns: printed after `apply`, kept with the run, and read by a calling workflow as `call.NAME.output.OUTPUT`.", attrs: map[string]attrDoc{
			"value":       {"any", "required", "The value; it may read variables, secrets, the trigger and top-level nodes (not body nodes, not `each`)."},
			"description": {"string", "`\"\"`", "For readers."},
			"sensitive":   {"bool", "`false`", "Shows the value as `{\"sensitive\": true}`; a value derived from a secret is sensitive anyway."},
		}},
		"task": node("One unit of work: a call of a builtin, of a task exported by a component, or of a task served by a plugin. Read its output as `task.NAME.output`.", map[string]attrDoc{
			"uses":           {"reference", "required", "What runs: `builtin.NAME`, `component.LOCAL.TASK` or `plugin.LOCAL.TASK`, written as a reference (not quoted)."},
			"inputs":         {"object", "`{}`", "The task's input, an object expression; it may read variables, secrets, the trigger and other nodes' outputs, and `each` with `for_each`. Checked against the task's input schema."},
			"for_each":       {"list, set or map", "none", "Runs the task once per item, with `each.key`, `each.value` and `each.index`; not in a loop body."},
			"concurrency":    {"whole number", "no limit beyond `max_parallel`", "With `for_each`: items running at once; 1 to 100,000. Without `for_each` it is an error."},
			"max_iterations": {"whole number", "`1000`", "How many `continue` results the task may give before it fails with `data_limit_exceeded`; 1 to 1,000,000."},
			"pool":           {"literal string", "`\"default\"`", "The pool of workers the task's attempts go to when Fuscia runs as a cluster; accepted and ignored on one machine."},
		}),
		"switch": node("Picks one branch: the first `case` whose `when` is true, in file order, or else the `default`. Output: `{ selected = \"KEY\" }`; follow a branch with `after = [switch.NAME.KEY]`.", nil),
		"case": {doc: "A case of a switch, labelled with its key; taken when its `when` is the first true one.", attrs: map[string]attrDoc{
			"when": {"bool", "required", "The case's condition."},
		}},
		"default": {doc: "The switch's default branch, labelled with its key: taken when no case is true."},
		"join": node("Waits for several branches (the nodes in its `after`) and merges what they produced.", map[string]attrDoc{
			"strategy": {"string", "`\"all\"`", "`\"all\"`, `\"any\"` or `\"m_of_n\"`."},
			"m":        {"whole number", "required with `m_of_n`", "How many branches must succeed: 1 to the number of branches; only with `m_of_n`."},
			"merge":    {"string", "`\"keyed\"`", "How the output is built: `\"keyed\"`, `\"append\"`, `\"merge_object\"` or `\"last_wins\"`."},
		}),
		"loop": node("Runs a small graph — its body of `task`, `switch` and `join` blocks — once per item of a list or map.", map[string]attrDoc{
			"for_each":    {"list, set or map", "required", "The items; `each` is not available in it."},
			"mode":        {"string", "`\"sequential\"`", "`\"sequential\"` runs one iteration after another, in order; `\"parallel\"` runs them at once."},
			"concurrency": {"whole number", "no limit beyond `max_parallel`", "Iterations at once; only with `mode = \"parallel\"`; 1 to 100,000."},
			"on_failure":  {"string", "`\"stop_and_fail\"`", "What a failed iteration does: `\"stop_and_fail\"`, `\"stop_with_errors\"` or `\"continue\"`."},
			"output":      {"expression", "the body's last nodes' outputs", "The iteration's output, evaluated in the body's scope at the end of each iteration."},
		}),
		"wait": node("Pauses the run, durably, for a time (`duration`, `until`), a person (`approval`) or a program (`callback`): exactly one of them.", map[string]attrDoc{
			"duration": {"duration", "none", "Waits this long; longer than zero."},
			"until":    {"timestamp", "none", "Waits until this RFC 3339 time."},
		}),
		"approval": {doc: "Waits until a person approves or rejects (`fuscia signal`); a rejection fails the wait with kind `rejected`.", attrs: map[string]attrDoc{
			"message": {"string", "none", "Shown to whoever answers; it may read variables, the trigger and node outputs."},
		}},
		"callback": {doc: "Waits until a program answers (`fuscia signal` or the HTTP API); the block is empty."},
		"call": node("Runs another workflow file as a sub-workflow: a run of its own, linked to the calling run, which waits for it. Its output is the called workflow's outputs.", map[string]attrDoc{
			"workflow":   {"string", "required", "The path of the `.fsc.hcl` file to run, relative to this file; a literal string."},
			"inputs":     {"object", "`{}`", "Sets the called workflow's variables, by name."},
			"on_failure": {"string", "`\"propagate\"`", "`\"propagate\"`: the call fails when the sub-workflow's run fails; `\"continue\"`: the call ends `completed_with_errors` with output `{ status, error }`."},
		}),
	}
}

// blockKey is the blockDocs key of a block's body: its type, or trigger.TYPE.
func blockKey(typ string, labels []string) string {
	if typ == "trigger" {
		if len(labels) > 0 {
			return "trigger." + labels[0]
		}
		return "trigger"
	}
	return typ
}

// attrMarkdown renders an attribute's documentation.
func attrMarkdown(name string, d attrDoc) string {
	var b strings.Builder
	b.WriteString("**" + name + "** (" + d.typ)
	switch d.def {
	case "", "—", "none":
	case "required":
		b.WriteString(", required")
	default:
		b.WriteString(", default " + d.def)
	}
	b.WriteString(")\n\n" + d.doc)
	return b.String()
}
