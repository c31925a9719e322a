package builtin

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/schema"
)

// Builtin is one builtin task. The table of them (Lookup, Names) is the only place builtins
// are listed: lang checks `uses = builtin.NAME` and the inputs against it, and the engine
// runs them and reads their properties from it.
type Builtin struct {
	// Name is the short name: "http" for builtin.http.
	Name string
	// Schema is the input schema, compiled on first use and shared (schemas/NAME.json).
	Schema func() *schema.Schema
	// Identity is the builtin's purity: its output is its input as given, with no effect
	// (builtin.transform). The engine then keeps the input's value, sensitivity marks
	// included, as the output instead of decoding the answer.
	Identity bool
	// Pure says that the builtin has no effect and that its result depends on its input alone:
	// a strict run does not wait for its result to be durable before its successors start,
	// because after a crash it is computed again (docs/engine.md, "Durability"). builtin.sleep
	// is not pure: its result stands for time that has passed, which resume must not spend
	// again; builtin.http reaches other systems.
	Pure bool
	// Worker says where the builtin's attempts run in a cluster: on a worker of the task's
	// pool (builtin.http, which reaches other systems like components and plugins do), or,
	// when false, in the coordinator, where a task's `pool` has no effect.
	Worker bool

	run func(r *Runner, ctx context.Context, req Request) outcome.Result
}

// schemaDocs holds the input schemas, one file per builtin, so that docs can show them as
// they are.
//
//go:embed schemas/*.json
var schemaDocs embed.FS

// table is the builtins, sorted by name. It is never modified.
var table = [...]Builtin{
	{Name: "fail", Schema: compiled("fail"), Pure: true, run: func(_ *Runner, _ context.Context, req Request) outcome.Result { return fail(req) }},
	{Name: "http", Schema: compiled("http"), Worker: true, run: func(r *Runner, ctx context.Context, req Request) outcome.Result { return r.http(ctx, req) }},
	{Name: "sleep", Schema: compiled("sleep"), run: func(_ *Runner, ctx context.Context, req Request) outcome.Result { return sleep(ctx, req) }},
	{Name: "transform", Schema: compiled("transform"), Identity: true, Pure: true, run: func(_ *Runner, _ context.Context, req Request) outcome.Result { return transform(req) }},
}

// Lookup finds a builtin by its short name ("http") or its full one ("builtin.http").
func Lookup(name string) (Builtin, bool) {
	name = strings.TrimPrefix(name, "builtin.")
	i, ok := slices.BinarySearchFunc(table[:], name, func(b Builtin, n string) int { return strings.Compare(b.Name, n) })
	if !ok {
		return Builtin{}, false
	}
	return table[i], true
}

// InputSchema returns the input schema of a builtin by its short name; ok is false for a
// name that is not a builtin.
func InputSchema(name string) (s *schema.Schema, ok bool) {
	b, ok := Lookup(name)
	if !ok {
		return nil, false
	}
	return b.Schema(), true
}

// RunsOnWorker reports whether the builtin named name runs on a worker in a cluster (see
// Builtin.Worker).
func RunsOnWorker(name string) bool {
	b, ok := Lookup(name)
	return ok && b.Worker
}

// IsIdentity reports whether the builtin named name is an identity (see Builtin.Identity).
func IsIdentity(name string) bool {
	b, ok := Lookup(name)
	return ok && b.Identity
}

// IsPure reports whether the builtin named name is pure (see Builtin.Pure).
func IsPure(name string) bool {
	b, ok := Lookup(name)
	return ok && b.Pure
}

// Names returns the short names of the builtins, sorted. The caller owns the slice.
func Names() []string {
	names := make([]string, len(table))
	for i, b := range table {
		names[i] = b.Name
	}
	return names
}

// compiled compiles an embedded schema once. The schemas are part of the program and covered
// by tests (TestSchemasPassTheirMetaschema checks each against its draft's metaschema), so a
// failure is a bug, not an input error, and they compile without that check.
func compiled(name string) func() *schema.Schema {
	return sync.OnceValue(func() *schema.Schema {
		doc, err := schemaDocs.ReadFile("schemas/" + name + ".json")
		if err != nil {
			panic(fmt.Sprintf("builtin %s: %v", name, err))
		}
		s, err := schema.CompileTrusted("builtin."+name, doc)
		if err != nil {
			panic(fmt.Sprintf("builtin %s: %v", name, err))
		}
		return s
	})
}
