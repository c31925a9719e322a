package schema

import (
	"embed"
	"fmt"
	"sync"
)

// builtinDocs holds the input schemas of the builtin tasks, one file per task, so that docs
// can show them as they are.
//
//go:embed builtin/*.json
var builtinDocs embed.FS

// mustCompileBuiltin compiles an embedded schema. The schemas are part of the program and
// covered by tests, so a failure is a bug, not an input error.
func mustCompileBuiltin(name string) func() *Schema {
	return sync.OnceValue(func() *Schema {
		doc, err := builtinDocs.ReadFile("builtin/" + name + ".json")
		if err != nil {
			panic(fmt.Sprintf("schema: builtin %s: %v", name, err))
		}
		s, err := Compile("builtin."+name, doc)
		if err != nil {
			panic(fmt.Sprintf("schema: builtin %s: %v", name, err))
		}
		return s
	})
}

var (
	builtinFail      = mustCompileBuiltin("fail")
	builtinHTTP      = mustCompileBuiltin("http")
	builtinSleep     = mustCompileBuiltin("sleep")
	builtinTransform = mustCompileBuiltin("transform")
)

// Builtin returns the input schema of a builtin task by its short name ("http" for
// builtin.http); ok is false for a name that is not a builtin. Each schema is compiled on
// first use and shared afterwards.
func Builtin(name string) (s *Schema, ok bool) {
	switch name {
	case "fail":
		return builtinFail(), true
	case "http":
		return builtinHTTP(), true
	case "sleep":
		return builtinSleep(), true
	case "transform":
		return builtinTransform(), true
	}
	return nil, false
}

// BuiltinNames returns the short names of the builtin tasks, sorted. The caller owns the slice.
func BuiltinNames() []string {
	return []string{"fail", "http", "sleep", "transform"}
}
