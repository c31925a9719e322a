package plan

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
)

// Plan is what `fuscia plan` shows and saves. Its JSON form is docs/reference/cli.md's `plan -json`.
type Plan struct {
	FormatVersion string                    `json:"format_version"`
	Workflow      string                    `json:"workflow"`
	File          string                    `json:"file"`
	Stages        [][]string                `json:"stages"`
	Nodes         map[string]*Node          `json:"nodes"`
	Components    map[string]*ComponentLock `json:"components"`
	Plugins       map[string]*PluginLock    `json:"plugins"`

	// Order lists node addresses in display order: stage by stage, each loop's body right after
	// the loop.
	Order []string `json:"-"`
}

// Node is one node of a plan.
type Node struct {
	Kind         string        `json:"kind"`
	Uses         *string       `json:"uses"`
	Dispatch     string        `json:"dispatch"`
	Pool         string        `json:"pool,omitempty"` // tasks: the pool of workers its attempts go to in a cluster; lang.DefaultPool unless set
	Timeout      string        `json:"timeout"`
	Retry        Retry         `json:"retry"`
	Capabilities *Capabilities `json:"capabilities"`
	Inputs       any           `json:"inputs"`
	DependsOn    []string      `json:"depends_on"`
	Stage        int           `json:"stage"`
	FailWorkflow bool          `json:"fail_workflow"`
	ForEach      any           `json:"for_each,omitempty"`
	When         any           `json:"when,omitempty"`
	Loop         string        `json:"loop,omitempty"`        // body nodes: the enclosing loop's address
	BodyStages   [][]string    `json:"body_stages,omitempty"` // loops: their body in stage order
	Detail       string        `json:"detail,omitempty"`      // kind-specific settings, e.g. "strategy all, merge keyed"

	inputs, forEach cty.Value // for text rendering
}

// Retry is a node's effective retry policy.
type Retry struct {
	Attempts     int    `json:"attempts"`
	Backoff      string `json:"backoff"`
	InitialDelay string `json:"initial_delay"`
	MaxDelay     string `json:"max_delay"`
}

// Capabilities are what a component task is granted.
type Capabilities struct {
	AllowedHosts []string `json:"allowed_hosts"`
	AllowedPaths []string `json:"allowed_paths"`
	MaxMemory    int64    `json:"max_memory,omitempty"`
	MaxFuel      uint64   `json:"max_fuel,omitempty"`
}

// Build makes the plan of a checked workflow whose components and plugins were resolved.
func Build(w *lang.Workflow, res *Resolution) *Plan {
	p := &Plan{
		FormatVersion: version.PlanFormat,
		Workflow:      w.Name,
		File:          w.Filename,
		Stages:        make([][]string, 0, len(w.Graph.Stages)),
		Nodes:         make(map[string]*Node, len(w.Nodes)),
		Components:    res.Components,
		Plugins:       res.Plugins,
		Order:         make([]string, 0, len(w.Nodes)),
	}
	for i, stage := range w.Graph.Stages {
		ids := make([]string, len(stage))
		for j, addr := range stage {
			ids[j] = addr.String()
			n := w.Node(addr)
			p.add(w, res, n, i+1)
			if n.Loop != nil {
				body := w.Graph.BodyStages[n.Addr.Name]
				pn := p.Nodes[ids[j]]
				for k, bstage := range body {
					bids := make([]string, len(bstage))
					for m, baddr := range bstage {
						bids[m] = baddr.String()
						p.add(w, res, w.Node(baddr), k+1)
					}
					pn.BodyStages = append(pn.BodyStages, bids)
				}
			}
		}
		p.Stages = append(p.Stages, ids)
	}
	return p
}

