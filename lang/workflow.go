package lang

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang/schema"
)

// Workflow is one decoded and linked `.fsc.hcl` file. Expressions are kept unevaluated
// (hcl.Expression) where their value depends on variables, secrets, the trigger or other nodes;
// settings that must be known before a run starts are evaluated by Check into Settings fields.
type Workflow struct {
	Filename string
	Name     string
	Settings WorkflowSettings
	// DeclRange is the range of the `workflow` block's header (or of line 1 if it is missing).
	DeclRange hcl.Range

	Variables  []*Variable
	Secrets    []*Secret
	Components []*Component
	Plugins    []*Plugin
	Triggers   []*Trigger // at least one: an implicit `manual "default"` when the file has none
	Outputs    []*Output

	// Nodes holds every node, loop bodies included, in file order (a loop before its body).
	Nodes []*Node
	// Graph is the linked DAG.
	Graph *Graph
	// Calls are the sub-workflows this file calls, loaded and checked, by call node name.
	Calls map[string]*Workflow
	// Values are the nodes' expressions evaluated with what was known at Load.
	Values map[Addr]*NodeValues

	varValues cty.Value // the `var` object used at Load

	byAddr map[Addr]*Node
	// refs are the references of the nodes' and outputs' expressions, by expression, as link
	// found them; written by link only, read-only after Load.
	refs map[hcl.Expression][]hcl.Traversal
	// payloadReads are the parts of trigger.payload the nodes' and outputs' expressions read,
	// as link found them; read-only after Load.
	payloadReads schema.Paths
	// forFree says that the workflow's file holds no `for` expression, so that its
	// evaluations need no count of iterations (funcs.Iterations); otherwise iterating holds
	// every attribute's expression, true for those with a `for`. Set by Load.
	forFree   bool
	iterating map[hcl.Expression]bool
}

// PayloadReads are the parts of `trigger.payload` that the workflow's nodes and outputs read:
// the engine builds only those of a run's payload, and gives an expression that reads more
// (one the workflow does not hold) the whole payload (Scope.WholeTrigger).
func (w *Workflow) PayloadReads() *schema.Paths { return &w.payloadReads }

// VarValues is the `var` object used at Load: set values, defaults, and unknown values for the
// variables that had neither.
func (w *Workflow) VarValues() cty.Value { return w.varValues }

// Node returns the node at addr, or nil.
func (w *Workflow) Node(addr Addr) *Node { return w.byAddr[addr] }

// TopNodes returns the nodes outside any loop body, in file order.
func (w *Workflow) TopNodes() []*Node {
	out := make([]*Node, 0, len(w.Nodes))
	for _, n := range w.Nodes {
		if n.Addr.Loop == "" {
			out = append(out, n)
		}
	}
	return out
}

