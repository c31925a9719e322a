package cluster

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// maxSecrets bounds the secret values one call sends its worker for scrubbing.
const maxSecrets = 64

// inputSecrets are the string values of input under the JSON Pointers that the engine marked
// sensitive (task.Call.Sensitive): the worker scrubs them from its own log, where a plugin's
// or a guest's debug lines go.
func inputSecrets(input json.RawMessage, pointers []string) []string {
	if len(pointers) == 0 {
		return nil
	}
	var doc any
	if json.Unmarshal(input, &doc) != nil {
		return nil
	}
	var out []string
	for _, p := range pointers {
		if v, ok := lookup(doc, p); ok {
			out = stringLeaves(v, out)
		}
	}
	return out
}

// lookup follows a JSON Pointer (RFC 6901) into doc.
func lookup(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch d := doc.(type) {
		case map[string]any:
			v, ok := d[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(d) {
				return nil, false
			}
			doc = d[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

func stringLeaves(v any, out []string) []string {
	if len(out) >= maxSecrets {
		return out
	}
	switch x := v.(type) {
	case string:
		if x != "" {
			out = append(out, x)
		}
	case map[string]any:
		for _, e := range x {
			out = stringLeaves(e, out)
		}
	case []any:
		for _, e := range x {
			out = stringLeaves(e, out)
		}
	}
	return out
}

// configSecrets are the string values of a block's config that are marked sensitive.
func configSecrets(v cty.Value) []string {
	if v == cty.NilVal || !v.ContainsMarked() {
		return nil
	}
	var out []string
	_ = cty.Walk(v, func(_ cty.Path, e cty.Value) (bool, error) {
		if len(out) >= maxSecrets {
			return false, nil
		}
		if !e.HasMark(lang.Sensitive) {
			return true, nil
		}
		uv, _ := e.UnmarkDeep()
		if uv.IsKnown() && !uv.IsNull() {
			out = ctyStrings(uv, out)
		}
		return false, nil
	})
	return out
}

func ctyStrings(v cty.Value, out []string) []string {
	if len(out) >= maxSecrets || !v.IsKnown() || v.IsNull() {
		return out
	}
	switch {
	case v.Type() == cty.String:
		if s := v.AsString(); s != "" {
			out = append(out, s)
		}
	case v.CanIterateElements():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = ctyStrings(e, out)
		}
	}
	return out
}
