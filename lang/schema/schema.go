package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema for a task's input (or output).
//
// A Schema never changes after Compile returns, so it may be shared between goroutines.
type Schema struct {
	name string
	raw  []byte // the document as given to Compile
	root *jsonschema.Schema

	// infos holds what coercion needs to know about every subschema reachable from root,
	// computed once by Compile so that coercing a value allocates nothing for the schema.
	infos map[*jsonschema.Schema]*info
	// byLocation finds a subschema from the SchemaURL of a validation error, so that an
	// "unknown attribute" problem can suggest the attribute the user probably meant.
	byLocation map[string]*jsonschema.Schema
	// anyObject: the document asks for an object and nothing else (builtin.transform's input),
	// so a value validates when it is one, without the library (validate).
	anyObject bool
}

// Compile compiles a JSON Schema document. Documents without "$schema" are read as draft 2020-12.
// name identifies the schema in errors (for example "builtin.http" or "plugin.slack.send").
//
// Formats are asserted; "duration" means a Go duration string rather than ISO 8601, and
// "size" and "http-url" are added (see the package documentation). A "$ref" may point only
// inside the document: schemas are never fetched from files or the network.
func Compile(name string, doc []byte) (*Schema, error) {
	return compile(name, doc, false)
}

// CompileTrusted is Compile for a schema built into the program, such as a builtin task's
// input: it does not check the document against its draft's metaschema, which is otherwise
// compiled at the first schema of that draft (several milliseconds of every one-shot command
// that plans a builtin). The program's tests must compile each such document with Compile.
func CompileTrusted(name string, doc []byte) (*Schema, error) {
	return compile(name, doc, true)
}

func compile(name string, doc []byte, trusted bool) (*Schema, error) {
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema %s: invalid JSON: %w", name, err)
	}
	loc := "fuscia:///schema/" + url.PathEscape(name) + ".json"

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, f := range formats() {
		c.RegisterFormat(f)
	}
	// The library reads file: URLs by default; a workflow's plugin must not make us read disk.
	c.UseLoader(refuseLoader{})
	if trusted {
		c.TrustSchemas()
	}
	if err := c.AddResource(loc, parsed); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	root, err := c.Compile(loc)
	if err != nil {
		return nil, compileError(name, err)
	}

	s := &Schema{
		name:       name,
		raw:        bytes.Clone(doc),
		root:       root,
		infos:      map[*jsonschema.Schema]*info{},
		byLocation: map[string]*jsonschema.Schema{},
		anyObject:  asksAnyObject(parsed),
	}
	s.index(root)
	return s, nil
}

// annotations are the keywords that describe a value without constraining it.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"examples": true, "default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// asksAnyObject reports whether a parsed schema document is {"type": "object"} besides
// annotations: every object validates against it, and nothing else does.
func asksAnyObject(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	for k := range m {
		if k != "type" && !annotations[k] {
			return false
		}
	}
	return true
}

// Raw returns the schema document as given to Compile, for plan output and docs.
// The caller owns the returned bytes.
func (s *Schema) Raw() json.RawMessage {
	return bytes.Clone(s.raw)
}

// compileError words a compilation error on one line. The library reports a document that
// breaks the metaschema as an indented tree of every keyword tried; the leaves say what is wrong.
func compileError(name string, err error) error {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return fmt.Errorf("schema %s: %w", name, err)
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, (&jsonschema.ValidationError{
				InstanceLocation: e.InstanceLocation, ErrorKind: e.ErrorKind,
			}).Error())
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return fmt.Errorf("schema %s is not a valid JSON Schema: %s", name, strings.Join(leaves, "; "))
}

// refuseLoader keeps schema compilation hermetic: only the document itself and the
// metaschemas built into the library can be referenced.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, errors.New("external references are not supported; use $defs inside the schema")
}