// Variable finds a variable by name.
func (w *Workflow) Variable(name string) *Variable {
	for _, v := range w.Variables {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// WorkflowSettings are the evaluated settings of the `workflow` block, defaults applied.
type WorkflowSettings struct {
	Description       string
	Timeout           time.Duration // default per-attempt timeout
	MaxDuration       time.Duration // 0: none
	MaxParallel       int
	MaxConcurrentRuns int    // 0: unlimited
	OnOverlap         string // "queue" | "skip"
	Durability        string // "strict" | "relaxed"
	Retry             RetryPolicy
	Data              DataLimits
}

// DataLimits bound the size of outputs.
type DataLimits struct {
	MaxNodeOutput int64
	MaxTotal      int64
	OnExceed      string // "fail" | "spill"
}

// RetryPolicy says how often and how fast a failed attempt is retried.
type RetryPolicy struct {
	Attempts     int    // total, first attempt included
	Backoff      string // "exponential" | "fixed"
	InitialDelay time.Duration
	MaxDelay     time.Duration
}

// Defaults of docs/reference/language.md ("Values, formats and defaults" and "Limits").
const (
	DefaultTimeout       = time.Hour
	DefaultMaxParallel   = 16
	DefaultMaxNodeOutput = 10 << 20
	DefaultMaxTotal      = 100 << 20
	DefaultMaxIterations = 1000
	DefaultInitialDelay  = time.Second
	DefaultMaxDelay      = time.Minute
)

// DefaultRetry is the policy of a node without any retry block: one attempt.
var DefaultRetry = RetryPolicy{Attempts: 1, Backoff: "exponential", InitialDelay: DefaultInitialDelay, MaxDelay: DefaultMaxDelay}

// Variable is a typed input of the workflow.
type Variable struct {
	Name        string
	Description string
	Type        cty.Type // cty.DynamicPseudoType when no type is given
	Default     cty.Value
	HasDefault  bool
	Sensitive   bool
	DeclRange   hcl.Range
}

// Secret is a sensitive value read at apply time from the environment or a file.
type Secret struct {
	Name        string
	Description string
	Env         string
	File        string
	DeclRange   hcl.Range
}

// Component is a `component` block: a Wasm component from the registry.
type Component struct {
	Name         string // local name
	Source       string // org/name
	Version      string // constraint; empty means the newest installed
	Config       hcl.Expression
	AllowedHosts []string // nil: what the manifest grants; set: narrowed to these
	AllowedPaths []string
	MaxMemory    int64 // 0: manifest or host default
	MaxFuel      uint64
	// Invalid is set when Load reported an error in the block's source or version: it cannot
	// be resolved, and the checks after Load skip it instead of reporting it again.
	Invalid   bool
	DeclRange hcl.Range
	// AllowedHostsRange and AllowedPathsRange locate the lists when they are set.
	AllowedHostsRange, AllowedPathsRange hcl.Range
}

// Plugin is a `plugin` block: a provider binary from the plugins directory.
type Plugin struct {
	Name    string
	Source  string
	Version string // constraint; empty means the newest found
	Config  hcl.Expression
	// Invalid is set when Load reported an error in the block's source or version: it cannot
	// be resolved, and the checks after Load skip it instead of reporting it again.
	Invalid   bool
	DeclRange hcl.Range
	// VersionRange locates the version constraint when it is set.
	VersionRange hcl.Range
}

// Trigger types.
const (
	TriggerManual   = "manual"
	TriggerSchedule = "schedule"
	TriggerWebhook  = "webhook"
	TriggerPoll     = "poll"
)

// Trigger is an entry point of the workflow.
type Trigger struct {
	Type      string
	Name      string
	Implicit  bool // the `manual "default"` trigger of a file without triggers
	DeclRange hcl.Range

	Cron     string // schedule
	Timezone string // schedule; default "UTC"

	Method       string // webhook; default "POST"
	Path         string // webhook
	MaxBodyBytes int64  // webhook; default 1 MiB
	HMAC         *HMACAuth

	Interval time.Duration  // poll
	Uses     *Uses          // poll (required) or webhook (optional)
	DedupKey hcl.Expression // poll; nil when absent
}

// HMACAuth is a webhook's `auth { hmac_sha256 { … } }`.
type HMACAuth struct {
	Secret      string    // name of the secret block
	SecretRange hcl.Range // of the `secret` expression
	Header      string    // default "X-Signature"
}

// Output is a value the workflow returns.
type Output struct {
	Name        string
	Description string
	Sensitive   bool
	Value       hcl.Expression
	DeclRange   hcl.Range
}

// UsesKind says what a task or trigger dispatches to.
type UsesKind string

// Dispatch targets of `uses`.
const (
	UsesBuiltin   UsesKind = "builtin"
	UsesComponent UsesKind = "component"
	UsesPlugin    UsesKind = "plugin"
)

// Uses is the parsed `uses` reference: builtin.NAME, component.LOCAL.TASK or plugin.LOCAL.TASK.
type Uses struct {
	Kind  UsesKind
	Local string // component or plugin local name; empty for builtins
	Name  string // builtin name, or task/trigger name
	Range hcl.Range
}

// String returns the reference as written.
func (u Uses) String() string {
	if u.Kind == UsesBuiltin {
		return "builtin." + u.Name
	}
	return string(u.Kind) + "." + u.Local + "." + u.Name
}

// Block names what the task binds to: the component or plugin block ("plugin.sh"), or for a
// builtin, the builtin itself ("builtin.http"). A run binds each block once.
func (u Uses) Block() string {
	if u.Kind == UsesBuiltin {
		return "builtin." + u.Name
	}
	return string(u.Kind) + "." + u.Local
}

// Node is a task, switch, join, loop, wait or call.
type Node struct {
	Addr      Addr
	DeclRange hcl.Range // the block header

	// Common settings.
	After        []*AfterRef
	When         hcl.Expression // nil when absent
	Timeout      time.Duration  // 0: the workflow default
	TimeoutSet   bool
	Retry        *RetryPolicy // nil: the workflow default
	FailWorkflow bool

	// Deps are the node's upstream nodes, one entry per upstream, in first-reference order.
	// For a loop they include the upstream of its body nodes that lie outside the loop.
	Deps []*Dep

	Task   *TaskSpec
	Switch *SwitchSpec
	Join   *JoinSpec
	Loop   *LoopSpec
	Wait   *WaitSpec
	Call   *CallSpec

	exprs []hcl.Expression // every expression of the node, for reference collection

	// The functions the expressions call, collected once when the workflow is linked
	// (noteCalls), so that asking CallsOnly at every run does not walk them again.
	// callsOpaque: an expression is not native syntax and cannot be searched.
	calls       []string
	callsOpaque bool
	callsKnown  bool
}

// EffectiveTimeout is the node's timeout with the workflow default applied.
func (n *Node) EffectiveTimeout(w *Workflow) time.Duration {
	if n.TimeoutSet {
		return n.Timeout
	}
	return w.Settings.Timeout
}

// EffectiveRetry is the node's retry policy with the workflow default applied.
func (n *Node) EffectiveRetry(w *Workflow) RetryPolicy {
	if n.Retry != nil {
		return *n.Retry
	}
	return w.Settings.Retry
}

// AfterRef is one element of `after`/`depends_on`.
type AfterRef struct {
	Target Addr
	Branch string // switch case or task branch key; empty for a plain ordering edge
	Range  hcl.Range
}

// DepKind tells data references from ordering-only edges.
type DepKind uint8

// Edge kinds (a Dep can be several at once).
const (
	DepData   DepKind = 1 << iota // an expression reads the upstream's output
	DepOrder                      // `after`/`depends_on` without a branch
	DepBranch                     // `after` with branch keys: active only when one of Branches was selected
)

// Dep is the group of edges from one upstream node (docs/reference/language.md's grouped-edge rule).
type Dep struct {
	Upstream Addr
	Kinds    DepKind
	Branches []string // selected keys that activate the group, when Kinds has DepBranch
	Range    hcl.Range
}

// TaskSpec is a `task` block.
type TaskSpec struct {
	Uses          Uses
	Inputs        hcl.Expression // nil: {}
	ForEach       hcl.Expression // nil when absent
	Concurrency   int            // 0: no limit beyond max_parallel
	MaxIterations int            // `continue` results allowed
	// Pool is the pool of workers the task's attempts go to in a cluster: DefaultPool unless
	// `pool` is set (pool.go). PoolRange locates the attribute when it is set.
	Pool      string
	PoolRange hcl.Range
}

// SwitchCase is one `case` or the `default`.
type SwitchCase struct {
	Key       string
	When      hcl.Expression // nil for the default
	DeclRange hcl.Range
}

// SwitchSpec is a `switch` block.
type SwitchSpec struct {
	Cases   []*SwitchCase
	Default *SwitchCase // nil when absent
}

// Key reports whether key names a case or the default.
func (s *SwitchSpec) Key(key string) bool {
	if s.Default != nil && s.Default.Key == key {
		return true
	}
	for _, c := range s.Cases {
		if c.Key == key {
			return true
		}
	}
	return false
}

// Join strategies and merges.
const (
	JoinAll  = "all"
	JoinAny  = "any"
	JoinMofN = "m_of_n"

	MergeKeyed       = "keyed"
	MergeAppend      = "append"
	MergeObject      = "merge_object"
	MergeLastWins    = "last_wins"
	LoopSequential   = "sequential"
	LoopParallel     = "parallel"
	OnFailStopFail   = "stop_and_fail"
	OnFailStopErrors = "stop_with_errors"
	OnFailContinue   = "continue"
	CallPropagate    = "propagate"
	CallContinue     = "continue"
)

// JoinSpec is a `join` block. Its branches are the node's After references.
type JoinSpec struct {
	Strategy string
	M        int
	Merge    string
}

// LoopSpec is a `loop` block.
type LoopSpec struct {
	ForEach     hcl.Expression
	Mode        string
	Concurrency int // 0: no limit beyond max_parallel
	OnFailure   string
	Output      hcl.Expression // nil: the outputs of the body's sink nodes, by name
	Body        []*Node
}

// Wait kinds.
const (
	WaitDuration = "duration"
	WaitUntil    = "until"
	WaitApproval = "approval"
	WaitCallback = "callback"
)

// WaitSpec is a `wait` block.
type WaitSpec struct {
	Kind     string
	Duration time.Duration
	Until    time.Time
	Message  hcl.Expression // approval message; nil when absent
	// WaitTimeout is the wait's own `timeout` (0: none). A wait's `timeout` bounds the wait, not
	// an attempt, so it is kept apart from Node.Timeout.
	WaitTimeout time.Duration
}

// CallSpec is a `call` block.
type CallSpec struct {
	Workflow      string    // path as written
	WorkflowRange hcl.Range // of the `workflow` expression
	Path          string    // resolved path of the child file
	Inputs        hcl.Expression
	OnFailure     string
}

// Sensitive is the cty mark carried by values derived from a secret or a sensitive variable.
const Sensitive = "sensitive"

// References calls fn with every reference in the workflow's node expressions (from is the
// node) and output blocks (from is nil), in declaration order.
func (w *Workflow) References(fn func(from *Node, tr hcl.Traversal)) {
	for _, n := range w.Nodes {
		for _, expr := range n.exprs {
			for _, tr := range w.variables(expr) {
				fn(n, tr)
			}
		}
		if n.Loop != nil && n.Loop.Output != nil {
			for _, tr := range w.variables(n.Loop.Output) {
				fn(n, tr)
			}
		}
	}
	for _, o := range w.Outputs {
		for _, tr := range w.variables(o.Value) {
			fn(nil, tr)
		}
	}
}