func (p *Plan) add(w *lang.Workflow, res *Resolution, n *lang.Node, stage int) {
	addr := n.Addr.String()
	r := n.EffectiveRetry(w)
	pn := &Node{
		Kind:         string(n.Addr.Kind),
		Timeout:      FormatDuration(n.EffectiveTimeout(w)),
		Retry:        Retry{Attempts: r.Attempts, Backoff: r.Backoff, InitialDelay: FormatDuration(r.InitialDelay), MaxDelay: FormatDuration(r.MaxDelay)},
		DependsOn:    make([]string, 0, len(n.Deps)),
		Stage:        stage,
		FailWorkflow: n.FailWorkflow,
		Dispatch:     string(n.Addr.Kind),
	}
	for _, d := range n.Deps {
		pn.DependsOn = append(pn.DependsOn, d.Upstream.String())
	}
	if n.Addr.Loop != "" {
		pn.Loop = n.Addr.LoopAddr().String()
	}
	vals := w.Values[n.Addr]
	if vals != nil {
		if vals.Inputs != cty.NilVal {
			pn.inputs = vals.Inputs
			pn.Inputs = ValueJSON(vals.Inputs)
			// Shown, not run: a value that is small in memory can be huge written out (a
			// list of 5,000 references to one 200 KB string is 1 GB of JSON), and the plan
			// is encoded in serve's own process.
			if size := funcs.JSONSize(vals.Inputs, MaxShownInputs); size > MaxShownInputs {
				pn.inputs = cty.StringVal(fmt.Sprintf("(more than %d MiB written out; not shown)", MaxShownInputs>>20))
				pn.Inputs = map[string]any{"not_shown": true, "bytes_over": MaxShownInputs}
			}
		}
		if vals.ForEach != cty.NilVal {
			pn.forEach = vals.ForEach
			pn.ForEach = ValueJSON(vals.ForEach)
		}
		if vals.When != cty.NilVal {
			pn.When = ValueJSON(vals.When)
		}
	}
	switch {
	case n.Task != nil:
		uses := n.Task.Uses.String()
		pn.Uses = &uses
		pn.Pool = cmp.Or(n.Task.Pool, lang.DefaultPool)
		pn.Dispatch = dispatch(w, res, n.Task.Uses)
		pn.Capabilities = capabilities(w, res, n.Task.Uses)
		if n.Task.Concurrency > 0 {
			pn.Detail = fmt.Sprintf("concurrency %d", n.Task.Concurrency)
		}
	case n.Switch != nil:
		keys := make([]string, 0, len(n.Switch.Cases)+1)
		for _, c := range n.Switch.Cases {
			keys = append(keys, c.Key)
		}
		if n.Switch.Default != nil {
			keys = append(keys, n.Switch.Default.Key+" (default)")
		}
		pn.Detail = "cases " + strings.Join(keys, ", ")
	case n.Join != nil:
		pn.Detail = "strategy " + n.Join.Strategy
		if n.Join.Strategy == lang.JoinMofN {
			pn.Detail += fmt.Sprintf(" (m = %d)", n.Join.M)
		}
		pn.Detail += ", merge " + n.Join.Merge
	case n.Loop != nil:
		pn.Detail = n.Loop.Mode
		if n.Loop.Concurrency > 0 {
			pn.Detail += fmt.Sprintf(", concurrency %d", n.Loop.Concurrency)
		}
		pn.Detail += ", on_failure " + n.Loop.OnFailure
	case n.Wait != nil:
		pn.Detail = waitDetail(n.Wait)
		pn.Timeout = "none"
		if n.Wait.WaitTimeout > 0 {
			pn.Timeout = FormatDuration(n.Wait.WaitTimeout)
		}
	case n.Call != nil:
		pn.Dispatch = "call " + n.Call.Workflow
		pn.Detail = "on_failure " + n.Call.OnFailure
	}
	p.Nodes[addr] = pn
	p.Order = append(p.Order, addr)
}

// MaxShownInputs bounds the known inputs a plan shows of one node, written out as JSON; larger
// ones are shown as {"not_shown": true, "bytes_over": MaxShownInputs}. The run evaluates them
// again, under the engine's own bound.
const MaxShownInputs = 1 << 20

func waitDetail(wt *lang.WaitSpec) string {
	switch wt.Kind {
	case lang.WaitDuration:
		return "duration " + FormatDuration(wt.Duration)
	case lang.WaitUntil:
		return "until " + wt.Until.Format(time.RFC3339)
	default:
		return wt.Kind
	}
}

func dispatch(w *lang.Workflow, res *Resolution, u lang.Uses) string {
	switch u.Kind {
	case lang.UsesComponent:
		if c := res.Components[u.Local]; c != nil {
			return fmt.Sprintf("component %s@%s (%s)", c.Source, c.Version, c.Digest)
		}
	case lang.UsesPlugin:
		if pl := res.Plugins[u.Local]; pl != nil {
			if pl.Version == "" {
				return "plugin " + pl.Source
			}
			return fmt.Sprintf("plugin %s@%s", pl.Source, pl.Version)
		}
	}
	return "builtin"
}

// capabilities are what a component task is granted: the component block's narrowing where it
// sets one, the manifest's grant otherwise.
func capabilities(w *lang.Workflow, res *Resolution, u lang.Uses) *Capabilities {
	if u.Kind != lang.UsesComponent {
		return nil
	}
	var m *registry.Manifest
	if lock := res.Components[u.Local]; lock != nil {
		m = lock.manifest
	}
	for _, c := range w.Components {
		if c.Name != u.Local {
			continue
		}
		caps := Grants(m, c)
		caps.AllowedHosts, caps.AllowedPaths = orEmpty(caps.AllowedHosts), orEmpty(caps.AllowedPaths)
		return caps
	}
	return nil
}

// Grants is what a component block gets of what manifest m grants: the block's hosts and
// paths where it narrows them, the manifest's otherwise, and the smaller of each limit (0 is
// "none"). m may be nil when the component is not installed. The engine runs components with
// exactly this.
func Grants(m *registry.Manifest, c *lang.Component) *Capabilities {
	caps := &Capabilities{AllowedHosts: c.AllowedHosts, AllowedPaths: c.AllowedPaths, MaxMemory: c.MaxMemory, MaxFuel: c.MaxFuel}
	if m == nil {
		return caps
	}
	if caps.AllowedHosts == nil {
		caps.AllowedHosts = m.Capabilities.AllowedHosts
	}
	if caps.AllowedPaths == nil {
		caps.AllowedPaths = m.Capabilities.AllowedPaths
	}
	caps.MaxMemory = smallerLimit(caps.MaxMemory, m.MaxMemoryBytes())
	caps.MaxFuel = uint64(smallerLimit(int64(caps.MaxFuel), int64(m.Limits.MaxFuel)))
	return caps
}

// smallerLimit is the smaller of two limits, 0 meaning "none".
func smallerLimit(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// FormatDuration writes durations the way users write them: "30s", "1h", "1h30m", "500ms".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	s := d.String()
	// time.Duration.String gives "1h0m0s"; drop the zero units so it reads like the input.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
